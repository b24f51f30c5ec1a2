/*
 * outfile.c - output files: written to a new file beside the target
 * path, then renamed over it (see outfile.h); and the run's output
 * failing, once.
 *
 * An outfile's stream writes through write(2) itself (fopencookie()),
 * so that the first call that failed on it, and its errno, are known
 * exactly: stdio keeps only an error flag, and errno has been changed
 * by other calls by the time a caller looks (the symbolizer opening
 * files while a report is written).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "util/error.h"
#include "util/outfile.h"
#include "util/xmalloc.h"

struct outfile {
	char *path;		/* where the output goes */
	char *tmp;		/* the new file beside it; NULL when written in place */
	FILE *fp;
	int fd;
	int err;		/* errno of the first call that failed, or 0 */
	const char *call;	/* that call: "write", "close", "rename" */
	struct outfile *next;	/* in the list of open outfiles */
};

/* Open outfiles, whose temporary files exit() removes. */
static struct outfile *open_files;

static void remove_temporaries(void)
{
	for (struct outfile *of = open_files; of; of = of->next)
		if (of->tmp)
			unlink(of->tmp);
}

static void list_add(struct outfile *of)
{
	static int registered;

	if (!registered && atexit(remove_temporaries) == 0)
		registered = 1;
	of->next = open_files;
	open_files = of;
}

static void list_del(struct outfile *of)
{
	for (struct outfile **p = &open_files; *p; p = &(*p)->next)
		if (*p == of) {
			*p = of->next;
			return;
		}
}

/* The open outfile whose stream is f, or NULL. */
static struct outfile *outfile_of(const FILE *f)
{
	for (struct outfile *of = open_files; of; of = of->next)
		if (of->fp == f)
			return of;
	return NULL;
}

/* Keep the first failure of of: call, and its errno. */
static void note_failure(struct outfile *of, const char *call, int err)
{
	if (!of->err) {
		of->err = err ? err : EIO;
		of->call = call;
	}
}

/* The stream's writes: all of buf, or 0 (the stream's error) and noted. */
static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
	struct outfile *of = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(of->fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			note_failure(of, "write", n < 0 ? errno : EIO);
			return 0;
		}
		done += (size_t)n;
	}
	return (ssize_t)size;
}

static int stream_close(void *cookie)
{
	struct outfile *of = cookie;

	if (close(of->fd) < 0 && errno != EINTR) {
		note_failure(of, "close", errno);
		return -1;
	}
	return 0;
}

/*
 * Create "DIR/.BASE.XXXXXX" beside path with O_CREAT|O_EXCL, mode 0644
 * less the umask; the descriptor, with *tmp the malloc'd name, or -1.
 */
static int create_beside(const char *path, char **tmp)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[6];
		char suffix[7];
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			for (size_t i = 0; i < sizeof(rnd); i++)
				rnd[i] = (unsigned char)(rand() ^ getpid() ^ tries);
		for (size_t i = 0; i < sizeof(rnd); i++)
			suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		suffix[6] = '\0';
		*tmp = xasprintf("%.*s.%s.%s", dirlen, path, path + dirlen, suffix);
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		free(*tmp);
		*tmp = NULL;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/*
 * Whether the symbolic link at path may be followed: memtap's user owns
 * it, or the owner of its directory does, or that directory is not
 * sticky and world-writable (the rule of fs.protected_symlinks).
 */
static int link_trusted(const char *path, const struct stat *link)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xasprintf("%.*s", (int)(slash - path + (slash == path)), path) :
		    xstrdup(".");
	struct stat st;
	int ok;

	ok = stat(dir, &st) == 0 &&
	     (link->st_uid == geteuid() || link->st_uid == st.st_uid ||
	      (st.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH));
	free(dir);
	return ok;
}

/* 1 if path is to be written in place (a device or FIFO), 0 if not, -1 + errno. */
static int in_place(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISLNK(st.st_mode)) {
		struct stat target;

		if (!link_trusted(path, &st) || stat(path, &target) < 0)
			return 0;	/* replaced */
		return S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode);
	}
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return 1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	/* a file memtap may not write stays as it is */
	return access(path, W_OK) < 0 ? -1 : 0;
}

struct outfile *outfile_open(const char *path)
{
	struct outfile *of;
	char *tmp = NULL;
	int fd, place = in_place(path);
	FILE *fp;

	if (place < 0)
		return NULL;
	fd = place ? open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC) : create_beside(path, &tmp);
	if (fd < 0)
		return NULL;
	of = xcalloc(1, sizeof(*of));
	of->fd = fd;
	fp = fopencookie(of, "w", (cookie_io_functions_t){ .write = stream_write,
							    .close = stream_close });
	if (!fp) {
		int err = errno;

		close(fd);
		if (tmp)
			unlink(tmp);
		free(tmp);
		free(of);
		errno = err;
		return NULL;
	}
	of->path = xstrdup(path);
	of->tmp = tmp;
	of->fp = fp;
	list_add(of);
	return of;
}

FILE *outfile_stream(const struct outfile *of)
{
	return of->fp;
}

int outfile_fileno(FILE *f)
{
	struct outfile *of = outfile_of(f);

	return of ? of->fd : fileno(f);
}

static void outfile_free(struct outfile *of)
{
	list_del(of);
	free(of->path);
	free(of->tmp);
	free(of);
}

/*
 * Close of's stream, and with keep (and no call failed on it) rename
 * the file over its path; else remove it.  0, or -1 with the failure
 * in of->call, of->err.  of stays allocated.
 */
static int outfile_close(struct outfile *of, int keep)
{
	if (!keep || of->err)
		__fpurge(of->fp);	/* not worth a write */
	if (fclose(of->fp) != 0)
		note_failure(of, "close", errno);
	if (keep && !of->err && of->tmp && rename(of->tmp, of->path) < 0)
		note_failure(of, "rename", errno);
	if ((!keep || of->err) && of->tmp)
		unlink(of->tmp);
	return of->err ? -1 : 0;
}

int outfile_commit(struct outfile *of)
{
	int err = outfile_close(of, 1) < 0 ? of->err : 0;

	outfile_free(of);
	errno = err;
	return err ? -1 : 0;
}

void outfile_abort(struct outfile *of)
{
	outfile_close(of, 0);
	outfile_free(of);
}

/*
 * One error line: call (open, write, close, rename) failed with err for
 * what ("output file", "recording file"...) at path.
 */
static void say_failed(const char *what, const char *call, const char *path, int err)
{
	if (!strcmp(call, "rename"))
		error_msg("cannot rename the new %s to '%s': %s", what, path, strerror(err));
	else
		error_msg("cannot %s %s '%s': %s", call, what, path, strerror(err));
}

/*
 * write(f, arg) to a new file for path, committed when write returns 0.
 * 0, or -1 with the call that failed in *call and its errno in *err;
 * nothing said.
 */
static int write_whole(const char *path, int (*write)(FILE *f, const void *arg),
		       const void *arg, const char **call, int *err)
{
	struct outfile *of = outfile_open(path);
	int r;

	if (!of) {
		*call = "open";
		*err = errno;
		return -1;
	}
	errno = 0;
	if (write(of->fp, arg) < 0)
		note_failure(of, "write", errno);	/* the writer's own, unless a write's */
	r = outfile_close(of, 1);
	*call = of->call;
	*err = of->err;
	outfile_free(of);
	return r;
}

int outfile_write(const char *path, int (*write)(FILE *f, const void *arg),
		  const void *arg)
{
	const char *call;
	int err;

	if (path && strcmp(path, "-")) {
		if (write_whole(path, write, arg, &call, &err) == 0)
			return 0;
		say_failed("output file", call, path, err);
		return -1;
	}
	errno = 0;
	if (write(stdout, arg) < 0 || fflush(stdout) != 0) {
		perror_msg("cannot write standard output");
		return -1;
	}
	return 0;
}

int outfile_check(const char *path)
{
	char *tmp = NULL;
	int fd, place = in_place(path);

	if (place)
		return place < 0 ? -1 : 0;
	fd = create_beside(path, &tmp);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

/* ---- the output failing ---- */

static int output_err;		/* errno of the output's first failed write */
static int tracing;		/* the tracer loop runs */
static const char *output_path;	/* -o, or NULL */

void output_set_path(const char *path)
{
	output_path = path;
}

void output_set_tracing(int on)
{
	tracing = on;
}

int output_gone(void)
{
	return output_err;
}

/*
 * An output is gone: said already (or now, when what is not NULL); the
 * tracer then stops recording and ends the session.
 */
static void output_lost(const char *what, const char *call, const char *path, int err)
{
	if (output_err)
		return;
	output_err = err ? err : EIO;
	if (what)
		say_failed(what, call, path, output_err);
	if (!tracing)
		exit(EXIT_RUNTIME);
}

/*
 * The output is gone (err): say so once, drop what is still buffered in
 * f (NULL: closed already); an output file's own failure (the call,
 * its errno) is said rather than err.
 */
void output_fail(FILE *f, const char *path, int err)
{
	struct outfile *of = f ? outfile_of(f) : NULL;

	if (output_err)
		return;
	if (f)
		__fpurge(f);
	if (of) {
		output_lost("output file", of->err ? of->call : "write", of->path,
			    of->err ? of->err : err);
		return;
	}
	if (!path)
		path = f == stdout ? NULL : f == stderr ? "standard error" : output_path;
	error_msg("cannot write output%s%s: %s", path ? " to " : "", path ? path : "",
		  strerror(err ? err : EIO));
	output_lost(NULL, NULL, NULL, err);
}

int output_check(FILE *f, const char *path)
{
	int err = errno;

	if (output_err) {
		__fpurge(f);	/* written since: it goes nowhere */
		return -1;
	}
	if (!ferror(f))
		return 0;
	output_fail(f, path, err);
	return -1;
}

int output_commit(struct outfile *of)
{
	const char *call;
	char *path;
	int err;

	if (output_err) {
		outfile_abort(of);
		return -1;
	}
	if (outfile_close(of, 1) == 0) {
		outfile_free(of);
		return 0;
	}
	call = of->call;
	err = of->err;
	path = xstrdup(of->path);
	outfile_free(of);
	output_lost("output file", call, path, err);
	free(path);
	return -1;
}

int output_write(const char *path, const char *what, int (*write)(FILE *f, const void *arg),
		 const void *arg)
{
	const char *call;
	int err;

	if (output_err)
		return -1;
	if (write_whole(path, write, arg, &call, &err) == 0)
		return 0;
	output_lost(what, call, path, err);
	return -1;
}

void output_open_failed(const char *what, const char *path, int err)
{
	output_lost(what, "open", path, err);
}

/*
 * outfile.c - output files: written to a new file beside the target
 * path, then renamed over it (see outfile.h); and the run's output
 * failing, once.
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
	fp = fdopen(fd, "w");
	if (!fp) {
		int err = errno;

		close(fd);
		if (tmp)
			unlink(tmp);
		free(tmp);
		errno = err;
		return NULL;
	}
	of = xcalloc(1, sizeof(*of));
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

static void outfile_free(struct outfile *of)
{
	list_del(of);
	free(of->path);
	free(of->tmp);
	free(of);
}

int outfile_commit(struct outfile *of)
{
	int err = 0;

	if (fclose(of->fp) != 0)
		err = errno;
	if (!err && of->tmp && rename(of->tmp, of->path) < 0)
		err = errno;
	if (err && of->tmp)
		unlink(of->tmp);
	outfile_free(of);
	errno = err;
	return err ? -1 : 0;
}

void outfile_abort(struct outfile *of)
{
	fclose(of->fp);
	if (of->tmp)
		unlink(of->tmp);
	outfile_free(of);
}

int outfile_write(const char *path, int (*write)(FILE *f, const void *arg),
		  const void *arg)
{
	int to_stdout = !path || !strcmp(path, "-");
	struct outfile *of = NULL;
	FILE *f = stdout;
	int r;

	if (!to_stdout) {
		of = outfile_open(path);
		if (!of) {
			perror_msg("cannot open output file '%s'", path);
			return -1;
		}
		f = outfile_stream(of);
	}
	errno = 0;
	r = write(f, arg);
	if (r < 0 && of) {
		int err = errno;

		outfile_abort(of);
		errno = err;
	} else if (of ? outfile_commit(of) : fflush(f)) {
		r = -1;
	}
	if (r < 0)
		perror_msg("cannot write %s", to_stdout ? "standard output" : path);
	return r < 0 ? -1 : 0;
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
 * The output is gone (err): say so once, drop what is still buffered in
 * f (NULL: closed already); the tracer then stops recording and ends
 * the session.
 */
void output_fail(FILE *f, const char *path, int err)
{
	if (output_err)
		return;
	output_err = err ? err : EIO;
	if (f)
		__fpurge(f);
	if (!path)
		path = f == stdout ? NULL : f == stderr ? "standard error" : output_path;
	error_msg("cannot write output%s%s: %s", path ? " to " : "", path ? path : "",
		  strerror(output_err));
	if (!tracing)
		exit(EXIT_RUNTIME);
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

int output_closed(const char *path, int err)
{
	output_fail(NULL, path, err);
	return -1;
}

/*
 * push-spool.c - the files of push.c's spool directory (push-spool.h).
 *
 * The directory is checked once and held open; it may have been filled
 * by an earlier memtap, or by anyone who could write to it before it was
 * checked, so a file is opened only if fstatat() without following links
 * says it is a regular file, then with O_NOFOLLOW | O_NONBLOCK (should it
 * have been swapped for a link or a FIFO since, the link fails and the
 * FIFO does not wait for a writer), checked again with fstat() (a
 * regular file of memtap's user, within the size cap) and parsed
 * strictly before it is used.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/push-spool.h"
#include "util/xmalloc.h"

#define MAGIC "memtap-push 1\n"
#define PREFIX "memtap-push-"
#define HEAD_MAX 8192

int spool_open(const char *dir, char *err, size_t errsize)
{
	char *d = xstrdup(dir);
	struct stat st;
	int fd;

	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0700) < 0 && errno != EEXIST) {
			snprintf(err, errsize, "push spool: mkdir '%s': %s", d, strerror(errno));
			free(d);
			return -1;
		}
		*p = '/';
	}
	free(d);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errsize, "push spool: mkdir '%s': %s", dir, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "push spool: open '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errsize, "push spool: fstat '%s': %s", dir, strerror(errno));
	} else if (st.st_uid != geteuid()) {
		snprintf(err, errsize, "push spool '%s' is owned by uid %u, not by memtap's user "
			 "(uid %u): use a directory of its own", dir, (unsigned)st.st_uid,
			 (unsigned)geteuid());
	} else if (st.st_mode & 022) {
		snprintf(err, errsize, "push spool '%s' is writable by others (mode %04o): "
			 "chmod go-w it, or use another", dir, (unsigned)(st.st_mode & 07777));
	} else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			snprintf(err, errsize, "push spool '%s' is in use by another memtap: give "
				 "each its own", dir);
		else
			snprintf(err, errsize, "push spool: flock '%s': %s", dir, strerror(errno));
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

/* seq of a name PREFIX + 20 digits + suffix, or -1. */
static int name_seq(const char *name, const char *suffix, uint64_t *seq)
{
	const char *p = name + strlen(PREFIX);
	uint64_t v = 0;

	if (strncmp(name, PREFIX, strlen(PREFIX)))
		return -1;
	for (int i = 0; i < 20; i++, p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (strcmp(p, suffix))
		return -1;
	*seq = v;
	return 0;
}

static void file_name(char *buf, size_t size, uint64_t seq, const char *suffix)
{
	snprintf(buf, size, PREFIX "%020" PRIu64 "%s", seq, suffix);
}

/*
 * Open seq's file and read its head: the descriptor with the query,
 * until, the body's offset and the file's size, or -1 (errno EINVAL for
 * a malformed file or not a regular file of ours).
 */
static int open_entry(int dfd, const char *name, char **query, int64_t *until, size_t *body_off,
		      uint64_t *size)
{
	char head[HEAD_MAX + 1], *q, *u, *end;
	struct stat st;
	ssize_t n;
	int fd;

	/* not opened at all unless a regular file; checked again once open */
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto bad;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size > PUSH_SPOOL_FILE_MAX)
		goto inval;
	n = pread(fd, head, HEAD_MAX, 0);
	if (n < 0)
		goto bad;
	head[n] = '\0';
	if (strncmp(head, MAGIC, strlen(MAGIC)))
		goto inval;
	q = head + strlen(MAGIC);
	u = strchr(q, '\n');
	if (!u || strncmp(q, "/ingest?", 8))
		goto inval;
	for (char *c = q; c < u; c++)
		if (*c <= ' ' || *c >= 0x7f)
			goto inval;
	*u++ = '\0';
	errno = 0;
	long long v = strtoll(u, &end, 10);

	if (errno || end == u || *end != '\n' || (uint64_t)st.st_size <= (uint64_t)(end + 1 - head))
		goto inval;
	*query = xstrdup(q);
	*until = v;
	*body_off = end + 1 - head;
	*size = st.st_size;
	return fd;
inval:
	errno = EINVAL;
bad:
	n = errno;
	close(fd);
	errno = n;
	return -1;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct spool_entry *spool_scan(int dfd, size_t *n, size_t *ignored)
{
	struct spool_entry *e = NULL;
	size_t alloc = 0;
	struct dirent *de;
	int fd2 = dup(dfd);
	DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;

	*n = 0;
	*ignored = 0;
	if (!d) {
		if (fd2 >= 0)
			close(fd2);
		return NULL;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct spool_entry s = { 0 };
		size_t off;
		int fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!name_seq(de->d_name, ".prof.tmp", &s.seq)) {
			unlinkat(dfd, de->d_name, 0);	/* a write cut short */
			continue;
		}
		if (name_seq(de->d_name, ".prof", &s.seq) < 0 ||
		    (fd = open_entry(dfd, de->d_name, &s.query, &s.until, &off, &s.size)) < 0) {
			(*ignored)++;
			continue;
		}
		close(fd);
		e = xgrowarray(e, &alloc, *n + 1, sizeof(*e));
		e[(*n)++] = s;
	}
	closedir(d);
	if (*n)
		qsort(e, *n, sizeof(*e), entry_cmp);
	return e;
}

static int write_all(int fd, const void *d, size_t n)
{
	const char *p = d;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

int64_t spool_write(int dfd, uint64_t seq, const char *query, int64_t until,
		    const void *body, size_t len)
{
	char tmp[64], name[64];
	char *head = xasprintf(MAGIC "%s\n%" PRId64 "\n", query, until);
	size_t hl = strlen(head);
	int fd, e;

	file_name(tmp, sizeof(tmp), seq, ".prof.tmp");
	file_name(name, sizeof(name), seq, ".prof");
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		unlinkat(dfd, tmp, 0);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		free(head);
		return -1;
	}
	if (write_all(fd, head, hl) < 0 || write_all(fd, body, len) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, name) < 0)
		goto fail;
	free(head);
	return (int64_t)(hl + len);
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(dfd, tmp, 0);
	free(head);
	errno = e;
	return -1;
}

void *spool_read(int dfd, uint64_t seq, size_t *len)
{
	char name[64], *query = NULL;
	unsigned char *body;
	int64_t until;
	uint64_t size;
	size_t off, got = 0;
	int fd;

	file_name(name, sizeof(name), seq, ".prof");
	fd = open_entry(dfd, name, &query, &until, &off, &size);
	if (fd < 0)
		return NULL;
	free(query);
	body = xmalloc(size - off);
	while (got < size - off) {
		ssize_t r = pread(fd, body + got, size - off - got, off + got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r ? errno : EINVAL;

			close(fd);
			free(body);
			errno = e;
			return NULL;
		}
		got += r;
	}
	close(fd);
	*len = got;
	return body;
}

void spool_remove(int dfd, uint64_t seq)
{
	char name[64];

	file_name(name, sizeof(name), seq, ".prof");
	unlinkat(dfd, name, 0);
}

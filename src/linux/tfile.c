/*
 * tfile.c - opening a file on a target's behalf, safely (tfile.h says
 * what is checked and why).
 *
 * The lookup opens nothing: every step is an O_PATH descriptor, which
 * names an inode without running its open (a FIFO's open waits for a
 * writer, a device's runs its driver).  Only the final inode, once
 * checked on its descriptor, is opened for reading, by reopening that
 * descriptor through /proc/self/fd: no name is looked up twice, so no
 * file swapped in between a check and the open is ever read.
 *
 * openat2() (Linux 5.6) does the lookup in one call; without it (ENOSYS,
 * or MEMTAP_DISABLE=openat2) the path is walked one component at a time
 * from the root's descriptor, each with O_NOFOLLOW, and ".." refused, so
 * that the walk can neither follow a link nor climb out of the root.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "linux/features.h"
#include "linux/procfs.h"
#include "linux/tfile.h"
#include "util/error.h"
#include "util/xmalloc.h"

#ifndef SYS_openat2
# define SYS_openat2 437
#endif
#ifndef O_PATH
# define O_PATH 010000000
#endif
#ifndef FUSE_SUPER_MAGIC
# define FUSE_SUPER_MAGIC 0x65735546
#endif
#define TF_RESOLVE_NO_MAGICLINKS 0x02
#define TF_RESOLVE_NO_SYMLINKS 0x04
#define TF_RESOLVE_IN_ROOT 0x10

/* struct open_how of openat2(2), spelt here for older headers. */
struct tf_open_how {
	uint64_t flags, mode, resolve;
};

static const struct {
	const char *name;
	uint64_t max;
} kinds[TF_NKINDS] = {
	[TF_ELF] = { "ELF file", 4ULL << 30 },
	[TF_DEBUG] = { "debug file", 4ULL << 30 },
	[TF_PERFMAP] = { "perf map", 1ULL << 30 },
	[TF_JITDUMP] = { "jitdump", 1ULL << 30 },
};

/*
 * The symbolizer's store opens debug files on its own thread: the
 * reason is per thread, the list of paths warned about under a lock.
 */
static int trust_owner;
static int no_openat2;		/* ENOSYS seen, or forced off */
static __thread char why[160];
static unsigned long nrefused;

/* Paths warned about, so that each is warned about once. */
static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *warned;
static size_t nwarned, warned_cap;

void tfile_trust_owner(int yes)
{
	trust_owner = yes;
}

void tfile_force_walk(int yes)
{
	no_openat2 = yes;
}

const char *tfile_last_why(void)
{
	return why;
}

unsigned long tfile_refused(void)
{
	unsigned long n;

	pthread_mutex_lock(&warned_lock);
	n = nrefused;
	pthread_mutex_unlock(&warned_lock);
	return n;
}

uint64_t tfile_max_size(enum tfile_kind kind)
{
	return kind < TF_NKINDS ? kinds[kind].max : 0;
}

const char *tfile_kind_name(enum tfile_kind kind)
{
	return kind < TF_NKINDS ? kinds[kind].name : "file";
}

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* Refuse r's file with errno err: the reason kept, warned once per path. */
static int refuse(const struct tfile_req *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(const struct tfile_req *r, int err, const char *fmt, ...)
{
	const char *shown = r->shown ? r->shown : r->path;
	uint64_t h = path_hash(shown) ^ (uint64_t)r->kind;
	va_list ap;
	size_t i;
	int first;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (r->flags & TF_QUIET)
		goto out;
	pthread_mutex_lock(&warned_lock);
	for (i = 0; i < nwarned && warned[i] != h; i++)
		;
	first = i == nwarned;
	if (first) {
		warned = xgrowarray(warned, &warned_cap, nwarned + 1, sizeof(*warned));
		warned[nwarned++] = h;
		nrefused++;
	}
	pthread_mutex_unlock(&warned_lock);
	if (first)
		warn_msg("refusing %s '%s': %s", tfile_kind_name(r->kind), shown, why);
out:
	errno = err;
	return -1;
}

/* What kind of inode mode is, for a refusal. */
static const char *mode_name(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a directory";
	return "not a regular file";
}

/*
 * The lookup without openat2: rel (no leading '/') from dirfd, one
 * component at a time.  An O_PATH descriptor of the last component
 * (which may itself be a link: the caller's fstat says so), or -1.
 */
static int walk(int dirfd, const char *rel)
{
	char comp[256];
	int fd = dup(dirfd);

	while (fd >= 0 && *rel) {
		size_t len = strcspn(rel, "/");
		struct stat st;
		int next;

		if (len >= sizeof(comp)) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, rel, len);
		comp[len] = '\0';
		rel += len;
		rel += strspn(rel, "/");
		if (!len || strcmp(comp, ".") == 0)
			continue;
		next = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		if (fd < 0 || !*rel)
			break;
		if (fstatat(fd, "", &st, AT_EMPTY_PATH) < 0) {
			close(fd);
			return -1;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
			return -1;
		}
	}
	return fd;
}

/* The root r's path is looked up under: /proc/PID/root, else memtap's own. */
static int open_root(const struct tfile_req *r)
{
	char p[48];
	int fd;

	if (r->flags & TF_IN_ROOT) {
		snprintf(p, sizeof(p), "/proc/%d/root", (int)r->pid);
		fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* An O_PATH descriptor of r's path, no link followed; -1 with errno. */
static int lookup(const struct tfile_req *r)
{
	const char *rel = r->path;
	int rootfd, fd = -1;

	if (r->flags & TF_MAGIC)
		return open(r->path, O_PATH | O_CLOEXEC);
	if (rel[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	for (const char *c = rel; (c = strstr(c, "..")) != NULL; c += 2)
		if ((c == rel || c[-1] == '/') && (c[2] == '/' || c[2] == '\0')) {
			errno = EXDEV;	/* reported as ".." below */
			return -2;
		}
	rel += strspn(rel, "/");
	rootfd = open_root(r);
	if (rootfd < 0)
		return -1;
	if (!no_openat2 && feature_has(F_OPENAT2)) {
		struct tf_open_how how = {
			.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
			.resolve = TF_RESOLVE_NO_SYMLINKS | TF_RESOLVE_NO_MAGICLINKS |
				   ((r->flags & TF_IN_ROOT) ? TF_RESOLVE_IN_ROOT : 0),
		};

		fd = (int)syscall(SYS_openat2, rootfd, *rel ? rel : ".", &how, sizeof(how));
		if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
			/* EPERM: a seccomp policy of memtap's own that forbids it */
			feature_lost(F_OPENAT2, errno);
			no_openat2 = 1;
		} else {
			close(rootfd);
			return fd;
		}
	}
	fd = walk(rootfd, rel);
	close(rootfd);
	return fd;
}

/* Is st's owner one of pid's uids (real, effective, saved, fs)? */
static int owned_by_target(pid_t pid, const struct stat *st)
{
	long ids[4];

	if (procfs_status_ids(pid, "Uid", ids) < 0)
		return 0;
	for (int i = 0; i < 4; i++)
		if (ids[i] >= 0 && (uid_t)ids[i] == st->st_uid)
			return 1;
	return 0;
}

int tfile_open(const struct tfile_req *r)
{
	struct stat st, st2;
	struct statfs sfs;
	char self[48];
	int pfd, fd;

	why[0] = '\0';
	pfd = lookup(r);
	if (pfd == -2)
		return refuse(r, EINVAL, "its path climbs with \"..\"");
	if (pfd < 0) {
		if (errno == ELOOP)
			return refuse(r, ELOOP, "a symbolic link is in its path");
		if (errno == EXDEV)	/* openat2: the path would leave the root */
			return refuse(r, ELOOP, "its path leaves the target's root");
		return -1;
	}
	if (fstatat(pfd, "", &st, AT_EMPTY_PATH) < 0) {
		close(pfd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		return refuse(r, S_ISLNK(st.st_mode) ? ELOOP : EINVAL, "%s, not a regular file",
			      mode_name(st.st_mode));
	}
	if ((r->flags & TF_OWNED) && !trust_owner && !owned_by_target(r->pid, &st)) {
		close(pfd);
		return refuse(r, EPERM, "owned by uid %u, not by the target's user "
			      "(--trust-files accepts it)", (unsigned)st.st_uid);
	}
	if ((uint64_t)st.st_size > tfile_max_size(r->kind)) {
		close(pfd);
		return refuse(r, EFBIG, "%llu bytes, over the cap of %llu for a %s",
			      (unsigned long long)st.st_size,
			      (unsigned long long)tfile_max_size(r->kind), tfile_kind_name(r->kind));
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	close(pfd);
	if (fd < 0)
		return -1;
	/* the same inode, and not one whose reads could block memtap */
	if (fstat(fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		return refuse(r, EINVAL, "it changed while it was opened");
	}
	if (fstatfs(fd, &sfs) == 0 && (unsigned long)sfs.f_type == FUSE_SUPER_MAGIC) {
		close(fd);
		return refuse(r, EXDEV, "on a FUSE file system, whose reads its owner can block");
	}
	return fd;
}

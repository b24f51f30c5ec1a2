/*
 * detour-ring.c - the ring as memory that memtap maps too (detour-ring.h).
 *
 * The process makes a memfd and maps it shared (memfd_create,
 * ftruncate, mmap, madvise MADV_DONTFORK, injected through a stopped
 * thread: remote.h checks each against its seccomp filters); memtap
 * opens the memfd through /proc/PID/fd and maps it as well, then the
 * process closes its descriptor.  memtap then reads the records where
 * they lie, without a syscall or a copy by the kernel per batch.
 *
 * What stays in the process once memtap has gone: the mapping (a
 * deleted memfd, /memfd:memtap-ring in its maps), as a private ring
 * would stay; no descriptor.  A fork child has no copy of it
 * (MADV_DONTFORK): its stubs, whose data pages are wiped at fork
 * (MADV_WIPEONFORK, which the caller made sure of), never write there.
 *
 * Any step refused (no memfd_create before Linux 3.17, a seccomp
 * filter, a /proc that does not give the fd, MEMTAP_DISABLE=
 * shared_ring) undoes the steps before it; the caller then maps a
 * private ring and reads it with process_vm_readv.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "linux/features.h"
#include "linux/memio.h"
#include "probe/detour-ring.h"
#include "probe/remote.h"
#include "util/error.h"

#ifndef MFD_CLOEXEC
# define MFD_CLOEXEC 1U
#endif
#ifndef MADV_DONTFORK
# define MADV_DONTFORK 10
#endif

static const char ring_name[] = "memtap-ring";

static int64_t call(pid_t tid, uint64_t insn, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		    uint64_t a3, uint64_t a4)
{
	const uint64_t args[6] = { a0, a1, a2, a3, a4, 0 };
	struct remote_result res;
	int err = remote_syscall(tid, insn, nr, args, &res);

	return err < 0 ? err : res.ret;
}

/* A syscall of the process failed with err: does the kernel lack it? */
static void check_lost(int64_t err)
{
	if (err == -ENOSYS)
		feature_lost(F_SHARED_RING, ENOSYS);
}

int64_t detour_ring_share(pid_t pid, pid_t tid, uint64_t insn, uint64_t scratch, uint64_t len,
			  void **local)
{
	return detour_memfd_share(pid, tid, insn, scratch, len, ring_name, local);
}

/*
 * The memfd at path (/proc/PID/fd/N) opened for reading and writing.
 * Another thread of the process may have put something else at N since:
 * only a regular file of memory (tmpfs, hugetlbfs: a memfd's) is opened,
 * and without waiting (no FIFO's open, no FUSE file's reads).
 */
static int open_memfd(const char *path)
{
	char self[48];
	struct stat st;
	struct statfs sfs;
	int pfd = open(path, O_PATH | O_CLOEXEC), fd;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || fstatfs(pfd, &sfs) < 0 ||
	    ((unsigned long)sfs.f_type != 0x01021994UL &&	/* TMPFS_MAGIC */
	     (unsigned long)sfs.f_type != 0x958458f6UL)) {	/* HUGETLBFS_MAGIC */
		close(pfd);
		errno = EINVAL;
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(pfd);
	return fd;
}

int64_t detour_memfd_share(pid_t pid, pid_t tid, uint64_t insn, uint64_t scratch, uint64_t len,
			   const char *name, void **local)
{
	char path[64];
	int64_t fd, addr = -ENOMEM, got;
	void *p = MAP_FAILED;
	int lfd;

	*local = NULL;
	if (!feature_has(F_SHARED_RING))
		return -ENOSYS;
	got = memio_write(pid, tid, scratch, name, strlen(name) + 1);
	if (got < 0)
		return got;
	fd = call(tid, insn, SYS_memfd_create, scratch, MFD_CLOEXEC, 0, 0, 0);
	if (fd < 0 || fd > 4095) {
		check_lost(fd);
		debug_msg("process %d: no memfd for %s: %s", pid, name,
			  strerror(fd < 0 ? (int)-fd : EBADF));
		return fd < 0 ? fd : -EBADF;
	}
	got = call(tid, insn, SYS_ftruncate, (uint64_t)fd, len, 0, 0, 0);
	if (got == 0)
		addr = call(tid, insn, SYS_mmap, 0, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			    (uint64_t)fd);
	if (got == 0 && (addr < 0 && addr > -4096))
		got = addr;
	if (got == 0)
		got = call(tid, insn, SYS_madvise, (uint64_t)addr, len, MADV_DONTFORK, 0, 0);
	if (got == 0) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%" PRId64, pid, fd);
		lfd = open_memfd(path);
		if (lfd < 0) {
			got = -errno;
		} else {
			p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
			if (p == MAP_FAILED)
				got = -errno;
			close(lfd);
		}
	}
	call(tid, insn, SYS_close, (uint64_t)fd, 0, 0, 0, 0);
	if (got < 0) {
		debug_msg("process %d: no shared %s: %s", pid, name, strerror((int)-got));
		if (addr >= 0 || addr <= -4096)
			call(tid, insn, SYS_munmap, (uint64_t)addr, len, 0, 0, 0);
		return got;
	}
	*local = p;
	return addr;
}

int64_t detour_ring_map(pid_t pid, pid_t tid, uint64_t insn, uint64_t scratch, uint64_t len,
			int wiped, void **local)
{
	struct remote_result res;
	int64_t got = -ENOSYS;

	*local = NULL;
	if (wiped)
		got = detour_ring_share(pid, tid, insn, scratch, len, local);
	else
		debug_msg("process %d: no MADV_WIPEONFORK: a fork child's stubs write its own "
			  "copy of the ring", pid);
	if (got < 0 && got > -4096)
		got = remote_mmap(tid, insn, 0, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, &res);
	return got;
}

void detour_ring_unshare(void *local, uint64_t len)
{
	if (local)
		munmap(local, len);
}

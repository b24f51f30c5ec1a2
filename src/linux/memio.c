/*
 * memio.c - a tracee's memory through process_vm_readv/writev,
 * /proc/PID/mem or PTRACE_PEEKDATA/POKEDATA (see memio.h).
 *
 * Each path is tried only if linux/features.c says it exists; ENOSYS
 * and EPERM from process_vm_readv/writev (no CONFIG_CROSS_MEMORY_ATTACH,
 * a seccomp policy on memtap) take it away for the rest of the run.  A
 * path that copies part of the range ends the read there (the rest is
 * unreadable to it, and most likely to the others: a stack's end); one
 * that fails entirely hands over to the next.  /proc/PID/mem fds are
 * cached in a small table indexed by pid, replaced on collision.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "linux/features.h"
#include "linux/memio.h"

#define NCACHE 64

struct memfd {
	pid_t pid;		/* 0: empty */
	int fd;
};

static struct memfd cache[NCACHE];

static struct memfd *cache_slot(pid_t pid)
{
	return &cache[(unsigned)pid % NCACHE];
}

static void cache_drop(struct memfd *m)
{
	if (m->pid)
		close(m->fd);
	m->pid = 0;
	m->fd = -1;
}

void memio_forget(pid_t pid)
{
	struct memfd *m = cache_slot(pid);

	if (m->pid == pid)
		cache_drop(m);
}

/* pid's /proc/PID/mem, opened now if not cached or if reopen: fd or -errno. */
static int mem_fd(pid_t pid, int reopen)
{
	struct memfd *m = cache_slot(pid);
	char path[64];
	int fd;

	if (m->pid == pid && !reopen)
		return m->fd;
	cache_drop(m);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = -1;
	if (feature_has(F_PROC_MEM_WRITE))
		fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	m->pid = pid;
	m->fd = fd;
	return fd;
}

/*
 * pread or pwrite on pid's mem: bytes done or -errno.  Nothing done at
 * all means the fd's address space is gone (exec, or a new process with
 * the pid): reopen once.
 */
static ssize_t mem_rw(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = mem_fd(pid, tries);
		ssize_t n;

		if (fd < 0)
			return fd;
		if (write)
			n = pwrite(fd, buf, len, (off_t)addr);
		else
			n = pread(fd, buf, len, (off_t)addr);
		if (n < 0)
			return -errno;
		if (n > 0)
			return n;
	}
	return -EIO;
}

/* PTRACE_PEEKDATA word by word: bytes copied, or -errno if none. */
static ssize_t peek_read(pid_t tid, uint64_t addr, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		uint64_t a = (addr + done) & ~7ULL;
		size_t skip = (size_t)(addr + done - a), n = 8 - skip;
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)a, 0L);
		if (errno)
			return done ? (ssize_t)done : -errno;
		if (n > len - done)
			n = len - done;
		memcpy(buf + done, (uint8_t *)&w + skip, n);
		done += n;
	}
	return (ssize_t)done;
}

/*
 * PTRACE_PEEKDATA/POKEDATA (or, code, PEEKTEXT/POKETEXT), keeping the
 * other bytes of each word.
 */
static int poke_write(pid_t tid, uint64_t addr, const uint8_t *buf, size_t len, int code)
{
	const enum __ptrace_request peek = code ? PTRACE_PEEKTEXT : PTRACE_PEEKDATA;
	const enum __ptrace_request poke = code ? PTRACE_POKETEXT : PTRACE_POKEDATA;

	while (len > 0) {
		uint64_t a = addr & ~7ULL;
		size_t off = (size_t)(addr - a), n = 8 - off < len ? 8 - off : len;
		long w;

		errno = 0;
		w = ptrace(peek, tid, (void *)(uintptr_t)a, 0L);
		if (w == -1 && errno)
			return -errno;
		memcpy((uint8_t *)&w + off, buf, n);
		if (ptrace(poke, tid, (void *)(uintptr_t)a, (void *)w) < 0)
			return -errno;
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

/* process_vm_readv or _writev failed with err: is the call gone for good? */
static void vm_failed(enum feature f, int err)
{
	if (err == ENOSYS || err == EPERM)
		feature_lost(f, err);
}

/*
 * The read of memio_read() and memio_read_all(): all = len or nothing.
 * Through pid, then through tid: a process whose leader exited (a
 * zombie) has no memory under its pid, its live threads do.
 */
static ssize_t do_read(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len, int all)
{
	ssize_t n, err = -EIO;

	if (!len)
		return 0;
	for (int k = 0; k < 2; k++) {
		pid_t who = k ? tid : pid;

		if (k && (tid <= 0 || tid == pid))
			break;
		if (feature_has(F_PROCESS_VM_READV)) {
			struct iovec local = { buf, len };
			struct iovec remote = { (void *)(uintptr_t)addr, len };

			n = process_vm_readv(who, &local, 1, &remote, 1, 0);
			if (n > 0 && (!all || (size_t)n == len))
				return n;
			if (n < 0) {
				err = -errno;
				vm_failed(F_PROCESS_VM_READV, errno);
			}
		}
		if (feature_has(F_PROC_MEM)) {
			n = mem_rw(who, addr, buf, len, 0);
			if (n > 0 && (!all || (size_t)n == len))
				return n;
			if (n < 0)
				err = n;
		}
	}
	if (tid > 0) {
		n = peek_read(tid, addr, buf, len);
		if (n > 0 && (!all || (size_t)n == len))
			return n;
		if (n < 0)
			err = n;
	}
	return err;
}

ssize_t memio_read(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	return do_read(pid, tid, addr, buf, len, 0);
}

int memio_read_all(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = do_read(pid, tid, addr, buf, len, 1);

	return n < 0 ? (int)n : (size_t)n == len ? 0 : -EIO;
}

#define MANY_IOV 256

int memio_read_many(pid_t pid, const struct memio_seg *segs, size_t n)
{
	struct iovec local[MANY_IOV], remote[MANY_IOV];

	while (n > 0) {
		size_t k = n < MANY_IOV ? n : MANY_IOV, want = 0;
		ssize_t got = -1;

		for (size_t i = 0; i < k; i++) {
			local[i].iov_base = segs[i].buf;
			local[i].iov_len = segs[i].len;
			remote[i].iov_base = (void *)(uintptr_t)segs[i].addr;
			remote[i].iov_len = segs[i].len;
			want += segs[i].len;
		}
		if (feature_has(F_PROCESS_VM_READV)) {
			got = process_vm_readv(pid, local, k, remote, k, 0);
			if (got < 0)
				vm_failed(F_PROCESS_VM_READV, errno);
		}
		if (got < 0 || (size_t)got != want)
			/* a range that ends short, or another path: one at a time */
			for (size_t i = 0; i < k; i++) {
				int err = memio_read_all(pid, 0, segs[i].addr, segs[i].buf, segs[i].len);

				if (err < 0)
					return err;
			}
		segs += k;
		n -= k;
	}
	return 0;
}

/*
 * The write of memio_write() and memio_write_code(): code goes through
 * /proc/PID/mem or POKETEXT only (memio.h says why).
 */
static int do_write(pid_t pid, pid_t tid, uint64_t addr, const void *buf, size_t len, int code)
{
	ssize_t n;
	int err = -EIO;

	if (!len)
		return 0;
	for (int k = 0; k < 2; k++) {
		pid_t who = k ? tid : pid;

		if (k && (tid <= 0 || tid == pid))
			break;
		if (!code && feature_has(F_PROCESS_VM_WRITEV)) {
			struct iovec local = { (void *)buf, len };
			struct iovec remote = { (void *)(uintptr_t)addr, len };

			n = process_vm_writev(who, &local, 1, &remote, 1, 0);
			if (n == (ssize_t)len)
				return 0;
			if (n < 0) {
				err = -errno;
				vm_failed(F_PROCESS_VM_WRITEV, errno);
			}
		}
		/* text, or the rest of a range that ran into it: the whole again */
		if (feature_has(F_PROC_MEM_WRITE)) {
			n = mem_rw(who, addr, (void *)buf, len, 1);
			if (n == (ssize_t)len)
				return 0;
			err = n < 0 ? (int)n : -EIO;
		}
	}
	if (tid > 0)
		return poke_write(tid, addr, buf, len, code);
	return err;
}

/* See memio.h. */
int memio_write(pid_t pid, pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	return do_write(pid, tid, addr, buf, len, 0);
}

/* See memio.h. */
int memio_write_code(pid_t pid, pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	return do_write(pid, tid, addr, buf, len, 1);
}

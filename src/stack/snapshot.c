/*
 * snapshot.c - copy the top of a stopped thread's stack, and read tracee
 * memory for the unwinders.
 *
 * One process_vm_readv from the stack pointer upward costs a few µs for
 * 16-64 KiB; the tracer resumes the thread right after it and unwinds
 * from the copy.  Reads the copy cannot serve (a frame deeper than the
 * copy, code, unwind tables) go to the process: process_vm_readv first,
 * PTRACE_PEEKDATA word by word when that fails (as when the kernel
 * lacks CONFIG_CROSS_MEMORY_ATTACH), which only works while the thread
 * is stopped.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "stack/unwind.h"
#include "util/xmalloc.h"

/* Smallest read tried when the kernel refuses larger ones. */
#define SNAPSHOT_MIN_READ 256

int stack_snapshot_take(struct stack_snapshot *s, pid_t pid, pid_t tid,
			const arch_regs_t *regs, size_t max_bytes)
{
	uint64_t sp = arch_sp(regs);
	size_t want = max_bytes;

	s->pid = pid;
	s->tid = tid;
	s->regs = *regs;
	s->start = sp;
	s->len = 0;
	if (sp == 0 || sp + want < sp) {
		errno = EINVAL;
		return want ? -1 : 0;
	}
	if (s->cap < want) {
		free(s->data);
		s->data = xmalloc(want);
		s->cap = want;
	}
	while (want >= SNAPSHOT_MIN_READ || (want && want == max_bytes)) {
		struct iovec local = { s->data, want };
		struct iovec remote = { (void *)(uintptr_t)sp, want };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

		if (n > 0) {
			s->len = (size_t)n;
			return 0;
		}
		if (n == 0 || errno != EFAULT)
			break;
		want /= 2;
	}
	/* No process_vm_readv (or nothing readable): a few words by ptrace. */
	for (size_t off = 0; off + sizeof(long) <= max_bytes && off < 512; off += sizeof(long)) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)(sp + off), NULL);
		if (errno)
			break;
		memcpy(s->data + off, &w, sizeof(w));
		s->len = off + sizeof(w);
	}
	return 0;
}

void stack_snapshot_release(struct stack_snapshot *s)
{
	free(s->data);
	s->data = NULL;
	s->cap = 0;
	s->len = 0;
}

int unwind_read_remote(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	unsigned char *out = buf;

	if (!len)
		return 0;
	if (pid > 0 && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	if (tid <= 0)
		return -1;
	/* Word by word, from an aligned address. */
	uint64_t a = addr & ~(uint64_t)(sizeof(long) - 1);
	size_t done = 0;

	while (done < len) {
		long w;
		size_t skip = (size_t)(addr + done - a);
		size_t n = sizeof(w) - skip;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)a, NULL);
		if (errno)
			return -1;
		if (n > len - done)
			n = len - done;
		memcpy(out + done, (unsigned char *)&w + skip, n);
		done += n;
		a += sizeof(w);
	}
	return 0;
}

int stack_snapshot_read(const struct stack_snapshot *s, uint64_t addr,
			void *buf, size_t len)
{
	if (addr >= s->start && addr - s->start <= s->len &&
	    len <= s->len - (addr - s->start)) {
		memcpy(buf, s->data + (addr - s->start), len);
		return 0;
	}
	return unwind_read_remote(s->pid, s->tid, addr, buf, len);
}

int unwind_memcache_read(struct unwind_memcache *c, const struct stack_snapshot *s,
			 uint64_t addr, void *buf, size_t len)
{
	if (addr >= s->start && addr - s->start <= s->len &&
	    len <= s->len - (addr - s->start)) {
		memcpy(buf, s->data + (addr - s->start), len);
		return 0;
	}
	if (len > sizeof(c->buf))
		return unwind_read_remote(s->pid, s->tid, addr, buf, len);
	if (!(c->len && addr >= c->page && addr - c->page <= c->len &&
	      len <= c->len - (addr - c->page))) {
		/* Fill from the page of addr; a read across pages gets two. */
		uint64_t page = addr & ~(uint64_t)(sizeof(c->buf) - 1);
		size_t n = sizeof(c->buf);
		struct iovec local = { c->buf, n };
		struct iovec remote = { (void *)(uintptr_t)page, n };
		ssize_t got = process_vm_readv(s->pid, &local, 1, &remote, 1, 0);

		c->len = 0;
		if (got <= 0 || addr + len > page + (uint64_t)got)
			return unwind_read_remote(s->pid, s->tid, addr, buf, len);
		c->page = page;
		c->len = (size_t)got;
	}
	memcpy(buf, c->buf + (addr - c->page), len);
	return 0;
}

/*
 * snapshot.c - copy the top of a stopped thread's stack, and read tracee
 * memory for the unwinders.
 *
 * One process_vm_readv from the stack pointer upward costs a few µs for
 * 16-64 KiB; the tracer resumes the thread right after it and unwinds
 * from the copy.  Reads go through linux/memio.h: without
 * process_vm_readv (no CONFIG_CROSS_MEMORY_ATTACH, or MEMTAP_DISABLE)
 * /proc/PID/mem, else PTRACE_PEEKDATA, and the copy is always complete
 * since it is taken while the thread is stopped.  A read of the stack
 * above the copy fails (the stack is the thread's now, no longer the
 * stop's), but in the walk that stack_snapshot_extend() makes at the
 * stop, where it goes to the thread; other reads the copy cannot serve
 * (code, unwind tables) go to the process the same way, PTRACE_PEEKDATA
 * only while the thread is still stopped.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "linux/features.h"
#include "linux/memio.h"
#include "stack/unwind/unwind.h"
#include "util/xmalloc.h"

int stack_snapshot_take(struct stack_snapshot *s, pid_t pid, pid_t tid,
			const arch_regs_t *regs, size_t max_bytes)
{
	uint64_t sp = arch_sp(regs);
	ssize_t n;

	s->pid = pid;
	s->tid = tid;
	s->regs = *regs;
	s->start = sp;
	s->len = 0;
	s->asked = max_bytes;
	s->cut = 0;
	s->live = 0;
	s->reach = 0;
	s->go_len = 0;
	s->go_g0 = 0;
	s->pre = NULL;
	s->npre = 0;
	s->walked = 0;
	if (s->borrowed) {
		s->data = NULL;
		s->cap = 0;
		s->borrowed = 0;
	}
	if (sp == 0 || sp + max_bytes < sp) {
		errno = EINVAL;
		return max_bytes ? -1 : 0;
	}
	if (s->cap < max_bytes) {
		free(s->data);
		s->data = xmalloc(max_bytes);
		s->cap = max_bytes;
	}
	/* short where the stack's mapping ends: the rest is no stack */
	n = memio_read(pid, tid, sp, s->data, max_bytes);
	if (n > 0)
		s->len = (size_t)n;
	return 0;
}

void stack_snapshot_release(struct stack_snapshot *s)
{
	if (!s->borrowed)
		free(s->data);
	s->borrowed = 0;
	s->data = NULL;
	s->cap = 0;
	s->len = 0;
}

int unwind_read_remote(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	if (!len)
		return 0;
	return memio_read_all(pid > 0 ? pid : tid, tid, addr, buf, len) == 0 ? 0 : -1;
}

/*
 * A read the copy cannot serve.  It failing above (or across the end of)
 * a whole copy means the stack goes on where memtap can no longer read
 * it: the snapshot is marked cut, the one change reads make to it (the
 * object is never const itself).  With PTRACE_PEEKDATA alone such a
 * read is not even tried: the thread, resumed since the copy, may be
 * stopped again elsewhere, and what PEEKDATA would give is no longer the
 * copy's stack; and any other read that fails then (libunwind reads
 * unwind tables from the process) cuts the stack too.
 */
static int read_beyond(const struct stack_snapshot *s, uint64_t addr, void *buf, size_t len)
{
	int above = s->asked && s->len == s->asked && addr >= s->start &&
		    addr + len > s->start + s->len;
	int peek_only = !feature_has(F_PROCESS_VM_READV) && !feature_has(F_PROC_MEM);

	if ((!above || !peek_only) && unwind_read_remote(s->pid, s->tid, addr, buf, len) == 0)
		return 0;
	/* by PEEKDATA alone any read can fail once the thread runs */
	if (above || peek_only)
		((struct stack_snapshot *)s)->cut = 1;
	return -1;
}

/*
 * A read of the stack above the stop's sp that the copy does not hold
 * fails: those bytes are the thread's now, not the stop's (a thread
 * that went on, returned and called again, or exited, has other frames
 * there), and no frame may come from them.  A copy of all the bytes
 * asked for is then marked cut (the stack went on); one cut short where
 * the stack ends is not.  Returns 1 when addr is such a read.
 */
static int above_copy(const struct stack_snapshot *s, uint64_t addr, size_t len)
{
	if (addr < s->start || !s->data)
		return 0;
	if (s->asked && s->len == s->asked && !s->live)
		((struct stack_snapshot *)s)->cut = 1;
	(void)len;
	return 1;
}

/*
 * Such a read while the thread is still stopped (stack_snapshot_extend()):
 * from the thread, its end remembered in reach.  0, or -1 (always, when
 * the snapshot is not live).
 */
static int read_live(const struct stack_snapshot *s, uint64_t addr, void *buf, size_t len)
{
	if (!s->live || unwind_read_remote(s->pid, s->tid, addr, buf, len) < 0)
		return -1;
	if (addr + len > s->reach)
		((struct stack_snapshot *)s)->reach = addr + len;
	return 0;
}

/* From the copy of a goroutine's stack (go_snapshot_take()): 0, or -1. */
static int read_go(const struct stack_snapshot *s, uint64_t addr, void *buf, size_t len)
{
	if (!s->go_len || addr < s->go_start || addr - s->go_start > s->go_len ||
	    len > s->go_len - (addr - s->go_start))
		return -1;
	memcpy(buf, s->data + s->go_off + (addr - s->go_start), len);
	return 0;
}

/*
 * A read of the goroutine's stack that its copy does not hold fails, as
 * one above the thread's copy: the goroutine may have run since the
 * stop.  The snapshot is marked cut when the copy stops short of the
 * stack's top.  Returns 1 when addr is such a read.
 */
static int in_go_stack(const struct stack_snapshot *s, uint64_t addr)
{
	if (!s->go_len || addr < s->go_start || addr >= s->go_hi)
		return 0;
	if (s->go_len < s->go_hi - s->go_start)
		((struct stack_snapshot *)s)->cut = 1;
	return 1;
}

int stack_snapshot_read(const struct stack_snapshot *s, uint64_t addr,
			void *buf, size_t len)
{
	if (addr >= s->start && addr - s->start <= s->len &&
	    len <= s->len - (addr - s->start)) {
		memcpy(buf, s->data + (addr - s->start), len);
		return 0;
	}
	if (read_go(s, addr, buf, len) == 0)
		return 0;
	if (in_go_stack(s, addr))
		return -1;
	if (above_copy(s, addr, len))
		return read_live(s, addr, buf, len);
	return read_beyond(s, addr, buf, len);
}

int unwind_memcache_read(struct unwind_memcache *c, const struct stack_snapshot *s,
			 uint64_t addr, void *buf, size_t len)
{
	if (addr >= s->start && addr - s->start <= s->len &&
	    len <= s->len - (addr - s->start)) {
		memcpy(buf, s->data + (addr - s->start), len);
		return 0;
	}
	if (read_go(s, addr, buf, len) == 0)
		return 0;
	if (in_go_stack(s, addr))
		return -1;
	if (above_copy(s, addr, len))
		return read_live(s, addr, buf, len);
	if (len > sizeof(c->buf))
		return read_beyond(s, addr, buf, len);
	if (!(c->len && addr >= c->page && addr - c->page <= c->len &&
	      len <= c->len - (addr - c->page))) {
		/* Fill from the page of addr; a read across pages gets two. */
		uint64_t page = addr & ~(uint64_t)(sizeof(c->buf) - 1);
		ssize_t got = -1;

		/* a page by PTRACE_PEEKDATA is 512 calls: then only what is asked */
		if (feature_has(F_PROCESS_VM_READV) || feature_has(F_PROC_MEM))
			got = memio_read(s->pid, 0, page, c->buf, sizeof(c->buf));

		c->len = 0;
		if (got <= 0 || addr + len > page + (uint64_t)got)
			return read_beyond(s, addr, buf, len);
		c->page = page;
		c->len = (size_t)got;
	}
	memcpy(buf, c->buf + (addr - c->page), len);
	return 0;
}

int unwind_memcache_read_code(struct unwind_memcache *c, const struct stack_snapshot *s,
			      uint64_t addr, void *buf, size_t len)
{
	uint64_t reach = s->reach;
	int cut = s->cut, k = unwind_memcache_read(c, s, addr, buf, len);

	/* code says nothing of how far the stack goes either */
	((struct stack_snapshot *)s)->cut = cut;
	((struct stack_snapshot *)s)->reach = reach;
	return k;
}

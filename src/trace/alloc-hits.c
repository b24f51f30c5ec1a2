/*
 * alloc-hits.c - what a probe's hit means: allocator functions and
 * syscall wrappers are reported at their return (one event with
 * arguments and result), free and user probes at their entry.  A call
 * made by a probed allocator function to another (glibc's
 * realloc(NULL, n) calls malloc, realloc(p, 0) calls free, memalign(16,
 * n) calls malloc) is not an event of its own: per thread, the probed
 * calls awaiting their return are kept with the stack address of their
 * return slot, and an allocator entered while another allocator's call
 * is open on the same stack is nested.  Syscall wrappers called by
 * malloc are events (they are what the seccomp mechanism would report).
 * A call kept open carries the order its process's events had at its
 * entry (sink_next_order()): a realloc frees its block inside, where
 * another thread may get it back and be reported first (event.h,
 * entered).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "trace/alloc-int.h"
#include "trace/emit.h"
#include "probe/breakpoint.h"
#include "probe/probes.h"
#include "record/sink.h"
#include "linux/memio.h"
#include "util/xmalloc.h"

#define MAX_CALLS 32		/* open probed calls per thread */

/* A probed call awaiting its return. */
struct alloc_call {
	uint64_t sp;		/* stack address of its return address */
	const struct probe *probe;
	uint64_t args[6];
	uint64_t old_brk;	/* brk: the break before the call */
	uint64_t entered;	/* sink_next_order() at its entry */
	int64_t sc_weight, sc_data, sc_resident;	/* wrappers: syscall_capture() */
	uint64_t sc_replaced, sc_replaced_data;
	int nested;		/* called by another probed allocator function */
};

struct alloc_thread {
	struct alloc_call calls[MAX_CALLS];
	size_t n;
};

/* A word of tcp's memory, tcp being stopped (linux/memio.h): 0 or -1. */
static int read_word(const struct thread *tcp, uint64_t addr, uint64_t *val)
{
	return memio_read_all(tcp->proc->pid, tcp->tid, addr, val, sizeof(*val)) == 0 ? 0 : -1;
}

/*
 * Drop the open calls whose frames are gone (left by longjmp, or whose
 * return was not seen): those whose return slot is below the entry's
 * sp, or at it unless the function entered was tail-called from the
 * open call (h->tail: its return address at entry was memtap's
 * trampoline, as bp_hit() read it before hooking this call's return,
 * from the word at sp on x86-64 or from x30 on arm64).  Not the word at
 * sp read now: once this call's return is hooked it holds the
 * trampoline on x86-64 too, and on arm64 it is no return address.
 */
static void drop_stale(struct alloc_thread *at, const struct bp_hit *h)
{
	while (at->n > 0) {
		struct alloc_call *c = &at->calls[at->n - 1];

		if (c->sp > h->sp)
			break;
		if (c->sp == h->sp && h->tail)
			break;
		at->n--;
	}
}

/* The syscall behind a wrapper: libc's, of memtap's own ABI. */
static const struct arch_syscall *wrapper_def(const struct probe *pr)
{
	switch (pr->role) {
	case PR_MMAP: return arch_syscall_by_id(ARCH_ABI_NATIVE, SC_MMAP);
	case PR_MUNMAP: return arch_syscall_by_id(ARCH_ABI_NATIVE, SC_MUNMAP);
	case PR_MREMAP: return arch_syscall_by_id(ARCH_ABI_NATIVE, SC_MREMAP);
	case PR_MPROTECT: return arch_syscall_by_id(ARCH_ABI_NATIVE, SC_MPROTECT);
	case PR_MADVISE: return arch_syscall_by_id(ARCH_ABI_NATIVE, SC_MADVISE);
	default: return arch_syscall_by_id(ARCH_ABI_NATIVE, SC_BRK);
	}
}

/* Hand c's call to syscalls.c as a syscall stop would (tcp->sc_*). */
static void wrapper_to_thread(struct thread *tcp, const struct alloc_call *c)
{
	memcpy(tcp->sc_args, c->args, sizeof(tcp->sc_args));
	tcp->sc_abi = ARCH_ABI_NATIVE;
	tcp->sc_old_brk = c->old_brk;
	tcp->sc_weight = c->sc_weight;
	tcp->sc_data = c->sc_data;
	tcp->sc_resident = c->sc_resident;
	tcp->sc_replaced = c->sc_replaced;
	tcp->sc_replaced_data = c->sc_replaced_data;
}

/* A syscall wrapper is entered: what the call will change, from /proc. */
static void wrapper_entry(struct thread *tcp, struct alloc_call *c)
{
	const struct arch_syscall *def = wrapper_def(c->probe);

	c->sc_weight = c->sc_data = c->sc_resident = 0;
	c->sc_replaced = c->sc_replaced_data = 0;
	if (!def)
		return;
	wrapper_to_thread(tcp, c);
	syscall_capture(tcp, def);
	c->sc_weight = tcp->sc_weight;
	c->sc_data = tcp->sc_data;
	c->sc_resident = tcp->sc_resident;
	c->sc_replaced = tcp->sc_replaced;
	c->sc_replaced_data = tcp->sc_replaced_data;
}

/*
 * A syscall wrapper returned: the event the syscall stop would give;
 * 0 when it is none (an mprotect or madvise of no interest).
 */
static int wrapper_event(struct thread *tcp, const struct alloc_call *c, uint64_t retval,
			 struct event *ev)
{
	const struct arch_syscall *def = wrapper_def(c->probe);
	int64_t ret;

	if (!def)
		return 0;
	switch (c->probe->role) {
	case PR_MMAP: case PR_MREMAP: ret = (int64_t)retval; break;
	case PR_MUNMAP: case PR_MPROTECT: case PR_MADVISE: ret = (int32_t)retval; break;
	default:
		/* brk() returns 0 or -1; the syscall returns the new break */
		ret = (int64_t)((int32_t)retval == 0 && c->args[0] ? c->args[0] : c->old_brk);
		break;
	}
	wrapper_to_thread(tcp, c);
	if (!syscall_complete(tcp, def, ret, ev))
		return 0;
	if (c->probe->role == PR_BRK && (ev->failed || !ret))
		tcp->proc->brk = c->old_brk;
	return 1;
}

int alloc_wrapper_detourable(const struct probe *pr)
{
	const struct arch_syscall *def = wrapper_def(pr);

	return def && !syscall_reads_at_entry(def);
}

/* brk(args[0]) is called: the break before it (read from /proc if unknown). */
static uint64_t break_before(struct proc *p, const uint64_t args[6])
{
	if (!p->brk && args[0])
		p->brk = procfs_heap_end(p->pid);
	return p->brk;
}

int alloc_wrapper_record(struct proc *p, pid_t tid, const struct probe *pr,
			 const uint64_t args[6], uint64_t retval, struct event *ev)
{
	struct thread t = { .tid = tid, .proc = p };
	struct alloc_call c = { .probe = pr };

	memcpy(c.args, args, sizeof(c.args));
	memcpy(t.comm, p->rec->comm, sizeof(t.comm));
	if (pr->role == PR_BRK)
		c.old_brk = break_before(p, args);
	if (!wrapper_event(&t, &c, retval, ev))
		return 0;
	ev->comm = p->rec->comm;	/* not t's: it is gone on return */
	return 1;
}

void alloc_hit_entry(struct thread *tcp, const struct probe *pr, const arch_regs_t *regs,
		     const struct bp_hit *h)
{
	struct alloc_thread *at = tcp->alloc;
	uint64_t args[6] = { arch_call_arg(regs, 0), arch_call_arg(regs, 1),
			     arch_call_arg(regs, 2), arch_call_arg(regs, 3),
			     arch_call_arg(regs, 4), arch_call_arg(regs, 5) };
	int nested;
	struct event ev;
	arch_regs_t r;

	if (!at)
		at = tcp->alloc = xcalloc(1, sizeof(*at));
	drop_stale(at, h);
	nested = at->n > 0 && ev_is_alloc(at->calls[at->n - 1].probe->kind) &&
		 ev_is_alloc(pr->kind);
	if (pr->want_return) {
		struct alloc_call *c;

		if (at->n == MAX_CALLS) {
			memmove(at->calls, at->calls + 1, (MAX_CALLS - 1) * sizeof(*c));
			at->n--;
		}
		c = &at->calls[at->n++];
		c->sp = h->sp;
		c->probe = pr;
		memcpy(c->args, args, sizeof(args));
		c->nested = nested;
		c->entered = sink_next_order(tcp->proc->rec);
		c->old_brk = pr->role == PR_BRK ? break_before(tcp->proc, args) : 0;
		if (pr->role >= PR_MMAP)
			wrapper_entry(tcp, c);
		return;
	}
	if (nested)
		return;
	source_event_init(&ev, tcp);
	if (!probe_fill_event(pr, args, 0, 0, &ev))
		return;
	ev.caller = h->caller;
	/* unwind from the function's first instruction */
	r = *regs;
	arch_set_pc(&r, h->addr);
	arch_set_sp(&r, h->sp);
	source_emit(tcp, &ev, &r);
}

void alloc_hit_return(struct thread *tcp, const struct probe *pr, const arch_regs_t *regs,
		      const struct bp_hit *h)
{
	struct alloc_thread *at = tcp->alloc;
	struct alloc_call *c = NULL, call;
	uint64_t word = 0;
	struct event ev;

	/* the outermost open call with this return slot (tail calls share it) */
	for (size_t i = 0; at && i < at->n; i++)
		if (at->calls[i].sp == h->sp) {
			call = at->calls[i];
			c = &call;
			at->n = i;
			break;
		}
	if (!c) {
		/* not seen at entry (or dropped): the engine kept three arguments */
		memset(&call, 0, sizeof(call));
		memcpy(call.args, h->args, sizeof(h->args));
		call.probe = pr;
		c = &call;
	}
	if (c->nested)
		return;
	if (pr->role >= PR_MMAP) {
		if (!wrapper_event(tcp, c, h->retval, &ev))
			return;
	} else {
		source_event_init(&ev, tcp);
		if (pr->role == PR_POSIX_MEMALIGN && (int32_t)h->retval == 0)
			read_word(tcp, c->args[0], &word);
		if (!probe_fill_event(pr, c->args, h->retval, word, &ev))
			return;
		ev.entered = c->entered;
	}
	ev.caller = h->caller;
	ev.leaf = h->addr;
	/* regs are the caller's now: the pc at the return address */
	source_emit(tcp, &ev, regs);
}

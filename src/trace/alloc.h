/*
 * alloc.h - breakpoint probes in traced processes (alloc.c): inserting
 * them (at attach, at the entry point after exec, in followed fork
 * children, after dlopen), turning hits into events, and undoing them.
 *
 * One struct alloc_space per address space holds the breakpoint set; a
 * process points at its space through proc->alloc (a vfork child shares
 * its parent's until it execs or exits).  Spaces are reference counted
 * by the processes using them and freed (bp_set_free(), which never
 * touches the target) when the last one leaves: at exec, at exit, or
 * after alloc_space_remove() at detach.
 *
 * The probes are a source (source.h) like the others: alloc_init()
 * registers it; the loop offers it every SIGTRAP stop, and tells it of
 * the threads' and processes' lives (attach, fork, exec, the first
 * stops, exit) through the same table.  None of its hooks exits;
 * errors are reported and the probe or process concerned goes without.
 * What the other files of the probes share: alloc-int.h.  Detaching
 * (detach.c) is the one thing done by name, below: it parks the
 * threads of each address space until its probes can come out.
 */
#ifndef MEMTAP_ALLOC_H
#define MEMTAP_ALLOC_H

#include <stdio.h>
#include <sys/types.h>

#include "trace/memtap.h"
#include "trace/procs.h"
#include "trace/tracer.h"

struct alloc_space;

/*
 * Once, after the options: build the probe list (probes_init()), with
 * libc's syscall wrappers if syscall_wrappers, and register the
 * breakpoint source.  pt: the table of traced threads, walked to arm
 * and to detach.  Returns 1 when there is anything to probe.
 */
int alloc_init(struct procs *pt, const struct trace_config *cfg, int syscall_wrappers);

/* ---- detaching ---- */

/* The space of p when it has breakpoints to undo, else NULL. */
struct alloc_space *alloc_active_space(const struct proc *p);

/*
 * For detach, tcp in a ptrace-stop: move it out of memtap's code.
 * 0: done; 1: a SIGTRAP of ours is still queued (resume it with signal
 * 0, its next stop is that SIGTRAP, then call again); -errno.
 */
int alloc_fixup_for_detach(struct thread *tcp);

/*
 * Every thread of the space is stopped and fixed up; good is one at a
 * signal-delivery-stop or PTRACE_EVENT_STOP.  Write back every original
 * byte, unmap the scratch pages, forget the breakpoints.  0 or -errno
 * (reported).
 */
int alloc_space_remove(struct alloc_space *s, struct thread *good,
		       struct thread *const *others, size_t nothers);

#endif /* MEMTAP_ALLOC_H */

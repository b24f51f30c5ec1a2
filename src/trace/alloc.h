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
 * after their removal at detach (space_remove()).
 *
 * The probes are a source (source.h) like the others: alloc_init()
 * registers it; the loop offers it every SIGTRAP stop, and tells it of
 * the threads' and processes' lives (attach, fork, exec, the first
 * stops, exit) through the same table.  None of its hooks exits;
 * errors are reported and the probe or process concerned goes without.
 * At detach, the threads of each address space are parked (detach.c)
 * until its probes can come out: space(), park(), remove().  What the
 * files of the probes share: alloc-int.h.
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

#endif /* MEMTAP_ALLOC_H */

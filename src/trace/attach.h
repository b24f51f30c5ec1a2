/*
 * attach.h - attaching to a running process (attach.c).
 */
#ifndef MEMTAP_ATTACH_H
#define MEMTAP_ATTACH_H

#include <sys/types.h>

#include "trace/procs.h"
#include "trace/tracer.h"

/*
 * Seize every thread of pid into pt; -1 when refused (nothing of the
 * process is left seized), attach_error() saying why in one line.
 */
int attach_pid(struct procs *pt, const struct trace_config *cfg, pid_t pid);
const char *attach_error(void);

/*
 * p's seccomp state forbids the scratch page that breakpoints need (why:
 * the reason, see sandbox_reason()): refuse its allocator probes and
 * catch its syscalls with PTRACE_SYSCALL instead of breakpoints, each
 * with one line.  at_attach: exit when no syscall event is selected
 * either (at attach only: never in the middle of a launched command).
 * pt: every traced process.
 */
void attach_refuse_probes(const struct trace_config *cfg, const struct procs *pt,
			  struct proc *p, const char *why, int at_attach);

#endif /* MEMTAP_ATTACH_H */

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
int attach_pid(struct procs *pt, pid_t pid);
const char *attach_error(void);

/*
 * Would the seccomp state of p's leader (seized, maybe not stopped yet)
 * let memtap map a scratch page and unmap it again?  1 yes (or no
 * seccomp); 0 no, with the reason in buf.  The filters are fetched at
 * the leader's first stop, which is waited for and left for the event
 * loop to report (WNOWAIT).  The page's address is not known yet: the
 * filters see a representative one, and remote_syscall() checks the
 * real calls again.
 */
int attach_scratch_allowed(struct proc *p, char *buf, size_t size);

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

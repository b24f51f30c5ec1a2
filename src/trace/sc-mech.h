/*
 * sc-mech.h - how each process's syscalls are caught where libc's
 * wrappers are the mechanism (attach mode's default, --syscalls=breakpoints):
 * the wrappers, or PTRACE_SYSCALL for a process whose syscalls do not
 * pass them (sc-mech.c).
 *
 * A Go program makes its syscalls from its runtime (runtime.sysMmap,
 * runtime.munmap, syscall.Syscall6), never through a C library, cgo or
 * not; a program without wrappers (a static, stripped one) has none
 * memtap could probe.  Such a process is traced with PTRACE_SYSCALL,
 * said once per process, unless --syscalls=breakpoints was given: then
 * its syscalls are missed, said once, and the report's mechanism says
 * so too.  After an exec the choice is made again for the new program.
 */
#ifndef MEMTAP_SC_MECH_H
#define MEMTAP_SC_MECH_H

#include "trace/procs.h"
#include "trace/tracer.h"

struct elfsym_proc;

/* Why a process's syscalls stop with PTRACE_SYSCALL (struct proc's ptrace_syscalls). */
enum {
	PTRACE_SC_SANDBOX = 1,		/* its seccomp filters forbid the probes (attach.c) */
	PTRACE_SC_NO_WRAPPERS = 2,	/* a Go program, or no wrapper found */
	PTRACE_SC_LAUNCH = 4,		/* launched, from its exec until its
					   wrappers are armed (stops.c) */
};

/*
 * At the arming of p's probes (attach, the entry of an exec'd program,
 * a fork child), with ep its objects: keep the wrappers for p, or
 * switch it to PTRACE_SYSCALL (or back, after an exec), saying why.
 * PTRACE_SC_LAUNCH ends here, quietly: the wrappers take over, or the
 * choice is made as for any other process.
 * Nothing when the wrappers are not the mechanism.
 */
void sc_mech_choose(const struct trace_config *cfg, const struct procs *pt, struct proc *p,
		    struct elfsym_proc *ep);

/* Do p's syscall wrappers get probes? */
int sc_mech_wrappers(const struct proc *p);

/*
 * Launch mode, at the exec event of p: does its new program run under
 * PTRACE_SYSCALL until its wrappers are armed (PTRACE_SC_LAUNCH), so
 * that the dynamic linker's own syscalls are recorded?  Where the
 * wrappers are the mechanism and nothing else chose PTRACE_SYSCALL.
 */
void sc_mech_exec(const struct trace_config *cfg, struct proc *p);

/*
 * p's syscalls with PTRACE_SYSCALL from now, for reason (PTRACE_SC_*);
 * the mechanism the report names follows.
 */
void sc_mech_ptrace(const struct trace_config *cfg, const struct procs *pt, struct proc *p,
		    int reason);

/* Was p's lack of wrappers said, its syscalls missed (--syscalls=breakpoints)? */
int sc_mech_missed(const struct proc *p);

#endif /* MEMTAP_SC_MECH_H */

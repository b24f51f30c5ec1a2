/*
 * tracer.h - the ptrace event loop (tracer.c), attaching (attach.c) and
 * launching (launch.c).
 *
 * Life cycle: launch_command() or attach_pid() registers the roots with
 * tracer_add_*(); tracer_run() serves every stop until no tracee is left
 * or, in attach mode, a stop is requested (signal, -d); it then detaches
 * from every thread, leaving each running (or stopped, if it was
 * group-stopped) with no change to its memory or registers.
 */
#ifndef MEMTAP_TRACER_H
#define MEMTAP_TRACER_H

#include <sys/types.h>

#include "trace/memtap.h"

/* The ptrace options memtap sets on every tracee. */
unsigned long tracer_ptrace_options(void);

/*
 * Called once before attaching or launching: use_seccomp for the
 * command's filter, ptrace_syscalls for PTRACE_SYSCALL stops (else
 * threads run with PTRACE_CONT), source names the syscall mechanism in
 * the report.
 */
void tracer_init(int use_seccomp, int ptrace_syscalls, const char *source);

/* Register a seized process and thread; returns the thread. */
struct proc *tracer_new_proc(pid_t pid, pid_t ppid);
struct thread *tracer_new_thread(pid_t tid, struct proc *p);
struct thread *tracer_find_thread(pid_t tid);

/* The launched command: its pid and the pipe that reports exec errors. */
void tracer_set_launched(pid_t pid, int exec_err_fd, const char *cmd);

/*
 * Run the event loop.  Returns the exit status memtap should have:
 * the command's (launch mode) or 0 (attach mode, clean detach).
 */
int tracer_run(void);

/* Ask the loop to stop (async-signal-safe): detach or forward. */
void tracer_request_stop(int sig);

/* Detach from every tracee now (the die() path). */
void tracer_detach_all(void);

/*
 * For alloc.c: resume a stopped thread (PTRACE_CONT while detaching);
 * detach one; walk every thread (*iter starts at 0; NULL at the end);
 * is the tracer detaching?
 */
void tracer_resume(struct thread *tcp, int sig);
void tracer_detach_thread(struct thread *tcp, int sig);
struct thread *tracer_next_thread(size_t *iter);
int tracer_detaching(void);
int tracer_launch_mode(void);

/* attach.c: seize every thread of pid; exits with a message on failure. */
void attach_pid(pid_t pid);

/*
 * p's seccomp state forbids the scratch page that breakpoints need (why:
 * the reason, see sandbox_reason()): refuse its allocator probes and
 * catch its syscalls with PTRACE_SYSCALL instead of breakpoints, each
 * with one line.  at_attach: exit when no syscall event is selected
 * either (at attach only: never in the middle of a launched command).
 */
void attach_refuse_probes(struct proc *p, const char *why, int at_attach);

/* launch.c: start argv under ptrace (and the seccomp filter). */
void launch_command(char **argv, int use_seccomp);

#endif /* MEMTAP_TRACER_H */

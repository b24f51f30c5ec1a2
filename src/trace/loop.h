/*
 * loop.h - what the files of the ptrace loop share, inside trace/ only:
 * the tracer's state, and the functions by which the loop (loop.c), the
 * stop handlers (stops.c) and detaching (detach.c) call each other.
 * cli/ sees tracer.h alone.
 */
#ifndef MEMTAP_LOOP_H
#define MEMTAP_LOOP_H

#include <stdint.h>
#include <sys/types.h>

#include "trace/memtap.h"
#include "trace/procs.h"
#include "trace/tracer.h"

struct tracer {
	const struct trace_config *cfg;
	struct procs procs;		/* every traced process and thread */
	int use_seccomp;		/* the command's seccomp filter stops syscalls */
	int ptrace_syscalls;		/* PTRACE_SYSCALL: every syscall stops */
	int detaching;			/* leave every thread, then end */
	uint64_t detach_ns;		/* when detaching started */
	/* launch mode: the command */
	pid_t launched_pid;		/* 0 in attach mode */
	int launched_status;		/* its wait status, -1 until it dies */
	int launched_exec_fd;		/* the pipe that reports exec errors */
	const char *launched_cmd;
	int launched_exec_seen;		/* its exec was seen */
};

extern struct tracer tr;

/* ---- loop.c ---- */

/* ptrace(req, tid, 0, data), a message unless the thread is gone (ESRCH). */
void ptrace_or_warn(int req, pid_t tid, unsigned long data, const char *what);

/*
 * Resume a stopped thread, delivering sig (0 for none): PTRACE_SYSCALL
 * where syscall stops are wanted, else PTRACE_CONT (always while
 * detaching).
 */
void resume(struct thread *tcp, int sig);

/*
 * How long threads stay stopped (struct stop_counts): stop_began() when
 * waitpid() returned a stop of tcp, at ns, before it is served;
 * stop_ended() at the ptrace request that resumes or detaches it (resume(),
 * detach_thread()), which counts the time; a thread that stays stopped by
 * its own group-stop has its stop_ns cleared, uncounted.
 */
void stop_began(struct thread *tcp, int status, uint64_t ns);
void stop_ended(struct thread *tcp);

/* Forget a thread that is gone or left. */
void thread_free(struct thread *tcp);

/*
 * launch.c: start argv under ptrace (and the seccomp filter), its
 * process and thread in pt.  Returns its pid; *exec_err_fd is the pipe
 * that reports exec errors.
 */
pid_t launch_command(struct procs *pt, char **argv, int use_seccomp, int *exec_err_fd);

/* ---- stops.c ---- */

/* A ptrace-stop (WIFSTOPPED status) of a known thread. */
void handle_stop(struct thread *tcp, pid_t pid, int status);

/* PTRACE_EVENT_EXEC of tcp, or of pid when its thread is not known (tcp NULL). */
void on_exec(struct thread *tcp, pid_t pid);

/* A thread (or process) is gone: status is its wait status. */
void on_death(struct thread *tcp, int status);

/* The launched command died before exec: report why and exit. */
void launch_failed(void);

/* ---- detach.c ---- */

/* Detach a stopped thread, passing on sig; the thread is freed. */
void detach_thread(struct thread *tcp, int sig);

/*
 * Detach tcp, or park it until its address space's breakpoints are out;
 * good: see detach.c.
 */
void detach_or_park(struct thread *tcp, int sig, int good);

/* Start detaching from every thread (attach mode). */
void start_detach(void);

/* While detaching: finish every space whose threads are all parked. */
void detach_progress(void);

#endif /* MEMTAP_LOOP_H */

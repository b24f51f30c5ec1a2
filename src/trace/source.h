/*
 * source.h - sources of events, and how the loop serves them (source.c).
 *
 * A source turns something the target did into events for the sink.
 * Two kinds are served by the one loop (loop.c):
 *   - ptrace-stop sources: the loop collects every pending stop and
 *     offers each stop that is no life-cycle event of a thread (exec,
 *     fork, exit, group-stop...) to the sources, in the order they were
 *     registered, until one claims it.  Today: the syscall stops
 *     (syscalls.c: seccomp stops, PTRACE_SYSCALL stops) and the int3
 *     allocator probes (alloc.c: SIGTRAP stops).  A SIGTRAP no source
 *     claims is the target's: it is delivered;
 *   - fd and timed sources (a ring shared with the target, a perf
 *     ring...): the loop sleeps in poll() on the SIGCHLD signalfd and
 *     every source's fd, until the earliest of the timers and the
 *     sources' next_drain_ns(); each round, after the stops, it drains
 *     every source whose fd is readable or whose drain time has come.
 * A source emits events with source_emit() (emit.c), at a stop or in
 * drain(); the loop flushes them to the sink (unwinding) at the end of
 * each round, every thread running again.
 *
 * A source that drains outside a stop has no stopped thread to hand
 * source_emit(): it gives the sink what its records carry (pid, tid,
 * stack copy) itself.
 *
 * Life cycle: source_register() at init, or later (a ring set up in
 * the target once the probes are in: its fd is polled from the next
 * round); detach() once when tracing ends (the last thread gone or
 * detached), before the final report: a last drain, then let go of the
 * target.
 *
 * The threads' lives and the images' are told to every source through
 * the same table (a source with events per thread, faults.c: its perf
 * events opened, read, closed; threads it interrupted held at their
 * stop until round_end()), so that the loop names no source.  So are
 * the processes' lives to a source that puts things in the target's
 * memory and must follow them (alloc.c, the allocator probes: its
 * breakpoints and detours per address space go in after attach, at an
 * exec's entry point, in a fork child, after a dlopen): attach(),
 * new_task(), event_stop(), exec_stop(), the syscall stops, what the
 * loop asks of it (arming(), in_target(), uses_proc()), and how its
 * things come out at detach (space(), park(), remove()).
 */
#ifndef MEMTAP_SOURCE_H
#define MEMTAP_SOURCE_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc;
struct run_info;
struct stack_snapshot;
struct thread;

/* What a source did with a ptrace stop offered to it. */
enum stop_verdict {
	STOP_NOT_MINE,		/* offer it to the next source */
	STOP_RESUME,		/* handled: the loop resumes the thread, signal 0 */
	STOP_KEPT,		/* handled: the source keeps the thread stopped and
				   resumes it later (tracer_resume()) */
};

/* What the loop does with a thread after a life-cycle hook. */
enum life_verdict {
	LIFE_RESUME,		/* as it would have: resume it, signal 0 */
	LIFE_KEEP,		/* the source keeps it stopped (tracer_resume() later) */
	LIFE_DETACH,		/* detach it, signal 0 */
};

/* Every member may be NULL. */
struct source_ops {
	const char *name;
	int (*fd)(void *self);			/* fd to poll for POLLIN, or -1 */
	uint64_t (*next_drain_ns)(void *self);	/* now_ns() time, 0 = none */
	void (*drain)(void *self);		/* read what is ready: events */
	/* A ptrace stop of tcp, status as waitpid() gave it. */
	enum stop_verdict (*stop)(void *self, struct thread *tcp, int status);
	void (*detach)(void *self);		/* tracing ends */
	/* A report is due: bring the totals up to date (drain, counts). */
	void (*settle)(void *self);
	/*
	 * Threads: tcp first known (procs_new_thread(): not run yet, or
	 * just seized); at its PTRACE_EVENT_EXIT, its address space still
	 * there (the last events of it); before it is forgotten (dead or
	 * detached).
	 */
	void (*thread_new)(void *self, struct thread *tcp);
	void (*thread_exit)(void *self, struct thread *tcp);
	void (*thread_gone)(void *self, struct thread *tcp);
	/*
	 * At a PTRACE_EVENT_STOP no one else wanted: 1 to keep tcp stopped
	 * (the source resumes it with tracer_resume(), at the latest in
	 * round_end()).  round_end(): the round's events are flushed.
	 */
	int (*hold)(void *self, struct thread *tcp);
	void (*round_end)(void *self);
	/*
	 * Detaching, tcp at a stop where it would go (a
	 * PTRACE_EVENT_STOP or signal-delivery-stop): 1 if a signal of
	 * the source's own is queued for it, which the source wants to
	 * take out first: the loop resumes tcp, and the signal's stop
	 * comes to stop().
	 */
	int (*release)(void *self, struct thread *tcp);
	/*
	 * Images: the entry of an execve by tcp (a seccomp or syscall
	 * stop, the old image still mapped); PTRACE_EVENT_EXEC of pid,
	 * before the old image's modules are forgotten.
	 */
	void (*execve_entry)(void *self, struct thread *tcp);
	void (*exec)(void *self, pid_t pid);
	/*
	 * Processes, for a source with things in the target's memory:
	 *   attach: every thread of p seized (attach_pid()): 1 if the
	 *     source says itself that p is attached, once its things are in;
	 *   new_task: tcp's PTRACE_EVENT_{FORK,VFORK,CLONE} (event) that
	 *     made a process, child, the loop's part done, before tcp is
	 *     resumed (a new thread comes to thread_new());
	 *   event_stop: a PTRACE_EVENT_STOP of tcp: first, the first stop
	 *     of a thread whose process is known; group, a group-stop (the
	 *     loop answers PTRACE_LISTEN whatever is returned);
	 *   exec_stop: PTRACE_EVENT_EXEC of tcp, the loop's part done (comm
	 *     read again).
	 * The sources are asked in order until one answers other than
	 * LIFE_RESUME.
	 */
	int (*attach)(void *self, struct proc *p);
	void (*new_task)(void *self, struct thread *tcp, struct proc *child, int event);
	enum life_verdict (*event_stop)(void *self, struct thread *tcp, int first, int group);
	enum life_verdict (*exec_stop)(void *self, struct thread *tcp);
	/*
	 * Read now what the target recorded in tcp's address space (events
	 * to the sink), at a fork before the child gets a copy of the live
	 * blocks, when code is mapped before its rules change: 1 if the
	 * source keeps records there (the loop then flushes the sink).
	 */
	int (*flush_thread)(void *self, struct thread *tcp);
	/*
	 * A PTRACE_SYSCALL stop of tcp, before it is resumed; tcp's
	 * syscall-exit stop of a call that mapped code (or made memory
	 * executable).
	 */
	void (*syscall_stop)(void *self, struct thread *tcp);
	void (*code_mapped)(void *self, struct thread *tcp);
	/*
	 * snap, a copy of the stack of tcp (stopped), holds return
	 * addresses that the source replaced in the target: put the real
	 * ones back in the copy.
	 */
	void (*fix_stack)(void *self, struct thread *tcp, struct stack_snapshot *snap);
	/*
	 * 1 while the source waits to put its things in a process (-d and
	 * -i count from when none does); while it has things in a target
	 * to take out (detaching); while it still refers to p (the loop
	 * keeps p until none does).
	 */
	int (*arming)(void *self);
	int (*in_target)(void *self);
	int (*uses_proc)(void *self, const struct proc *p);
	/*
	 * What the source adds to the reports' run info (ri's unfound
	 * probes, notes); final: the final report is due (its last words).
	 */
	void (*run_info)(void *self, struct run_info *ri);
	void (*final)(void *self);
	/*
	 * Detaching, for a source whose things come out of an address
	 * space only once every thread of it is stopped (detach.c parks
	 * them until then):
	 *   space: p's address space while the source has things in it to
	 *     take out (a key shared by the processes in it), or NULL;
	 *   park: tcp (of such a space) is at a signal-delivery-stop or a
	 *     PTRACE_EVENT_STOP: move it out of the source's code.  0:
	 *     done; 1: a SIGTRAP of the source's is still queued (the loop
	 *     resumes tcp with signal 0, and parks it again at its next
	 *     stop, the SIGTRAP's, once stop() has taken it); -errno;
	 *   remove: every thread of space is parked (all, n of them; good,
	 *     one at a signal-delivery-stop or PTRACE_EVENT_STOP): take the
	 *     source's things out of it, errors reported.
	 */
	const void *(*space)(void *self, const struct proc *p);
	int (*park)(void *self, struct thread *tcp);
	void (*remove)(void *self, const void *space, struct thread *good,
		       struct thread *const *all, size_t n);
};

/* At most SOURCES_MAX sources; ops and self live until exit. */
#define SOURCES_MAX 8
void source_register(const struct source_ops *ops, void *self);

/* ---- for the loop ---- */

/* Offer a ptrace stop to the sources, in order, until one claims it. */
enum stop_verdict sources_stop(struct thread *tcp, int status);

/*
 * Append a pollfd (POLLIN) for each source's fd to pfd (room for
 * SOURCES_MAX); returns how many.
 */
size_t sources_pollfds(struct pollfd *pfd);

/* The earliest next_drain_ns() of the sources, 0 = none. */
uint64_t sources_next_ns(void);

/*
 * Drain each source whose fd is readable now (a poll() that does not
 * wait) or whose next_drain_ns() is at or before now.  Returns how many
 * were drained.
 */
size_t sources_drain(uint64_t now);

/* Tracing ends: each source's detach(), in order. */
void sources_detach(void);

/* Before a report: each source's settle(), in order. */
void sources_settle(void);

/* Each source's thread_new(), thread_exit(), thread_gone(), in order. */
void sources_thread_new(struct thread *tcp);
void sources_thread_exit(struct thread *tcp);
void sources_thread_gone(struct thread *tcp);

/* Offer the stop of tcp to each source's hold(), in order, until one
   keeps it: 1 if one did. */
int sources_hold(struct thread *tcp);

/* Detaching: 1 if a source's release() wants tcp resumed before it goes. */
int sources_release(struct thread *tcp);

/* Each source's round_end(), execve_entry(), exec(), in order. */
void sources_round_end(void);
void sources_execve_entry(struct thread *tcp);
void sources_exec(pid_t pid);

/*
 * attach(): 1 if a source said so; new_task(), each; event_stop(),
 * exec_stop(): the first answer other than LIFE_RESUME.
 */
int sources_attach(struct proc *p);
void sources_new_task(struct thread *tcp, struct proc *child, int event);
enum life_verdict sources_event_stop(struct thread *tcp, int first, int group);
enum life_verdict sources_exec_stop(struct thread *tcp);

/* flush_thread(): 1 if a source did; the others, each. */
int sources_flush_thread(struct thread *tcp);
void sources_syscall_stop(struct thread *tcp);
void sources_code_mapped(struct thread *tcp);
void sources_fix_stack(struct thread *tcp, struct stack_snapshot *snap);

/* arming(), in_target(), uses_proc(): 1 if a source says so. */
int sources_arming(void);
int sources_in_target(void);
int sources_use_proc(const struct proc *p);

/* run_info(), final(): each. */
void sources_run_info(struct run_info *ri);
void sources_final(void);

/*
 * The first space() of p that is not NULL, or NULL; park() and remove()
 * of the source it came from (park(): 0 when none).
 */
const void *sources_space(const struct proc *p);
int sources_park(struct thread *tcp);
void sources_remove(const void *space, struct thread *good, struct thread *const *all,
		    size_t n);

#endif /* MEMTAP_SOURCE_H */

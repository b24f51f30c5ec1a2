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
 */
#ifndef MEMTAP_SOURCE_H
#define MEMTAP_SOURCE_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

struct thread;

/* What a source did with a ptrace stop offered to it. */
enum stop_verdict {
	STOP_NOT_MINE,		/* offer it to the next source */
	STOP_RESUME,		/* handled: the loop resumes the thread, signal 0 */
	STOP_KEPT,		/* handled: the source keeps the thread stopped and
				   resumes it later (tracer_resume()) */
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

#endif /* MEMTAP_SOURCE_H */

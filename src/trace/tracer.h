/*
 * tracer.h - the tracer as cli/ sees it: its configuration, launching a
 * command or attaching to processes, and the ptrace event loop
 * (loop.c, stops.c, detach.c; launch.c, attach.c).
 *
 * Life cycle: tracer_init() once, with the configuration cli filled in
 * (it must live until exit); tracer_launch() or tracer_attach() for each
 * -p PID registers the roots; tracer_run() serves every stop until no
 * tracee is left or, in attach mode, a stop is requested (signal, -d); it
 * then detaches from every thread, leaving each running (or stopped, if
 * it was group-stopped) with no change to its memory or registers.
 */
#ifndef MEMTAP_TRACER_H
#define MEMTAP_TRACER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct thread;
struct run_info;
struct sink_proc;

enum syscalls_mode {
	SYSCALLS_AUTO,		/* seccomp for commands, breakpoints for -p */
	SYSCALLS_SECCOMP,
	SYSCALLS_PTRACE,
	SYSCALLS_BREAKPOINTS,	/* breakpoints on libc's wrappers */
};

/* How allocator probes are placed (--probes). */
enum probes_mode {
	PROBES_DETOUR,		/* in-target detours where they can go, else int3 */
	PROBES_INT3,		/* int3 breakpoints: a ptrace stop per call */
};

/* What the tracer needs of the options. */
struct trace_config {
	unsigned events;		/* -e: EV_BIT() set */
	enum syscalls_mode syscalls;	/* how syscalls are caught, never SYSCALLS_AUTO */
	int syscalls_given;		/* --syscalls= given: kept for every process */
	int follow_forks;		/* -f: -p follows fork children */
	size_t npids;			/* -p: how many processes, 0 = a command;
					   memtap agent: SIZE_MAX */
	const char *symbol_prefix;	/* --symbol-prefix, or NULL */
	double duration;		/* -d seconds, 0 = until the end */
	double interval;		/* -i seconds, 0 = one report at the end */
	const char *output;		/* -o path, or NULL for stdout */
	FILE *out;			/* the output (-o's file or stdout), opened */
	int trace;			/* --trace: a line per event on stderr */
	uint64_t fault_period;		/* --fault-period: one fault sampled in N */
	size_t fault_stack;		/* faults: stack bytes per sample (--stack-size,
					   else 0: FAULT_STACK_DEFAULT) */
	int fault_exact;		/* --exact: faults' rings paced by tripwires */
	enum probes_mode probes;	/* --probes */
	uint64_t min_size, max_size;	/* --min-size, --max-size (0: none): detours filter */
	uint64_t sample_mean;		/* --sample: detours sample at this mean, 0: every call */
	double overhead;		/* --overhead PERCENT: the mean adapts; 0: it stays */
	int leaks;			/* --leaks: sampled blocks are followed to their free */
	/* -i: called at each interval's end instead of the report (agent) */
	void (*on_interval)(int last, const struct run_info *ri);
	int agent;			/* memtap agent: run with no process, attach
					   at any time (tracer_attach_soft()), until
					   a signal */
};

/*
 * Once, before launching or attaching: the probe list, the syscall
 * mechanism, the clock.  cfg is kept.
 */
void tracer_init(const struct trace_config *cfg);

/* Start argv under ptrace (and the seccomp filter); exits on failure. */
void tracer_launch(char **argv);

/* Seize every thread of pid; exits with a message on failure. */
void tracer_attach(pid_t pid);
/*
 * The same, at any time (memtap agent): -1 with the one-line reason in
 * err when refused; the process is then left as it was.
 */
int tracer_attach_soft(pid_t pid, char *err, size_t size);
/* Is process pid traced now (its leader known and not gone)? */
int tracer_traces(pid_t pid);
/*
 * memtap agent: forget the processes gone (no thread traced, nothing of
 * memtap's kept for them), each after forget(its sink_proc).
 */
void tracer_forget_gone(void (*forget)(struct sink_proc *rec));

/*
 * Run the event loop.  Returns the exit status memtap should have:
 * the command's (launch mode) or 0 (attach mode, clean detach).
 */
int tracer_run(void);

/* Ask the loop to stop (async-signal-safe): detach or forward. */
void tracer_request_stop(int sig);

/* Detach from every tracee now (the die() path). */
void tracer_detach_all(void);

/* ---- inside trace/ ---- */

/* Forget a thread no longer traced (detached, or never stopped). */
void tracer_forget_thread(struct thread *tcp);

/* The ptrace options memtap sets on every tracee. */
unsigned long tracer_ptrace_options(void);

/*
 * For the sources (alloc.c): resume a thread they kept stopped (with
 * PTRACE_CONT while detaching); is the tracer detaching?
 */
void tracer_resume(struct thread *tcp, int sig);
int tracer_detaching(void);

/*
 * Is a stop asked for (a signal, -d) and not served yet?  Long work on
 * the loop's thread (draining a busy ring, the -i reports) looks at it
 * between steps and leaves the rest for later, so that the loop
 * detaches first (within a second of SIGINT, SIGTERM or SIGHUP).
 */
int tracer_stop_pending(void);

/* Is pid the launched command before its first exec (memtap's child still)? */
int tracer_before_command_exec(pid_t pid);

#endif /* MEMTAP_TRACER_H */

/*
 * memtap.h - the tracer's shared state: options, traced processes and
 * threads, and the functions that connect the source files.
 *
 * Ownership: the tracer (tracer.c) owns every struct proc and struct
 * thread.  A proc outlives its threads so that the report can speak of
 * processes that exited; threads are freed when they die or detach.
 * The central per-thread variable is always named tcp.
 */
#ifndef MEMTAP_H
#define MEMTAP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "arch.h"
#include "record/event.h"
#include "util/clock.h"

enum out_format {
	FORMAT_TEXT,
	FORMAT_FOLDED,
	FORMAT_SVG,
	FORMAT_PPROF,
	FORMAT_JSON,
};

enum syscalls_mode {
	SYSCALLS_AUTO,		/* seccomp for commands, breakpoints for -p */
	SYSCALLS_SECCOMP,
	SYSCALLS_PTRACE,
	SYSCALLS_BREAKPOINTS,	/* breakpoints on libc's wrappers */
};

struct options {
	pid_t *pids;		/* -p, npids entries */
	size_t npids;
	char **argv;		/* the command after --, NULL-terminated */
	unsigned events;	/* EV_BIT() set of -e */
	enum syscalls_mode syscalls;
	uint64_t min_size;	/* --min-size: |weight| below this is dropped */
	double duration;	/* -d seconds, 0 = until the end */
	const char *output;	/* -o path or NULL for stdout */
	const char *record;	/* --record: the JSON recording, or NULL */
	int trace;		/* --trace */
	int unwind;		/* enum unwind_kind of --unwind */
	int max_depth;		/* --max-depth */
	size_t stack_size;	/* --stack-size: bytes of stack copied */
	int lines;		/* --lines */
	int no_demangle;	/* --no-demangle */
	int top;		/* --top */
	int format;		/* enum out_format of -F */
	int weight;		/* enum weight (output.h) of --weight */
	const char *title;	/* --title */
	int inverted;		/* --inverted */
	double interval;	/* -i seconds, 0 = one report at the end */
	uint64_t max_size;	/* --max-size, 0 = no limit */
	int net;		/* --net: weigh by acquired - released */
	int leaks;		/* --leaks: weigh by what is still held */
	double min_age;		/* --min-age seconds, for --leaks */
	int follow_forks;	/* -f: -p follows fork children */
	const char *symbol_prefix;	/* --symbol-prefix: je_, _rjem_... */
};

extern struct options opt;
extern FILE *out;		/* where the output goes (-o or stdout) */

/* Figures of /proc/PID/status, in bytes; valid when have is set. */
struct vmstat {
	int have;
	uint64_t vm_size, vm_rss, vm_data;
};

/* Per event kind counters of one process. */
struct kind_stats {
	uint64_t calls;		/* recorded calls, failed ones included */
	uint64_t failed;
	uint64_t acquired;	/* sum of positive weights */
	uint64_t released;	/* sum of negative weights, as a positive number */
	uint64_t anon, file;	/* mmap: acquired bytes by mapping kind */
};

struct proc {
	pid_t pid;
	pid_t ppid;		/* traced parent, 0 for the roots */
	char comm[16];		/* as of the last exec */
	int nthreads;		/* live traced threads */
	int execs;		/* successful execs seen */
	uint64_t brk;		/* current break, 0 = unknown */
	struct kind_stats stats[EV_NKINDS];
	struct kind_stats prev[EV_NKINDS];	/* stats at the last -i report */
	uint64_t filtered;	/* events under --min-size */
	uint64_t unknown_frees;	/* frees of blocks allocated before tracing */
	struct vmstat vm_start, vm_end;
	int exited;		/* 1 = exited, status valid */
	int status;		/* wait status of the leader */
	int detached;		/* left running at detach */
	struct proc_modules *modules;	/* executable mappings, for stacks */
	struct unwinder *unwinder;	/* created at the first stack */
	struct live_table *live;	/* live allocations (live.c) */
	struct map_table *maps;		/* held brk/mmap ranges (maptrack.c) */
	/* alloc.c: breakpoint probes (see alloc.h) */
	struct alloc_space *alloc;	/* its address space's, or NULL */
	struct alloc_space *fork_src;	/* fork child: the parent's, until cleaned */
	int vfork_child;		/* shares its parent's space until exec */
	int unfollowed;		/* -p without -f: detach once it is clean */
	int ptrace_syscalls;	/* PTRACE_SYSCALL for it: its seccomp filters
				   forbid the probes' scratch page (attach.c) */
	struct proc *next;	/* in creation order */
};

/* What a thread's next syscall stop means. */
enum sc_state {
	SC_IDLE,		/* no memory syscall in progress */
	SC_AWAIT_ENTRY,		/* seccomp stop seen, entry stop next (Linux < 4.8) */
	SC_AWAIT_EXIT,		/* entry seen, exit stop next */
};

struct thread {
	pid_t tid;
	struct proc *proc;
	unsigned flags;
	char comm[16];
	enum sc_state sc;
	/* The memory syscall in progress, between its entry and exit. */
	const struct syscall_def *sc_def;
	int sc_abi;
	uint64_t sc_args[6];
	uint64_t sc_old_brk;
	/* alloc.c */
	int pending_sig;	/* detach: the signal to pass on */
	struct alloc_thread *alloc;	/* probed calls awaiting their return */
};

/* struct thread flags */
#define T_HELD		0x01	/* first stop seen before its parent's event */
#define T_STOPPED	0x02	/* in a ptrace-stop we have not resumed */
#define T_LISTENING	0x04	/* group-stopped, PTRACE_LISTEN issued */
#define T_STARTED	0x08	/* initial stop consumed */
#define T_SC_KNOWN	0x10	/* entry/exit parity known (ptrace mode) */
#define T_IN_SC		0x20	/* ptrace mode: between entry and exit */
#define T_DETACHING	0x40	/* interrupted for detach */
#define T_PARKED	0x80	/* kept stopped: arming probes, or detach */
#define T_GOOD_STOP	0x100	/* parked at a signal or PTRACE_EVENT_STOP */
#define T_VFORK_WAIT	0x200	/* resumed from a vfork event: in vfork */

/* A memory syscall memtap knows, in one ABI (syscall_table.c). */
enum sc_id {
	SC_BRK,
	SC_MMAP,		/* offset in bytes */
	SC_MMAP2,		/* i386: offset in pages */
	SC_OLD_MMAP,		/* i386: arguments in a struct in memory */
	SC_MUNMAP,
	SC_MREMAP,
	SC_MPROTECT,		/* no event: watched for code mappings only */
};

struct syscall_def {
	enum abi abi;
	long nr;		/* number in that ABI (x32: with the x32 bit) */
	enum sc_id id;
	enum event_kind kind;	/* EV_NKINDS: makes no event */
	const char *name;
};

/* syscall_table.c */
extern const struct syscall_def syscall_defs[];
extern const size_t syscall_ndefs;
const struct syscall_def *syscall_lookup(enum abi abi, long nr);

/* seccomp.c */
int seccomp_filter_available(void);
/*
 * In the child: install the filter for the kinds in events, plus the
 * calls that map code (mmap and mprotect with PROT_EXEC) whatever
 * events says; -1 + errno.
 */
int seccomp_filter_install(unsigned events);
/* In memtap: the filter the children get is memtap's own (sandbox.h). */
void seccomp_filter_note_own(unsigned events);

/* syscalls.c: from stops to events */
void syscall_enter(struct thread *tcp, const arch_regs_t *regs, enum abi abi,
		   const struct syscall_def *def);
void syscall_exit(struct thread *tcp, const arch_regs_t *regs);
/*
 * PTRACE_SYSCALL mode, at a syscall-entry stop of def: is the call
 * wanted, for an event of events_to_trace() or as a mapping of code?
 */
int syscall_wanted(const struct syscall_def *def, const arch_regs_t *regs, enum abi abi);
/*
 * Fill kind, abi, call, args, ret, failed, size, addr, old_brk and
 * map_kind of ev for syscall def with arguments args and the kernel's
 * result ret (brk: the new break; others: the value or -errno); old_brk
 * is the break before the call (0 = unknown).  The rest of ev is the
 * caller's.
 */
void syscall_fill_event(struct event *ev, const struct syscall_def *def, int abi,
			const uint64_t args[6], int64_t ret, uint64_t old_brk);

/* procfs.c: /proc/PID/status, stat, comm, maps and auxv */
#include "linux/procfs.h"

/*
 * stats.c: the event sink.  event_emit() is called at the stop where
 * the event happened, with the registers to unwind from (the thread's,
 * or for an allocator's return the caller's pc and sp); it counts the
 * event and takes what it needs of the stack (one process_vm_readv).
 * The tracer resumes the thread, then calls events_flush(), which
 * unwinds the copies, aggregates and prints: the target never waits for
 * unwinding.
 */
void event_emit(struct thread *tcp, struct event *ev, const arch_regs_t *regs);
/*
 * The events to stop at: -e's, and with --leaks the calls that give
 * memory back of the families chosen, so that what is still held at
 * the end is known.
 */
unsigned events_to_trace(void);
void events_flush(void);
extern int recording;		/* 0 after -d expired in launch mode */

/* report.c */
void report_trace_header(void);
void report_trace_event(const struct event *ev, uint32_t stack);

/*
 * tracer.c: call after writing to f, the output (or --trace's stderr);
 * path names it, NULL for out's name.  When a write to f failed (EPIPE:
 * the reader is gone; ENOSPC...): say so once, stop recording and end
 * the session, detaching in attach mode (launch mode: the command runs
 * on, unrecorded); memtap's exit status is then 1.  After tracing it
 * exits at once.  Returns 0, or -1 when the output is gone.
 */
int output_check(FILE *f, const char *path);
/* The same for a file already closed: its fclose() failed with err. */
int output_closed(const char *path, int err);

/* "exited with status 0", "killed by signal 9 (SIGKILL)", ... */
void proc_status_text(const struct proc *p, char *buf, size_t size);
/* The last report (at the end, or at -d in launch mode). */
void report_final(void);
/* One -i report (n from 1); last: the one at the end. */
void report_write_interval(unsigned n, int last);
/* A short "leaf < caller < ..." text of an aggregate's stack. */
struct agg;
void report_stack_brief(const struct agg *a, char *buf, size_t size);

/*
 * timers.c: -d, -i and the status line.  timers_start() before tracing;
 * timers_armed() once every probe is in: -d and -i count from there;
 * timers_next_ns() is when timers_serve() is due next (now_ns() clock,
 * 0 = never); timers_serve() returns 1, once, when the -d time is over.
 */
#include <signal.h>
extern volatile sig_atomic_t timer_tick;	/* unused: SIGALRM is not armed */
void timers_start(void);
void timers_armed(void);
uint64_t timers_next_ns(void);
void timers_stop(void);
int timers_serve(void);
void interval_report(int last);
void status_clear(void);

/* profile-build.c: the report model from the aggregates, at report time */
struct profile;
void profile_build(struct profile *prof);
/*
 * --leaks: the event name of held memory, "malloc", or "malloc
 * (inherited)" for what a fork child still holds of its parent's blocks
 * and ranges.  Static storage.
 */
#define HELD_INHERITED_SUFFIX " (inherited)"
const char *held_event_name(unsigned kind, int inherited);
/* The last component of a path ("libc.so.6"), or the path itself. */
const char *path_base_name(const char *path);

/* stats.c: per-process stack state */
struct stack_table *stack_table(void);
void stats_proc_exec(struct proc *p);
void stats_proc_fork(struct proc *child, const struct proc *parent);
void stats_release(void);
void stats_print_costs(void);	/* -v */

/* tracer.c */
struct proc *proc_list(void);

/* Stop counts for the report and the I/O test. */
struct stop_counts {
	uint64_t total, seccomp, syscall, signal, event, group, breakpoint;
	uint64_t code;		/* syscalls stopped at for a code mapping only */
};
extern struct stop_counts stops;
extern const char *syscall_source;	/* "seccomp", "ptrace" or "breakpoints" */

#endif /* MEMTAP_H */

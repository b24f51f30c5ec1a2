/*
 * memtap.h - the tracer's shared state: traced processes and threads,
 * and the functions that connect the source files.
 *
 * Ownership: the tracer owns every struct proc and struct thread (in
 * its table, procs.h).  A proc outlives its threads so that the report can speak of
 * processes that exited; threads are freed when they die or detach.
 * The central per-thread variable is always named tcp.
 */
#ifndef MEMTAP_H
#define MEMTAP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "record/event.h"
#include "record/report.h"
#include "record/sink.h"
#include "util/clock.h"
#include "util/outfile.h"

struct proc {
	pid_t pid;
	struct sink_proc *rec;	/* the sink's: comm, ppid, figures, modules */
	int nthreads;		/* live traced threads */
	uint64_t brk;		/* current break, 0 = unknown */
	/* alloc.c: breakpoint probes (see alloc.h) */
	struct alloc_space *alloc;	/* its address space's, or NULL */
	struct alloc_space *fork_src;	/* fork child: the parent's, until cleaned */
	int vfork_child;		/* shares its parent's space until exec */
	int unfollowed;		/* -p without -f: detach once it is clean */
	int ptrace_syscalls;	/* PTRACE_SYSCALL for it, why (sc-mech.h): its
				   seccomp filters forbid the probes' scratch
				   page (attach.c), or it has no wrappers */
	int sc_missed;		/* --syscalls=breakpoints, no wrappers: its
				   syscalls are not recorded (sc-mech.c) */
	int own_filter_only;	/* memtap's launch filter is its one filter:
				   none added since (syscalls.c) */
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
	const struct arch_syscall *sc_def;
	int sc_abi;
	uint64_t sc_args[6];
	uint64_t sc_old_brk;
	int64_t sc_weight;	/* mprotect, madvise: bytes, from /proc at entry */
	int64_t sc_data, sc_resident;	/* for the account (event.h), at entry */
	/* MAP_FIXED, MREMAP_FIXED: bytes mapped at the target, private writable ones */
	uint64_t sc_replaced, sc_replaced_data;
	/* alloc.c */
	int pending_sig;	/* detach: the signal to pass on */
	struct alloc_thread *alloc;	/* probed calls awaiting their return */
	struct fault_thread *faults;	/* faults.c: its perf events, or NULL */
	/* loop.c: when memtap learnt of its stop (now_ns()), 0: not stopped
	   by memtap; what the stop was (stop_kind_names[]) */
	uint64_t stop_ns;
	int stop_kind;
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
#define T_SC_GUESS	0x400	/* sc set before the order of stops was known */
#define T_NEW		0x800	/* a thread made by a clone seen: its first stop is its start */
#define T_EXITED	0x1000	/* past its PTRACE_EVENT_EXIT: runs no code of the process
				   again, never stops again (a leader whose other threads
				   live stays a zombie until they exit) */

/* The event kind of a memory syscall: EV_NKINDS for one that makes no event. */
static inline enum event_kind syscall_kind(const struct arch_syscall *def)
{
	switch (def->id) {
	case SC_BRK: return EV_BRK;
	case SC_MMAP: case SC_MMAP2: case SC_OLD_MMAP: return EV_MMAP;
	case SC_MUNMAP: return EV_MUNMAP;
	case SC_MREMAP: return EV_MREMAP;
	case SC_MPROTECT: return EV_MPROTECT;
	case SC_MADVISE: return EV_MADVISE;
	default: return EV_NKINDS;	/* execve, seccomp, prctl */
	}
}

/*
 * syscalls.c: do a call's arguments make it an event of its kind?
 * mprotect: PROT_WRITE, or PROT_NONE; madvise: MADV_DONTNEED, MADV_FREE,
 * MADV_REMOVE; the others: always.  The seccomp filter checks the same
 * (seccomp.c).
 */
int syscall_args_relevant(const struct arch_syscall *def, const uint64_t args[6]);

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
/*
 * The filter of a process whose C library wrappers are detoured: the
 * launch filter for events, except that a native-ABI mmap without
 * PROT_EXEC, munmap, mremap or brk whose seccomp_data.instruction_pointer
 * is one of ips[] (the address after a detoured wrapper's syscall
 * instruction, where the thread runs it: in the library, or in the
 * stubs' copy of the instructions the detour displaced) is allowed, not
 * stopped: the wrapper's detour recorded it.  Any other call of those,
 * a raw syscall(2), Go's, x32's or i386's, stops as in the launch
 * filter.  Into f, room for SECCOMP_FILTER_MAX: its length; 0 when nips
 * is 0 or above SECCOMP_WRAPPER_IPS_MAX.  Nothing installs it yet.
 */
struct sock_filter;
#define SECCOMP_FILTER_MAX 256
#define SECCOMP_WRAPPER_IPS_MAX 16
size_t seccomp_filter_wrappers(struct sock_filter *f, unsigned events, const uint64_t *ips,
			       size_t nips);

/*
 * syscalls.c: the syscall source.  syscalls_init() once: use_seccomp
 * for the command's filter (else PTRACE_SYSCALL stops, where asked);
 * source names the mechanism in the report (syscall_source).
 */
void syscalls_init(int use_seccomp, const char *source);
void syscall_enter(struct thread *tcp, const arch_regs_t *regs, enum abi abi,
		   const struct arch_syscall *def);
void syscall_exit(struct thread *tcp, const arch_regs_t *regs);
/*
 * The two halves of a call of def whose arguments are in tcp->sc_args
 * (tcp->sc_abi, tcp->sc_old_brk set), for syscall stops and for libc's
 * wrappers alike.  syscall_capture(), at entry: what the call will
 * change, read from /proc while it has not run (mprotect's and
 * madvise's weights, the account's parts) into tcp->sc_weight, sc_data
 * and sc_resident.  syscall_complete(), at the return with the kernel's
 * result ret: 1 with ev filled for the sink (and the break noted), or
 * 0 when the call is no event of a selected kind.
 */
void syscall_capture(struct thread *tcp, const struct arch_syscall *def);
/* Does syscall_capture() read anything for a call of def (of a selected kind)? */
int syscall_reads_at_entry(const struct arch_syscall *def);
int syscall_complete(struct thread *tcp, const struct arch_syscall *def, int64_t ret,
		     struct event *ev);
/*
 * PTRACE_SYSCALL mode, at a syscall-entry stop of def: is the call
 * wanted, for an event of events_to_trace() or as a mapping of code?
 */
int syscall_wanted(const struct arch_syscall *def, const arch_regs_t *regs, enum abi abi);
/*
 * Fill kind, abi, call, args, ret, failed, size, addr, old_brk and
 * map_kind of ev for syscall def with arguments args and the kernel's
 * result ret (brk: the new break; others: the value or -errno); old_brk
 * is the break before the call (0 = unknown).  The rest of ev is the
 * caller's.
 */
void syscall_fill_event(struct event *ev, const struct arch_syscall *def, int abi,
			const uint64_t args[6], int64_t ret, uint64_t old_brk);

/* procfs.c: /proc/PID/status, stat, comm, maps and auxv */
#include "linux/procfs.h"

/* probes.c's name for sink_events_to_trace(). */
#define events_to_trace() sink_events_to_trace()

/*
 * timers.c: -d, -i, --at-peak and the status line.  timers_start() before tracing
 * (cfg is kept);
 * timers_armed() once every probe is in: -d and -i count from there;
 * timers_next_ns() is when timers_serve() is due next (now_ns() clock,
 * 0 = never); timers_serve() returns 1, once, when the -d time is over.
 */
struct trace_config;
void timers_start(const struct trace_config *cfg);
void timers_armed(void);
uint64_t timers_next_ns(void);
void timers_stop(void);
int timers_serve(void);
void interval_report(int last);
void status_clear(void);
/*
 * The last report: -i's last one, or the report (at the end, or at -d);
 * then --at-peak's file, when a peak past the step is not written yet.
 */
void timers_final_report(void);

/* Stop counts for the report and the I/O test (record/report.h). */
extern struct stop_counts stops;
extern const char *syscall_source;	/* "seccomp", "ptrace" or "breakpoints" */

#endif /* MEMTAP_H */

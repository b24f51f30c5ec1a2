/*
 * sink-proc.h - the sink's record of each traced process (sink-proc.c):
 * struct sink_proc, their list in creation order, what a fork, a new
 * image or the stubs change of one, and a process forgotten.
 *
 * The sink owns one struct sink_proc per process it is told of
 * (sink_proc_new()), in creation order (sink_procs()), until
 * sink_release(): the reports speak of processes that exited; a
 * long-running tracer forgets one that exited once it was reported
 * (sink_proc_forget()).  The tracer keeps its own struct proc, which
 * points at its sink_proc and writes there what the report shows
 * (comm, execs, exit status, the /proc figures).
 *
 * What is kept per process beside the figures here (the live blocks of
 * live.h, the held ranges of maptrack.h, the timeline's changes) is kept
 * by stores that the sink adds at sink_init() (sink_proc_store_add()):
 * a fork, an exec and a process forgotten reach them through their
 * hooks, and this file names none of them.
 */
#ifndef MEMTAP_SINK_PROC_H
#define MEMTAP_SINK_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "linux/procfs.h"
#include "record/event.h"
#include "stack/modules.h"

/* Per event kind counters of one process. */
struct kind_stats {
	uint64_t calls;		/* recorded calls, failed ones included */
	uint64_t failed;
	uint64_t acquired;	/* sum of positive weights */
	uint64_t released;	/* sum of negative weights, as a positive number */
	uint64_t anon, file;	/* mmap: acquired bytes by mapping kind */
	/* faults: samples taken, lost (ring full) and throttle records;
	   calls are the exact count, the samples scaled to it */
	uint64_t samples, lost, throttles;
	/* faults: of calls and acquired, those without a sample of their
	   own put on the stack sampled next to them (sink_add_neighbour()) */
	uint64_t neighbour, neighbour_bytes;
	int64_t data;		/* VmData change (event.h's data) */
	uint64_t resident;	/* resident bytes given back */
	/*
	 * Allocator kinds probed by stubs, which count every call in the
	 * target (sink_add_counted()): their counts, and the part of calls
	 * and acquired above that came from their records (event.h:
	 * counted), with the bytes the failed ones among those asked.
	 * sink_kind_totals() puts the counts in place of the records'.
	 */
	uint64_t counted_calls, counted_bytes;
	uint64_t ring_calls, ring_acquired, ring_failed_asked;
	/* of counted_calls, the frees that the sink dropped, the
	   allocator's own (refrees, and unknown frees from_start) */
	uint64_t counted_refrees;
	int counted;		/* EV_COUNTED_* of every counter added */
	int bytes_uncounted;	/* some counter had no bytes (xallocx, --probe) */
};

struct sink_proc {
	pid_t pid;
	pid_t ppid;		/* traced parent, 0 for the roots */
	char comm[16];		/* as of the last exec */
	int execs;		/* successful execs seen */
	int exited;		/* 1 = exited, status valid */
	int status;		/* wait status of the leader */
	int detached;		/* left running at detach */
	struct kind_stats stats[EV_NKINDS];
	struct kind_stats prev[EV_NKINDS];	/* stats at the last -i report */
	uint64_t filtered;	/* events under --min-size */
	/*
	 * frees of blocks no probed call handed out: allocated before
	 * tracing, or, from_start, by the allocator itself (glibc's thread
	 * cache, freed at a thread's exit), then not counted as calls
	 */
	uint64_t unknown_frees;
	/*
	 * Its allocator probes went in before its image's first allocator
	 * call (launched or exec'd, armed before the libraries'
	 * constructors; a fork child of such a process): every block a
	 * probed call handed out was seen (sink_proc_from_start()).
	 */
	int from_start;
	/* frees of addresses freed and not handed out since: the C
	   library's own (freed.h), not counted as calls */
	uint64_t refrees;
	struct vmstat vm_start, vm_end;
	/* memtap's own mappings left in the process (stubs, ring): VmSize, VmData */
	uint64_t left_size, left_data;
	struct proc_modules *modules;	/* executable mappings, for stacks */
	struct unwinder *unwinder;	/* created at the first stack */
	uint64_t jit_rewrites;		/* jit_names_rewrites() last seen */
	uint64_t code_unsure;		/* stacks cut: their run-time code rewritten
					   around the call (event.h, EV_CODE_UNSURE) */
	struct live_table *live;	/* live allocations (live.c) */
	struct freed_set *freed;	/* freed addresses (freed.c) */
	struct map_table *maps;		/* held brk/mmap ranges (maptrack.c) */
	int unfollowed;		/* fork child not followed: gets no copy */
	int inherits;		/* has a copy of its parent's blocks and ranges */
	size_t queued;		/* its events queued by sink_emit(), not flushed yet */
	uint64_t orders;	/* events told to sink_emit(): the last one's order */
	struct sink_proc *next;	/* in creation order */
};

/* A new process (its comm read from /proc); owned by the sink. */
struct sink_proc *sink_proc_new(pid_t pid, pid_t ppid);
/*
 * The first process, in creation order; p->next the one after p, NULL
 * after the last.  Valid until sink_proc_forget() of that process.
 */
struct sink_proc *sink_procs(void);
/*
 * A fork child: its copy of the parent's held ranges and blocks, marked
 * inherited, so that --leaks counts them once, as the parent's, and
 * shows apart what the child still holds of them at its end.  An
 * unfollowed child gets none: nothing it frees would be seen.
 */
void sink_proc_fork(struct sink_proc *child, const struct sink_proc *parent);
/*
 * The process has stubs whose frames fn knows at [start, start + len)
 * (stack/modules.h: its unwinder steps over them) until its next exec;
 * _copy: a fork or vfork child has its parent's.
 */
void sink_proc_add_stubs(struct sink_proc *p, uint64_t start, uint64_t len, stub_frame_fn fn);
void sink_proc_copy_stubs(struct sink_proc *child, struct sink_proc *parent);
/* A new image: held memory gone, the modules and unwinder start again. */
void sink_proc_exec(struct sink_proc *sp);
/*
 * sp's allocator probes are in, before its image's first allocator
 * call: from_start set until its next exec, and inherited by the fork
 * children that get a copy of its blocks (sink_proc_fork()).  Not for a
 * process attached while it ran (its blocks of before are unknown).
 */
void sink_proc_from_start(struct sink_proc *sp);
/*
 * Free everything of sp, a process that exited and whose last interval
 * was reported: what the stores keep of it (its live blocks, held
 * ranges, its aggregates' changes in the timeline), its aggregates (the
 * later aggregates' indexes moving down), modules, unwinder, the names
 * of its run-time code (jitnames.h; unless a process of the list has
 * its pid now), and sp itself, taken out of sink_procs().  Its stacks
 * stay in the stack table (other processes may share them; the table
 * is bounded by max_stacks).  After sink_flush(), with no event of sp
 * queued since; no one may keep sp (the tracer's struct proc is gone),
 * nor an index of aggregate_entries() across the call.  A plain run
 * never calls it: its reports show every process that exited.
 */
void sink_proc_forget(struct sink_proc *sp);
/*
 * An -i interval starts: every aggregate's mark is set
 * (aggregate_mark()), and every process's figures so far (stats) become
 * the base its next interval's are counted from (prev).
 */
void sink_proc_mark_interval(void);

/*
 * A store of something per process, told by the sink what happens to
 * the processes.  A hook may be NULL.  The hooks are called in the
 * order the stores were added.
 */
struct sink_proc_store {
	/* sink_proc_fork() of a followed child: the child's copy of the
	   parent's part, marked inherited */
	void (*fork)(struct sink_proc *child, const struct sink_proc *parent);
	/* sink_proc_exec(): what p held went with its address space */
	void (*exec)(struct sink_proc *p);
	/* sink_proc_forget(): p's part freed, what it held given back (to
	   aggregate_held()); before p's aggregates are taken out */
	void (*forget)(struct sink_proc *p);
	/* sink_release(): every process's part freed */
	void (*release)(void);
};
/*
 * Add a store (static storage, kept); one already added is not added
 * again.  At most SINK_PROC_MAX_STORES.
 */
#define SINK_PROC_MAX_STORES 8
void sink_proc_store_add(const struct sink_proc_store *s);

#endif /* MEMTAP_SINK_PROC_H */

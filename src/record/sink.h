/*
 * sink.h - the event sink (sink.c): where the sources' events go.  Its
 * record of every traced process, struct sink_proc and their list, is
 * sink-proc.h's.
 *
 * At the stop where an event happened (the target still stopped) a
 * source asks sink_wants(); for SINK_RECORD with sink_stacks_wanted()
 * it copies the top of the stack (stack/snapshot) and fixes it (return
 * addresses of open probed calls: bp_fix_stack()); then it calls
 * sink_emit(), which counts nothing yet: it queues the event, and looks
 * the pc up in the process's modules while the code is still mapped.
 * After resuming the threads the tracer calls sink_flush(), which
 * unwinds the copies, interns the stacks, counts the events, adds them
 * to the aggregates, keeps the held ranges and live blocks and prints
 * --trace lines: the target waits for the copy, never for unwinding.
 *
 * The sink is the centre of record/.  The tables it writes (the
 * aggregates, live blocks, held ranges) are below it; what reads it
 * (report.c, profile-build.c) is above it and changes nothing of it but
 * through its functions, and the sink includes none of it: the --trace
 * lines are report.c's, given to the sink as a function
 * (sink_set_trace()).
 */
#ifndef MEMTAP_SINK_H
#define MEMTAP_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/event.h"
#include "record/sink-proc.h"

struct stack_snapshot;
struct stack_table;

/* What the sink records: the command line's part, set once. */
struct sink_config {
	unsigned events;	/* EV_BIT() set of -e */
	uint64_t min_size;	/* --min-size: |weight| below this is dropped */
	uint64_t max_size;	/* --max-size, 0 = no limit */
	int leaks;		/* --leaks: also the calls that give memory back */
	int trace;		/* --trace: a line per event (sink_set_trace()) */
	int unwind;		/* enum unwind_kind of --unwind */
	int max_depth;		/* --max-depth */
	size_t stack_size;	/* --stack-size: bytes of stack copied */
	uint32_t max_stacks;	/* --max-stacks: distinct stacks kept, the new
				   ones beyond counted on [other] (stacks.h);
				   0: STACK_TABLE_DEFAULT_STACKS */
	uint64_t sample_mean;	/* --sample: allocator calls sampled at this
				   mean interval (at the start); 0: every call */
};

/* Before any other call (before the probes are chosen). */
void sink_init(const struct sink_config *c);
const struct sink_config *sink_config(void);

/*
 * The events to stop at: -e's, and with --leaks the calls that give
 * memory back of the families chosen, so that what is still held at
 * the end is known.
 */
unsigned sink_events_to_trace(void);
/*
 * Is what each stack holds at the end known?  It is when every call
 * that gives memory back is traced for the families selected: always
 * with --leaks, and when -e selected them anyway (the default
 * syscalls, -e alloc); never while allocator calls are sampled (their
 * frees are only counted in the target).
 */
int sink_held_known(void);

/* Does the sink want ev, of sp?  0: no; see sink_emit(). */
#define SINK_HELD 1		/* only its effect on held memory counts */
#define SINK_RECORD 2		/* recorded: with a stack if stacks are on */
int sink_wants(const struct sink_proc *sp, const struct event *ev);
int sink_stacks_wanted(void);	/* --unwind is not none */
size_t sink_stack_size(void);	/* bytes of stack to copy */
/*
 * snap, just taken from a thread of sp that is still stopped, holds all
 * the bytes asked for: grow it to the bytes its walk will read, up to
 * STACK_SNAPSHOT_GROW times sink_stack_size() (stack_snapshot_extend()).
 * Before anything else reads it (bp_fix_stack() on the part added too).
 */
void sink_stack_extend(struct sink_proc *sp, struct stack_snapshot *snap);
/*
 * sp made memory executable (mmap, mprotect with PROT_EXEC): code may
 * have been written where there was code, and the unwinder's rules of
 * run-time code are made again (unwinder_code_changed()).
 */
void sink_proc_code_written(struct sink_proc *sp);

/*
 * At the stop of ev (any event, wanted or not: mappings of code matter
 * to the modules), the thread still stopped.  snap is the stack taken
 * for a SINK_RECORD event, or NULL: the sink takes its buffer and
 * leaves snap another one to take the next snapshot into (no copy).
 */
void sink_emit(struct sink_proc *sp, const struct event *ev, struct stack_snapshot *snap);
/*
 * The order sp's next event will have: sink_emit() numbers the events
 * of each process from 1, every one it is told of (an event with an
 * order of its own keeps it: event.h).  A source that reports at its
 * return a call that freed a block inside (realloc) takes it at the
 * call's entry, into the event's `entered`.
 */
uint64_t sink_next_order(const struct sink_proc *sp);
/* After resuming: unwind, count, aggregate what sink_emit() queued. */
void sink_flush(void);
/*
 * --trace: fn is called by sink_flush() for each event it records, with
 * the event's stack (0: none), in the order of the events; NULL: none.
 * report_init() gives report_trace_event().
 */
typedef void (*sink_trace_fn)(const struct event *ev, uint32_t stack);
void sink_set_trace(sink_trace_fn fn);
/*
 * The stack of a walk that ended (no copy to unwind): n return addresses
 * ret below the function leaf (0: none), interned now as sink_flush()
 * would intern an event's with them.  For a source that sees the same
 * walk again and again (trace/ring.c's chains): it may give the id as
 * the next events' stack (event.h) while sink_stack_current(p, *stamp)
 * says the code mappings that resolved it are unchanged.  0: keep no id
 * (a frame in no known module, no stacks, the mappings being re-read).
 */
uint32_t sink_walk_stack(struct sink_proc *p, uint64_t leaf, const uint64_t *ret, int n,
			 uint64_t *stamp);
int sink_stack_current(const struct sink_proc *p, uint64_t stamp);

/* A recorded event that asked for its stack (event.h: stack_tag). */
struct sink_stacked {
	struct event ev;	/* its comm not kept (NULL) */
	uint32_t stack;
};
/*
 * The events that asked for their stack, recorded by sink_flush() since
 * the last call, in their order: *n of them, the sink's until the next
 * sink_flush().  The list is emptied.
 */
const struct sink_stacked *sink_take_stacked(size_t *n);

/*
 * Weight that no event carried: calls (faults counted whose samples
 * were lost or not taken, --fault-period) and the bytes they moved,
 * added to kind's totals of sp and to the aggregate of stack, without
 * a --trace line.  Nothing while not recording.
 */
void sink_add_weight(struct sink_proc *sp, enum event_kind kind, uint32_t stack,
		     uint64_t calls, uint64_t bytes);
/*
 * The stubs' counters of an allocator kind in sp: calls and the bytes
 * they asked, since the last call (bytes_counted: EV_COUNTED_BYTES when
 * the bytes are the kind's, else 0).  Nothing while not recording.
 */
void sink_add_counted(struct sink_proc *sp, enum event_kind kind, uint64_t calls,
		      uint64_t bytes, int bytes_counted);
/*
 * A kind's calls and acquired bytes to report, from ks less base (NULL:
 * from the start): the stubs' counts where they have them, in place of
 * their records' (sampled: estimates).  Returns EV_COUNTED_* of what
 * came from the counts; 0 when all is the records'.
 */
int sink_kind_totals(const struct kind_stats *ks, const struct kind_stats *base,
		     uint64_t *calls, uint64_t *acquired);

/*
 * Fault kinds: of the weight given with sink_add_weight(), the faults
 * and bytes that had no sample of their own and went on the stack
 * sampled next to them (their samples lost), for the report.  Nothing
 * while not recording.
 */
void sink_add_neighbour(struct sink_proc *sp, enum event_kind kind, uint64_t faults,
			uint64_t bytes);

/* Fault kinds: samples taken, lost and throttle records, for the report. */
void sink_add_samples(struct sink_proc *sp, enum event_kind kind, uint64_t samples,
		      uint64_t lost, uint64_t throttles);

/*
 * Recording: on from the start; off after -d in launch mode, and once
 * the output is gone (util/outfile.h).
 */
void sink_set_recording(int on);
int sink_recording(void);

/* The stacks of the run (NULL before the first). */
struct stack_table *sink_stack_table(void);
/*
 * The stack table holds max_stacks stacks: a stack not met before is
 * counted on [other].  A source's cache of walks keyed by new stacks
 * (trace/ring.c's chains) learns none then: it would only grow.
 */
int sink_stacks_full(void);

/* -v: what the stack machinery cost, on stderr; code_stops: syscalls
   stopped at for a mapping of code only. */
void sink_print_costs(uint64_t code_stops);
/* Free the stacks and every process's tables (the processes stay). */
void sink_release(void);

#endif /* MEMTAP_SINK_H */

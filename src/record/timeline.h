/*
 * timeline.h - the intervals of an -i run (timeline.c), kept for the
 * recording and the leak suspects: at each interval's end, per stack
 * aggregate (aggregate.h) the calls and bytes acquired and released in
 * it and, when held memory is known (--leaks), what it holds; per
 * process VmRSS, VmSize and VmData; the captured total.
 *
 * Only the entries that changed are kept, as changes against the
 * previous interval: tracer memory grows with the intervals and the
 * stacks active in each, never with the events.  With a cap on the
 * intervals (timeline_set_max()) the oldest ones are dropped, what
 * stacks held at the end of a dropped one carried into the oldest kept:
 * the recording, the leak suspects and the HTML page see the window
 * kept.  The store is timeline.c's until timeline_release().
 */
#ifndef MEMTAP_TIMELINE_H
#define MEMTAP_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct sink_proc;
struct sink_proc_store;

/*
 * The end of an interval at end_ns (since the start), before
 * aggregate_mark(): what each aggregate did since the mark.  held: what
 * stacks hold is known and kept.
 */
void timeline_interval_end(uint64_t end_ns, int held);
/* Keep at most max intervals, the last ones (0: all, the default). */
void timeline_set_max(size_t max);
/*
 * p's aggregates are about to be taken out (aggregate_forget()): their
 * changes go, the others' aggregate indexes are renumbered as
 * aggregate_forget() will.
 */
void timeline_forget(const struct sink_proc *p);
/* timeline_forget() as a store of the sink's (sink-proc.h), told of
   every process forgotten after its live blocks and held ranges */
extern const struct sink_proc_store timeline_store;
/* Intervals kept so far. */
size_t timeline_count(void);
/*
 * Copy the intervals into prof (its intervals, nintervals,
 * intervals_held), the aggregate of index i being sample agg_sample[i]
 * of prof (nagg of them; (size_t)-1: none, its changes left out).
 */
void timeline_to_profile(struct profile *prof, const size_t *agg_sample, size_t nagg);
/* Tracer bytes the store takes (-v). */
size_t timeline_memory(void);
void timeline_release(void);

#endif /* MEMTAP_TIMELINE_H */

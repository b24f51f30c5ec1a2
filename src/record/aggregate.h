/*
 * aggregate.h - byte-weighted stack aggregates: per (process, event
 * kind, stack id) the calls, failed calls, bytes acquired and released.
 *
 * The table is a hash map owned by aggregate.c; entries live until
 * aggregate_clear(), for the whole run, or until their process is
 * forgotten (aggregate_forget()): -i intervals are told apart by
 * a mark (aggregate_mark(): the figures at the end of the previous
 * interval).  Iteration order is insertion order, and an entry's index
 * in it changes only when aggregate_forget() takes out entries before
 * it (it moves down by their number), and at aggregate_clear().
 */
#ifndef MEMTAP_AGGREGATE_H
#define MEMTAP_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "record/event.h"

struct sink_proc;

struct agg {
	struct sink_proc *proc;
	enum event_kind kind;
	uint32_t stack;		/* stack table id, 0 = no stack */
	uint64_t calls, failed;
	uint64_t acquired, released;
	/* at the last aggregate_mark(): the interval's are the differences */
	uint64_t mark_calls, mark_failed, mark_acquired, mark_released;
	/*
	 * Bytes its stack holds now (live blocks, held ranges: the
	 * process's own, not what a fork child inherited), kept by
	 * aggregate_held() at every change; at the peak of its family
	 * (aggregate_held_at_peak()): peak_held, valid when peak_seq is
	 * its family's current peak sequence number.
	 */
	uint64_t held, peak_held, peak_seq;
	uint64_t held_objects;	/* the blocks or ranges of held */
};

/* Add one event, with the bytes it took and gave back, to its aggregate. */
void aggregate_add(struct sink_proc *p, enum event_kind kind, uint32_t stack, int failed,
		   uint64_t acquired, uint64_t released);

/* Add calls without a failure and the bytes they took, at once. */
void aggregate_add_calls(struct sink_proc *p, enum event_kind kind, uint32_t stack,
			 uint64_t calls, uint64_t acquired);

/* The aggregates, in insertion order; valid until the next add. */
struct agg *aggregate_entries(size_t *n);

/*
 * The index of the entry of (p, kind, stack) in aggregate_entries(),
 * added (all zero) when there is none.
 */
size_t aggregate_index(struct sink_proc *p, enum event_kind kind, uint32_t stack);

/* Every entry's mark set to its figures: the start of an interval. */
void aggregate_mark(void);

void aggregate_clear(void);
/*
 * Take out every entry of p, the others keeping their order (indexes
 * move down: timeline.c's changes are renumbered first, by
 * timeline_forget()).  What p held must be 0 already (live_forget(),
 * maptrack_forget()): the families' totals are not changed.
 */
void aggregate_forget(const struct sink_proc *p);

/*
 * Held memory and its peak.  Two families are told apart: allocator
 * blocks (ev_is_alloc() kinds: the live table) and mappings (brk, mmap,
 * mremap: the held ranges); each has its total over every process and
 * the highest that total reached.
 *
 * aggregate_held() is told of every change of what (p, kind, stack)
 * holds (live.c, maptrack.c), in the order they happen, at O(1): at
 * each new peak of the family a sequence number is taken, and an
 * entry's first change after it saves what it held at the peak
 * (copy-on-write), so that aggregate_held_at_peak() answers for every
 * entry at any later time.  aggregate_set_time() gives the time (since
 * the start) of the event being counted, the time a new peak gets.
 */
enum held_family { HELD_ALLOC, HELD_MAPS, HELD_NFAMILIES };

struct held_peak {
	uint64_t now;		/* held now */
	uint64_t bytes;		/* the highest, 0: never held anything */
	uint64_t time_ns;	/* when (since the start) */
	uint64_t seq;		/* its sequence number */
};

static inline enum held_family held_family_of(enum event_kind kind)
{
	return ev_is_alloc(kind) ? HELD_ALLOC : HELD_MAPS;
}

/* objects: the blocks or ranges that change, +1, -1 or 0 */
void aggregate_held(struct sink_proc *p, enum event_kind kind, uint32_t stack, int64_t delta,
		    int objects);
void aggregate_set_time(uint64_t time_ns);
const struct held_peak *aggregate_peak(enum held_family f);
uint64_t aggregate_held_at_peak(const struct agg *a);

#endif /* MEMTAP_AGGREGATE_H */

/*
 * aggregate.h - byte-weighted stack aggregates: per (process, event
 * kind, stack id) the calls, failed calls, bytes acquired and released.
 *
 * The table is a hash map owned by aggregate.c; entries live until
 * aggregate_clear(), for the whole run: -i intervals are told apart by
 * a mark (aggregate_mark(): the figures at the end of the previous
 * interval).  Iteration order is insertion order, and an entry's index
 * in it never changes until aggregate_clear().
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

#endif /* MEMTAP_AGGREGATE_H */

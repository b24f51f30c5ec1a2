/*
 * aggregate.h - byte-weighted stack aggregates: per (process, event
 * kind, stack id) the calls, failed calls, bytes acquired and released.
 *
 * The table is a hash map owned by aggregate.c; entries live until
 * aggregate_clear() (used between -i intervals).  Iteration order is
 * insertion order.
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
};

/* Add one event, with the bytes it took and gave back, to its aggregate. */
void aggregate_add(struct sink_proc *p, enum event_kind kind, uint32_t stack, int failed,
		   uint64_t acquired, uint64_t released);

/* Add calls without a failure and the bytes they took, at once. */
void aggregate_add_calls(struct sink_proc *p, enum event_kind kind, uint32_t stack,
			 uint64_t calls, uint64_t acquired);

/* The aggregates, in insertion order; valid until the next add. */
struct agg *aggregate_entries(size_t *n);

void aggregate_clear(void);

#endif /* MEMTAP_AGGREGATE_H */

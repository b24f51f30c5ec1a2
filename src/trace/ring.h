/*
 * ring.h - the in-target probes' rings as a source of events (ring.c):
 * one ring per address space with detours (probe/detour.h), drained by
 * the loop without stopping the target.
 *
 * Life cycle: ring_add() once the detours of a space are installed (the
 * source is registered with the loop at the first one); ring_drain() at
 * moments when the memory is about to go (a thread's exit event, exec)
 * and before the entries are restored at detach; ring_remove() when the
 * space is freed (never touches the target).  The set and the process
 * must outlive the ring.
 */
#ifndef MEMTAP_RING_H
#define MEMTAP_RING_H

#include <stdint.h>

#include "trace/memtap.h"

struct detour_set;
struct ring_src;

struct ring_src *ring_add(struct proc *p, struct detour_set *ds);
void ring_remove(struct ring_src *r);

/*
 * Read the committed records now (one lap of the ring at most, so that a
 * target as fast as memtap cannot keep the loop here); events to the
 * sink.  0 or -errno.
 */
int ring_drain(struct ring_src *r);

/* Records lost so far: dropped by the stubs (full ring), skipped here. */
uint64_t ring_lost(const struct ring_src *r);
uint64_t ring_records(const struct ring_src *r);

/* --overhead PERCENT (record/sample.h's budget); 0: the mean stays. */
void ring_set_overhead(double percent);
/* The lowest and highest sampling means in force so far; 0 when none sampled. */
void ring_sample_means(uint64_t *lo, uint64_t *hi);

/*
 * Test hook: while MEMTAP_RING_PAUSE (milliseconds) has not passed since
 * the ring was added, the loop does not drain it (to force a full ring);
 * ring_drain() still does (a thread's exit, detach).
 */

#endif /* MEMTAP_RING_H */

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
struct probe;
struct ring_src;

/* The cookie of a sync point's slot (execve): its records are no event. */
extern char ring_sync_cookie;

/*
 * The cookie of _dl_debug_state's sync point (attach mode, see
 * alloc-detour.h): the library list changes.  Its record holds the
 * ring: the records before it are events (unwound while the library a
 * dlclose takes is still mapped), TAIL stays below it, so that its
 * thread waits in the stub, and the hooks' dl() asks the thread for a
 * stop, where the probes are looked at again; ring_release() lets the
 * ring go on (1: it was held).  A hold that no stop ends goes after
 * RING_HOLD_NS.
 */
extern char ring_dl_cookie;
int ring_release(struct ring_src *r);

/*
 * What the records mean to the probes that made them (alloc-hits.c,
 * alloc.c), handed to ring_add() by alloc-detour.c:
 *   wrapper: a detoured wrapper's record, made by thread tid of p after
 *     the call returned retval, args its arguments at entry: 1 with ev
 *     the event its int3 probe makes at the return, 0 for none;
 *   dl: a record of _dl_debug_state by thread tid of p: 1 if tid was
 *     asked for a stop (the ring stays held until ring_release()), 0.
 */
struct ring_hooks {
	int (*wrapper)(struct proc *p, pid_t tid, const struct probe *pr,
		       const uint64_t args[6], uint64_t retval, struct event *ev);
	int (*dl)(struct proc *p, pid_t tid);
};

/* hooks (not NULL) must outlive the ring. */
struct ring_src *ring_add(struct proc *p, struct detour_set *ds, const struct ring_hooks *hooks);
void ring_remove(struct ring_src *r);

/*
 * Read the committed records now (one lap of the ring at most, so that a
 * target as fast as memtap cannot keep the loop here); events to the
 * sink.  0 or -errno.
 */
int ring_drain(struct ring_src *r);

/*
 * A vfork child shares its parent's memory, its stubs and glibc's cached
 * tid: its records carry the tid of the parent's thread that called
 * vfork (tid), which does not run until the child execs or exits.
 * ring_vfork() (the records until now are drained first as the
 * parent's) makes the records of tid the child's, until
 * ring_vfork_end() (a last drain first).  child must outlive the
 * mapping.
 */
void ring_vfork(struct ring_src *r, pid_t tid, struct proc *child);
void ring_vfork_end(struct ring_src *r, struct proc *child);

/* Records lost so far: dropped by the stubs (full ring), skipped here. */
uint64_t ring_lost(struct ring_src *r);
/* Records read and lost by every ring so far, the removed ones included. */
void ring_totals(uint64_t *records, uint64_t *lost);
/*
 * Records read so far, and (unless NULL) the bytes of stack the full ones
 * carried, and how many were compact (stub-abi.h, DC_COMPACT).
 */
uint64_t ring_records(const struct ring_src *r, uint64_t *copied, uint64_t *compact);

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

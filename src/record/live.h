/*
 * live.h - the live-allocation table: for each traced process, the
 * blocks its allocator handed out and has not taken back yet, with the
 * stack that asked for each.  It gives --leaks (live bytes by stack at
 * the end), the bytes a free() releases, and the allocator line of the
 * account.
 *
 * One open-addressing table per process, 24 bytes an entry, between 3/8
 * and 3/4 full: 32 to 64 bytes of tracer memory per live block.  Times
 * are kept to the millisecond.
 *
 * A call reported at its return that freed a block inside (realloc,
 * reported with the block it hands out) may be reported after another
 * thread got the freed address back from the allocator and its own call
 * was reported: each event has an order among its process's events
 * (record/event.h) and such a call carries the order of the first one
 * after its entry.  The block an address held when a new block is
 * added there is set aside with the order of the new one (a few hundred
 * at most per process, the oldest forgotten first), no longer held:
 * the call that entered before that order and frees the address takes
 * it (live_release()), not the new block.  Tables are
 * owned by live.c and found through struct sink_proc's live pointer;
 * live_release_all() frees them.  The sink writes them (sink_flush())
 * and tells them of forks, execs and processes forgotten through
 * live_store (sink-proc.h); the reports read them.
 */
#ifndef MEMTAP_LIVE_H
#define MEMTAP_LIVE_H

#include <stddef.h>
#include <stdint.h>

struct sink_proc;
struct sink_proc_store;

struct live_block {
	uint64_t addr;		/* 0 = empty slot */
	uint64_t size;
	uint64_t time_ns;	/* when it was allocated (since start) */
	uint32_t stack;
	uint16_t kind;		/* enum event_kind of the allocation */
	uint16_t inherited;	/* 1: copied from the parent at fork */
};

/*
 * Record a block of p's own, added by p's event of that order (0: none
 * known); an entry at the same address is replaced, and set aside for
 * live_release() when order is not 0.
 */
void live_add(struct sink_proc *p, uint64_t addr, uint64_t size, uint32_t stack,
	      uint64_t time_ns, uint32_t kind, uint64_t order);
/* Take a block out; 0 and *removed filled, or -1 if unknown. */
int live_remove(struct sink_proc *p, uint64_t addr, struct live_block *removed);
/*
 * The block at addr that a call entered before p's event of order
 * `entered` freed: the one set aside when the address was handed out
 * again at that order or later, of the same kind (event.h: the earliest
 * such), taken out of the blocks set aside; else, or with entered 0,
 * live_remove().  0 and *removed filled, or -1 if unknown.  A block set
 * aside is held no longer: its bytes were given back (aggregate_held())
 * when it was.
 */
int live_release(struct sink_proc *p, uint64_t addr, uint64_t entered,
		 struct live_block *removed);
/* Look a block up without taking it out; 0 or -1. */
int live_find(const struct sink_proc *p, uint64_t addr, struct live_block *found);
/*
 * A fork child starts with a copy of its parent's blocks, marked
 * inherited: they stay the parent's, and what the child still holds of
 * them at its end is reported apart.
 */
void live_copy(struct sink_proc *to, const struct sink_proc *from);
/* exec: the blocks are gone with the address space. */
void live_clear(struct sink_proc *p);
/* live_clear(), and p's table freed. */
void live_forget(struct sink_proc *p);
/* Call fn for each live block of p. */
void live_foreach(const struct sink_proc *p, void (*fn)(const struct live_block *, void *),
		  void *arg);
/* Blocks and bytes of p, the inherited ones included. */
size_t live_count(const struct sink_proc *p);
uint64_t live_bytes(const struct sink_proc *p);
/* Of these, the blocks and bytes inherited at fork. */
size_t live_inherited_count(const struct sink_proc *p);
uint64_t live_inherited_bytes(const struct sink_proc *p);
size_t live_memory(void);	/* tracer bytes used by all tables */
void live_release_all(void);
/* The tables as a store of the sink's: live_copy(), live_clear(), ... */
extern const struct sink_proc_store live_store;

#endif /* MEMTAP_LIVE_H */

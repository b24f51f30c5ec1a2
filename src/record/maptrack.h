/*
 * maptrack.h - the memory a process holds through brk, mmap and mremap,
 * as address ranges tagged with the stack that made them.  It answers
 * "which stacks hold the memory now" (--leaks for syscall events): a
 * munmap or a shrinking brk takes ranges out whatever stack made them.
 *
 * One sorted array of disjoint ranges per process, owned by maptrack.c
 * and found through struct sink_proc's maps pointer; maptrack_release_all()
 * frees them.  The sink writes them (sink_flush()) and tells them of
 * forks, execs and processes forgotten through maptrack_store
 * (sink-proc.h); the reports read them.
 */
#ifndef MEMTAP_MAPTRACK_H
#define MEMTAP_MAPTRACK_H

#include <stddef.h>
#include <stdint.h>

struct sink_proc;
struct sink_proc_store;

struct map_seg {
	uint64_t start, end;
	uint64_t time_ns;	/* when it was made (since start) */
	uint32_t stack;
	uint16_t kind;		/* enum event_kind that made it */
	uint16_t inherited;	/* 1: copied from the parent at fork */
};

/* Take [start, end) out of whatever ranges hold it. */
void maptrack_remove(struct sink_proc *p, uint64_t start, uint64_t end);
/* [start, end) is now held by stack, p's own (replacing what was there). */
void maptrack_add(struct sink_proc *p, uint64_t start, uint64_t end, uint32_t stack,
		  uint64_t time_ns, uint32_t kind);
/*
 * A fork child starts with a copy of its parent's ranges, marked
 * inherited: they stay the parent's, and what the child still holds of
 * them at its end is reported apart.
 */
void maptrack_copy(struct sink_proc *to, const struct sink_proc *from);
void maptrack_clear(struct sink_proc *p);
/* maptrack_clear(), and p's table freed. */
void maptrack_forget(struct sink_proc *p);
void maptrack_foreach(const struct sink_proc *p, void (*fn)(const struct map_seg *, void *),
		      void *arg);
void maptrack_release_all(void);
/* The ranges as a store of the sink's: maptrack_copy(), maptrack_clear(), ... */
extern const struct sink_proc_store maptrack_store;

#endif /* MEMTAP_MAPTRACK_H */

/*
 * freed.h - per traced process, the addresses of the blocks its frees
 * took back that no allocator call has handed out again since: the
 * tell of the allocator's own frees of blocks already freed.
 *
 * glibc's tcache_thread_shutdown(), run when a thread exits, frees once
 * more each chunk the thread's cache kept of the program's frees; such a
 * call reaches the probed free() like the program's.  When every
 * allocator call is seen (--exact, every allocator function followed,
 * no size filter), a free of an address that was freed and not handed
 * out since cannot free a block the program holds: the sink drops it
 * (sink.c), neither a call of the program nor a free of an unknown
 * block (a double free of the program's own, which glibc aborts on,
 * looks the same).
 *
 * The set is bounded: at most FREED_MAX addresses a process, in a
 * table of 8-byte slots at most 3/4 full that does not shrink (16 MiB
 * at the bound; a program that reuses its addresses, as allocators
 * do, stays far below it).  A free past the bound
 * empties the set first (freed_forgotten() counts the addresses so
 * lost); a free again of a forgotten address is then counted as a free
 * of an unknown block, as before.  Owned by freed.c, found through
 * struct sink_proc's freed pointer; the sink writes it and tells it of
 * forks (the child gets a copy), execs and processes forgotten through
 * freed_store (sink-proc.h).
 */
#ifndef MEMTAP_FREED_H
#define MEMTAP_FREED_H

#include <stddef.h>
#include <stdint.h>

struct sink_proc;
struct sink_proc_store;

#define FREED_MAX (1u << 20)

/* A free took the block at addr back (addr != 0). */
void freed_add(struct sink_proc *p, uint64_t addr);
/* An allocator call handed out addr: no longer a freed address. */
void freed_drop(struct sink_proc *p, uint64_t addr);
/* Was addr freed and not handed out since?  1 or 0. */
int freed_has(const struct sink_proc *p, uint64_t addr);
/* Addresses of p forgotten by the bound. */
uint64_t freed_forgotten(const struct sink_proc *p);
size_t freed_memory(void);	/* tracer bytes used by all sets */
extern const struct sink_proc_store freed_store;

#endif /* MEMTAP_FREED_H */

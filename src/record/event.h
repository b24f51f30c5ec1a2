/*
 * event.h - one memory event as the sources produce it and the sinks
 * (statistics, trace lines, later stacks) consume it.
 *
 * Sources: syscalls.c (brk, mmap, munmap, mremap, from syscall stops or
 * from breakpoints on libc's wrappers), alloc.c (allocator functions
 * and --probe symbols, from breakpoints) and faults.c (page faults, from
 * perf samples).  An event lives on the
 * source's stack: the sink copies what it keeps.
 */
#ifndef MEMTAP_EVENT_H
#define MEMTAP_EVENT_H

#include <stdint.h>
#include <sys/types.h>

#include "report/events.h"

/* Mapping kind of mmap events. */
enum map_kind {
	MAP_KIND_NONE,		/* brk, munmap, mremap */
	MAP_KIND_ANON,
	MAP_KIND_FILE,
};

enum { EV_COUNTED_CALLS = 1, EV_COUNTED_BYTES = 2 };

/* struct event's order: a ring's sequence number, not the sink's count */
#define EV_ORDER_SEQ (UINT64_C(1) << 63)
/* struct event's code */
#define EV_CODE_KNOWN (UINT64_C(1) << 63)
#define EV_CODE_UNSURE (UINT64_C(1) << 62)

struct event {
	enum event_kind kind;
	pid_t pid;		/* thread group id */
	pid_t tid;
	const char *comm;	/* borrowed from the thread */
	uint64_t time_ns;	/* since memtap started */
	int abi;		/* enum abi of the call */
	const char *call;	/* the syscall's name in that ABI */
	uint64_t args[6];	/* the syscall's arguments as passed */
	int64_t ret;		/* its result (or -errno) */
	int failed;		/* the call failed: weight 0 */
	/*
	 * The byte weight: positive = memory acquired, negative = released.
	 * brk: new break - old break; mmap: page-rounded length; munmap:
	 * -length; mremap: new - old length.  0 when failed.
	 * Allocator kinds: the bytes asked for (calloc: nmemb * size,
	 * reallocarray: nmemb * size, xallocx: the size it returned);
	 * 0 for frees, for realloc(p, 0) and when failed.  EV_PROBE: the
	 * argument named by size=argN, else 0.
	 */
	int64_t size;
	/*
	 * Start of the memory concerned.  Allocator kinds: the pointer
	 * returned (posix_memalign: the one stored in *memptr); 0 for frees,
	 * for realloc(p, 0) and when failed.
	 */
	uint64_t addr;
	/*
	 * Allocator kinds: the block given back (free's argument; realloc's,
	 * reallocarray's, rallocx's and xallocx's old pointer); 0 otherwise.
	 * A realloc that moved the block has addr != old_addr; a failed one
	 * (failed set) left old_addr allocated.
	 */
	uint64_t old_addr;
	/*
	 * Its place among its process's events where the source knows it
	 * better than the order they reach the sink in: a ring's record,
	 * EV_ORDER_SEQ | its sequence number.  0: the sink numbers it
	 * (sink_next_order()).  Orders of the two kinds are not compared.
	 */
	uint64_t order;
	/*
	 * Allocator kinds that free old_addr inside the call and are
	 * reported at its return (realloc, reallocarray): the order of the
	 * process's first event after the call's entry, of the kind its own
	 * order is (a ring's: HEAD at the entry; a breakpoint's:
	 * sink_next_order() at the entry stop).  The block it freed may have
	 * been handed to another thread, whose call was reported first:
	 * the sink then gives back the block old_addr held before that
	 * call, not the new one (live.h).  0: not known, the block old_addr
	 * holds now.
	 */
	uint64_t entered;
	/* Allocator and probe kinds: the return address into the caller. */
	uint64_t caller;
	/*
	 * For events taken where the function returns (the registers are
	 * the caller's): the function's address, the stack's innermost
	 * frame.  0 otherwise.
	 */
	uint64_t leaf;
	uint64_t old_brk;	/* brk: break before the call (0 = unknown) */
	/*
	 * Not 0: the stack the source has for the event already (an id of
	 * sink_walk_stack() still current), recorded on it without a
	 * snapshot: nothing is unwound nor looked up.
	 */
	uint32_t stack;
	enum map_kind map_kind;
	/*
	 * For the account of VmData and VmRSS (when -e has mprotect, madvise
	 * or a fault kind; 0 otherwise): data, the private writable bytes
	 * the call maps (+) or unmaps (-) as the kernel's VmData counts them;
	 * resident, the resident bytes it gives back (munmap, madvise: -).
	 */
	int64_t data;
	int64_t resident;
	/*
	 * Allocator kinds: kept by byte sampling in the target at this mean
	 * interval (record/sample.h): the sink weighs the call as the calls
	 * and bytes it stands for; with --leaks it holds the block at that
	 * weight until its free.  0: every call is an event.
	 */
	uint64_t sample_mean;
	/*
	 * Sampled with --leaks: the free (or realloc) of a sampled block,
	 * kept only to take old_addr out of the live table; it counts for
	 * nothing else (the stubs counted the call).
	 */
	int release_only;
	/*
	 * An allocator call that the stubs counted in the target (trace/
	 * ring.c): EV_COUNTED_CALLS, with EV_COUNTED_BYTES when they counted
	 * the bytes it asked too.  The sink's totals take the stubs' counts
	 * in place of such records' (sink.h: kind_stats).  0 otherwise.
	 */
	int counted;
	/* Allocator kinds: the bytes the call asked for, failed or not. */
	uint64_t asked;
	/*
	 * mmap with MAP_FIXED, mremap with MREMAP_FIXED: the bytes of the
	 * mappings the call replaced at its target (the kernel unmaps them
	 * first), counted as the event's bytes released.  0 otherwise.
	 */
	uint64_t replaced;
	/*
	 * Not NULL: the source asks for the stack the event is recorded on,
	 * to weigh the same stacks again later (faults.c: samples scaled to
	 * the exact count).  sink_flush() keeps the event and its stack
	 * (STACK_ID_LOST when none) for sink_take_stacked(), which gives
	 * the tag back; the sink calls no source.
	 */
	void *stack_tag;
	/*
	 * The run-time code the event's stack ran, where its source knows
	 * it better than the sink (a ring's record: trace/ring-code.h):
	 * EV_CODE_KNOWN | the count of rewrites the process's perf map and
	 * jitdump had told of then (jit_names_rewrites()), or
	 * EV_CODE_UNSURE: rewritten around the call, which code it ran is
	 * not known.  0: the sink reads the files as it takes the event.
	 */
	uint64_t code;
};

#endif /* MEMTAP_EVENT_H */

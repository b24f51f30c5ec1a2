/*
 * probes.h - which functions memtap puts breakpoints on, and how their
 * arguments and results become events (probes.c).
 *
 * Three families of probes:
 *   - allocator functions, one per -e kind (malloc ... pvalloc) plus
 *     jemalloc's non-standard API, names prefixed by --symbol-prefix;
 *   - user probes, --probe SYMBOL[@OBJECT][:size=argN];
 *   - libc's syscall wrappers mmap, munmap, mremap and brk, for
 *     --syscalls=breakpoints (attach mode's default).
 *
 * Life cycle: probes_add_user() while parsing options, probes_init()
 * once after; the list is then fixed and lives until exit.  struct probe
 * pointers are the cookies of breakpoints (see breakpoint.h).
 */
#ifndef MEMTAP_PROBES_H
#define MEMTAP_PROBES_H

#include <stdint.h>

#include "record/event.h"

/* How a probe's arguments (C ABI, arg0 first) and result map to an event. */
enum probe_role {
	PR_MALLOC,		/* (size) -> ptr: malloc, valloc, pvalloc, mallocx */
	PR_CALLOC,		/* (nmemb, size) -> ptr */
	PR_REALLOC,		/* (ptr, size) -> ptr: realloc, rallocx */
	PR_REALLOCARRAY,	/* (ptr, nmemb, size) -> ptr */
	PR_FREE,		/* (ptr): free, sdallocx, dallocx */
	PR_POSIX_MEMALIGN,	/* (memptr, alignment, size) -> 0 or errno */
	PR_ALIGNED,		/* (alignment, size) -> ptr: aligned_alloc, memalign */
	PR_XALLOCX,		/* (ptr, size, extra, flags) -> usable size */
	PR_USER,		/* --probe: weight = argument size_arg */
	PR_MMAP,		/* libc's syscall wrappers */
	PR_MUNMAP,
	PR_MREMAP,
	PR_BRK,
	PR_MPROTECT,
	PR_MADVISE,
};

struct probe {
	char *spec;		/* NAME[@OBJECT], prefix included, for elfsym_lookup() */
	char *name;		/* NAME: the event's call */
	enum event_kind kind;
	enum probe_role role;
	int size_arg;		/* PR_USER: index of the size argument, -1 = none */
	int want_return;	/* capture the result (never for functions that throw) */
	int optional;		/* missing: no message (jemalloc's API) */
	int reported;		/* a failure to probe it was reported once */
	int found;		/* found in some process (maybe removed since) */
};

/*
 * Parse and remember one --probe argument: SYMBOL[@OBJECT][:size=argN]
 * with N from 0 to 5.  Returns 0, or -1 on a syntax error (nothing
 * added).
 */
int probes_add_user(const char *arg);

/*
 * Build the probe list from events (EV_BIT() set), the symbol prefix
 * (NULL: none) and the user probes; with_syscalls adds the syscall
 * wrappers of the syscall kinds in events.
 */
void probes_init(unsigned events, const char *prefix, int with_syscalls);

/* The list, in lookup order (the first of two aliases wins). */
size_t probes_count(void);
struct probe *probes_get(size_t i);

/* Does the list contain anything at all? */
int probes_any(void);

/* Is a --probe not found yet (it may be in a library loaded later)? */
int probes_user_pending(void);

/*
 * What a detour's stub counts of pr's calls that is the events' own
 * (event.h: EV_COUNTED_*): an allocator function's calls and the bytes
 * they ask (not xallocx's, whose bytes are its result); nothing of a
 * --probe's or a syscall wrapper's, whose calls are all events.
 */
int probe_counted(const struct probe *pr);

/*
 * Fill ev (kind, call, args, size, addr, old_addr, failed, ret) for an
 * allocator or user probe: args are the six argument registers at entry,
 * retval the result (ignored without want_return), result_word what
 * posix_memalign stored in *memptr.  Returns 1 when ev is an event, 0
 * when the call makes none.  Syscall wrappers: see alloc.c.
 */
int probe_fill_event(const struct probe *pr, const uint64_t args[6], uint64_t retval,
		     uint64_t result_word, struct event *ev);

#endif /* MEMTAP_PROBES_H */

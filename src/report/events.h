/*
 * events.h - the kinds of memory event, numbered and named (events.c):
 * the names are what -e takes and what profiles, recordings and reports
 * call them; the reports list kinds in this order.  The event itself is
 * record/event.h's.
 */
#ifndef MEMTAP_EVENTS_H
#define MEMTAP_EVENTS_H

enum event_kind {
	EV_BRK,
	EV_MMAP,
	EV_MUNMAP,
	EV_MREMAP,
	EV_MALLOC,		/* malloc, jemalloc mallocx */
	EV_CALLOC,
	EV_REALLOC,		/* realloc, jemalloc rallocx and xallocx */
	EV_REALLOCARRAY,
	EV_FREE,		/* free, jemalloc sdallocx and dallocx */
	EV_POSIX_MEMALIGN,
	EV_ALIGNED_ALLOC,
	EV_MEMALIGN,
	EV_VALLOC,
	EV_PVALLOC,
	EV_PROBE,		/* a --probe SYMBOL */
	EV_FAULTS,		/* page faults (perf events): bytes of the pages */
	EV_MINOR_FAULTS,
	EV_MAJOR_FAULTS,
	EV_MPROTECT,		/* inaccessible memory made accessible (+), or back (-) */
	EV_MADVISE,		/* MADV_DONTNEED, MADV_FREE, MADV_REMOVE: resident bytes (-) */
	EV_NKINDS
};

/* Event names as the user writes them in -e, and the bit of each. */
extern const char *const event_kind_names[EV_NKINDS];
#define EV_BIT(k) (1u << (k))
#define EV_SYSCALLS (EV_BIT(EV_BRK) | EV_BIT(EV_MMAP) | EV_BIT(EV_MUNMAP) | EV_BIT(EV_MREMAP))
/* Kinds caught at syscall stops (or libc's wrappers): -e syscalls and more. */
#define EV_SYSCALL_STOPS (EV_SYSCALLS | EV_BIT(EV_MPROTECT) | EV_BIT(EV_MADVISE))
/* -e alloc: every allocator function (not EV_PROBE, which --probe sets). */
#define EV_ALLOC (((EV_BIT(EV_PVALLOC) << 1) - 1) & ~(EV_BIT(EV_MALLOC) - 1))
/* Kinds whose events come from breakpoints only. */
#define EV_BREAKPOINT (EV_ALLOC | EV_BIT(EV_PROBE))
/* Kinds whose events come from perf page-fault samples (trace/faults.c). */
#define EV_FAULT_KINDS (EV_BIT(EV_FAULTS) | EV_BIT(EV_MINOR_FAULTS) | EV_BIT(EV_MAJOR_FAULTS))
static inline int ev_is_fault(int kind)
{
	return kind >= EV_FAULTS && kind <= EV_MAJOR_FAULTS;
}
/* Is this event name a fault kind's ("faults", "minor-faults"...)? */
int ev_name_is_fault(const char *name);
static inline int ev_is_alloc(int kind)
{
	return kind >= EV_MALLOC && kind <= EV_PVALLOC;
}

#endif /* MEMTAP_EVENTS_H */

/*
 * event.h - one memory event as the sources produce it and the sinks
 * (statistics, trace lines, later stacks) consume it.
 */
#ifndef MEMTAP_EVENT_H
#define MEMTAP_EVENT_H

#include <stdint.h>
#include <sys/types.h>

enum event_kind {
	EV_BRK,
	EV_MMAP,
	EV_MUNMAP,
	EV_MREMAP,
	EV_NKINDS
};

/* Event names as the user writes them in -e, and the bit of each. */
extern const char *const event_kind_names[EV_NKINDS];
#define EV_BIT(k) (1u << (k))
#define EV_SYSCALLS (EV_BIT(EV_BRK) | EV_BIT(EV_MMAP) | EV_BIT(EV_MUNMAP) | EV_BIT(EV_MREMAP))

/* Mapping kind of mmap events. */
enum map_kind {
	MAP_KIND_NONE,		/* brk, munmap, mremap */
	MAP_KIND_ANON,
	MAP_KIND_FILE,
};

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
	 */
	int64_t size;
	uint64_t addr;		/* start of the memory concerned */
	uint64_t old_brk;	/* brk: break before the call (0 = unknown) */
	enum map_kind map_kind;
};

#endif /* MEMTAP_EVENT_H */

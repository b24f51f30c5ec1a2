/*
 * pagemap.h - what a range of a process's memory is, before a call
 * changes it (pagemap.c): its resident bytes (/proc/PID/pagemap), and
 * how much of it a new protection makes accessible (/proc/PID/maps).
 * For mprotect and madvise events, read at the syscall's entry.
 */
#ifndef MEMTAP_PAGEMAP_H
#define MEMTAP_PAGEMAP_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Bytes of [addr, addr + len) in pages present in memory (swapped-out
 * pages are not).  0, or -1 with errno (the process is gone, or
 * pagemap cannot be read).
 */
int pagemap_resident(pid_t pid, uint64_t addr, uint64_t len, uint64_t *bytes);

/* What a range of mappings is, and what a new protection changes. */
struct range_change {
	int64_t access;		/* bytes made accessible (+) or inaccessible (-) */
	int64_t data;		/* private writable bytes made so (+) or no more (-) */
	uint64_t data_bytes;	/* private writable bytes (VmData's) now */
	uint64_t mapped;	/* bytes mapped now, any mapping (VmSize's) */
};

/*
 * The mappings of [addr, addr + len) from /proc/PID/maps, and what
 * mprotect(addr, len, prot) would change (prot -1: nothing, only
 * data_bytes): access, the bytes that had no access and get some (+),
 * or the reverse with PROT_NONE (-); data, the private bytes made
 * writable (+) or read-only (-), as VmData counts them (the stack
 * excluded); mapped, the bytes of the range in any mapping.  All 0
 * when the maps cannot be read.
 */
void maps_range_change(pid_t pid, uint64_t addr, uint64_t len, int prot,
		       struct range_change *rc);

#endif /* MEMTAP_PAGEMAP_H */

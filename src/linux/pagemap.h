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

/*
 * The bytes of [addr, addr + len) that mprotect(addr, len, prot) makes
 * accessible (mapped with no access before, prot is not PROT_NONE:
 * positive), or inaccessible (accessible before, prot is PROT_NONE:
 * negative).  0 when /proc/PID/maps cannot be read.
 */
int64_t maps_access_change(pid_t pid, uint64_t addr, uint64_t len, unsigned prot);

#endif /* MEMTAP_PAGEMAP_H */

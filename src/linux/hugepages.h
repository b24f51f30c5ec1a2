/*
 * hugepages.h - the size of the page a fault brought in (hugepages.c):
 * the base page, or the huge page size of a hugetlb mapping.
 *
 * One cache of the mappings of the process asked about last, read from
 * /proc/PID/maps when an address is in none of them; after a read that
 * did not find it either (the mapping is gone already), not again for
 * an address in the same hole between mappings for REREAD_NS, so that
 * faults on mappings unmapped since cost one read, not one per fault.  A mapping is hugetlb when its path is
 * /anon_hugepage (MAP_HUGETLB), /SYSV... (SysV shared memory) or under
 * /dev/hugepages, and statfs() of /proc/PID/map_files/START-END says
 * hugetlbfs: its block size is the huge page size.  A hugetlbfs file
 * mounted elsewhere weighs the base page.  Transparent huge pages are
 * not seen in the maps (their mappings are plain anonymous memory):
 * hugepages_fault_size() asks linux/thp.h about the address.
 */
#ifndef MEMTAP_HUGEPAGES_H
#define MEMTAP_HUGEPAGES_H

#include <stdint.h>
#include <sys/types.h>

/* The base page size (sysconf). */
uint64_t hugepages_base_size(void);

/* The page size of the mapping of pid that holds addr (base if unknown). */
uint64_t hugepages_page_size(pid_t pid, uint64_t addr);

/*
 * The bytes a fault at addr brought in: the mapping's huge page size,
 * or for a mapping of base pages what thp_fault_size() says (which
 * may be THP_NOT_PRESENT: ask again later).
 */
uint64_t hugepages_fault_size(pid_t pid, uint64_t addr);

/* Free the cache and thp.c's (an exec: the mappings are new). */
void hugepages_release(void);

#endif /* MEMTAP_HUGEPAGES_H */

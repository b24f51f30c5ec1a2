/*
 * thp.h - the bytes a page fault brought in where the mapping is of
 * base pages (thp.c): one base page, or the transparent huge page or
 * large folio (mTHP) the kernel served the fault with.
 *
 * Asked after the fault, when its sample is read (ms later): what maps
 * the faulting address then is taken for what the fault mapped.  Ways,
 * the first that works (each a feature of linux/features.h, tried at
 * use and forced off by MEMTAP_DISABLE):
 *   pagemap_scan  ioctl(PAGEMAP_SCAN) on /proc/PID/pagemap (Linux 6.7):
 *                 PAGE_IS_HUGE, the address is mapped by a PMD: the
 *                 PMD size (2 MiB).  Needs what pagemap needs (ptrace
 *                 read access), no privilege.
 *   kpageflags    the frame number from /proc/PID/pagemap and its flags
 *                 in /proc/kpageflags (CAP_SYS_ADMIN): an anonymous
 *                 page of a compound folio (KPF_THP) weighs the folio,
 *                 its head and tails counted, so mTHP sizes too.  Asked
 *                 when pagemap_scan is not there, or says "not huge"
 *                 and a size below the PMD's is enabled in
 *                 /sys/kernel/mm/transparent_hugepage/hugepages-*.
 *   smaps_thp     coarse, without either: the AnonHugePages of the
 *                 mapping in /proc/PID/smaps, read again at most every
 *                 REREAD_NS (never again once its THPeligible says 0);
 *                 each 2 MiB it grew by is a credit, and a fault whose
 *                 2 MiB block lies in the mapping takes one (so the
 *                 mapping's total is right, which fault of it was huge
 *                 is a guess).
 * Else: the base page.
 * Huge zero pages (a read of untouched memory) weigh the base page.
 */
#ifndef MEMTAP_THP_H
#define MEMTAP_THP_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The bytes of the fault at addr in process pid, in a mapping of base
 * pages [start, end) (base: its page size).  THP_NOT_PRESENT when
 * nothing maps addr yet: the fault is still being served (a huge page
 * is being cleared), or it failed, or the page went since; ask again
 * later.
 */
#define THP_NOT_PRESENT ((uint64_t)1)
uint64_t thp_fault_size(pid_t pid, uint64_t addr, uint64_t start, uint64_t end,
			uint64_t base);

/*
 * A new round of samples (a drain of the rings): thp_fault_size() keeps
 * within a round what it learnt of a PMD block (PAGEMAP_SCAN: mapped
 * by page tables of base pages, no mTHP size enabled), so that the
 * block's other faults of the round cost no call: they are base pages.
 */
void thp_new_round(void);

/* Close the files and forget the credits (an exec, the end). */
void thp_release(void);

#endif /* MEMTAP_THP_H */

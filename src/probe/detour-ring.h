/*
 * detour-ring.h - the in-target ring shared with memtap (detour-ring.c).
 */
#ifndef MEMTAP_DETOUR_RING_H
#define MEMTAP_DETOUR_RING_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Map len bytes of ring into process pid, through its stopped thread
 * tid (insn: a syscall instruction of the process), as a memfd that
 * memtap maps too, at *local.  scratch: 16 writable bytes of the
 * process (the memfd's name goes there).  Only where a fork child's
 * stubs never write the ring.  Returns the ring's address in the
 * process, or -errno with nothing left behind (*local NULL).
 */
int64_t detour_ring_share(pid_t pid, pid_t tid, uint64_t insn, uint64_t scratch, uint64_t len,
			  void **local);

/*
 * The same for any len bytes shared with memtap, the memfd named name
 * (at most 15 characters: /memfd:NAME in the process's maps).
 */
int64_t detour_memfd_share(pid_t pid, pid_t tid, uint64_t insn, uint64_t scratch, uint64_t len,
			   const char *name, void **local);

/*
 * The ring of len bytes: shared when wiped (the stub mapping's data
 * pages are MADV_WIPEONFORK) and detour_ring_share() can, else private
 * (anonymous) memory of the process, *local NULL.  The address, or
 * -errno as an int64_t.
 */
int64_t detour_ring_map(pid_t pid, pid_t tid, uint64_t insn, uint64_t scratch, uint64_t len,
			int wiped, void **local);

/* memtap's mapping of a shared ring goes (NULL: none). */
void detour_ring_unshare(void *local, uint64_t len);

#endif /* MEMTAP_DETOUR_RING_H */

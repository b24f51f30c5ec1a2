/*
 * hole.h - where memtap maps its code into a target: a free range within
 * reach of the code it serves (hole.c).  Used for the breakpoints'
 * scratch pages (bp-scratch.c) and the detours' stub mapping and far
 * pages (detour.c), with the CPU's reach (ARCH_NEAR_REACH).
 */
#ifndef MEMTAP_HOLE_H
#define MEMTAP_HOLE_H

#include <stdint.h>
#include <stddef.h>

#include "linux/procfs.h"

/*
 * A free range of len bytes (a page multiple) such that every address
 * in [lo, hi) and every byte of the range are less than reach apart
 * (reach: ARCH_NEAR_REACH, which a branch spans; it must exceed
 * 2 * len), and not where the heap grows (1 GiB above [heap] stays
 * free): the highest one below lo, else the lowest one above hi.  r:
 * the n mappings of the process, sorted (procfs_read_maps()).  0 if
 * none.
 */
uint64_t hole_find(const struct procfs_map *r, size_t n, uint64_t lo, uint64_t hi,
		   uint64_t len, uint64_t reach);

#endif /* MEMTAP_HOLE_H */

/*
 * bp-scratch.c - the scratch pages of a breakpoint set: where one goes
 * (a free page within reach of the code, not where the heap grows),
 * mapping it by an injected mmap, its slots, and unmapping it (from the
 * process, or from a fork child's copy).  Layout: see breakpoint.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>


#include "arch/arch.h"
#include "probe/bp-internal.h"
#include "util/error.h"
#include "linux/features.h"
#include "linux/procfs.h"
#include "probe/hole.h"
#include "probe/remote.h"
#include "util/xmalloc.h"


int bp_scratch_flags(void)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;

	return feature_has(F_MAP_FIXED_NOREPLACE) ? flags | MAP_FIXED_NOREPLACE : flags;
}

size_t bp_scratch_pages(const struct bp_set *set, uint64_t *addrs, size_t max)
{
	size_t i;

	for (i = 0; i < set->npages && i < max; i++)
		addrs[i] = set->pages[i].addr;
	return set->npages;
}

/* ---- scratch pages ---- */

/*
 * A free page within reach of the object around addr (its mappings
 * within reach of addr): hole_find() over them.  0 if none.
 */
static uint64_t find_hole(const struct procfs_map *r, size_t n, uint64_t addr)
{
	uint64_t lo = addr, hi = addr + 1, ino = 0;

	for (size_t i = 0; i < n; i++)
		if (addr >= r[i].start && addr < r[i].end)
			ino = r[i].ino;
	for (size_t i = 0; i < n && ino; i++)
		if (r[i].ino == ino && arch_in_reach(r[i].start, addr)) {
			if (r[i].start < lo)
				lo = r[i].start;
			if (r[i].end > hi)
				hi = r[i].end;
		}
	return hole_find(r, n, lo, hi, PAGE, ARCH_NEAR_REACH);
}

int bp_ensure_syscall_insn(struct bp_set *set, pid_t tid)
{
	if (set->syscall_insn)
		return 0;
	return remote_find_syscall_insn_tid(set->pid, tid, &set->syscall_insn);
}

/* Map a scratch page near addr; its index in set->pages or -errno. */
int bp_scratch_map(struct bp_set *set, pid_t tid, uint64_t addr)
{
	uint8_t head[SLOT0];
	struct remote_result res;
	int err = bp_ensure_syscall_insn(set, tid);

	if (err < 0)
		return err;
	for (int tries = 0; tries < 4; tries++) {
		size_t n;
		struct procfs_map *r;
		uint64_t a = procfs_read_maps(set->pid, &r, &n) == 0 ? find_hole(r, n, addr) : 0;
		int64_t got;

		procfs_maps_free(r);
		if (!a)
			return -ENOMEM;
		got = remote_mmap(tid, set->syscall_insn, a, PAGE, BP_SCRATCH_PROT,
				  BP_SCRATCH_FLAGS, &res);
		if (got == -EEXIST)
			continue;	/* another thread mapped it meanwhile */
		if (got < 0 && got > -4096)
			return (int)got;
		if ((uint64_t)got != a) {
			/* without MAP_FIXED_NOREPLACE the address is a hint */
			remote_munmap(tid, set->syscall_insn, (uint64_t)got, PAGE, &res);
			continue;
		}
		arch_bp_fill(head, sizeof(head));
		err = bp_mem_write_code(set, tid, a, head, sizeof(head));
		if (err < 0) {
			remote_munmap(tid, set->syscall_insn, a, PAGE, &res);
			return err;
		}
		set->pages = xgrowarray(set->pages, &set->pages_cap, set->npages + 1,
					sizeof(*set->pages));
		set->pages[set->npages].addr = a;
		set->pages[set->npages].used = SLOT0;
		if (!set->tramp)
			set->tramp = a;
		debug_msg("pid %d: scratch page at %#" PRIx64 " for %#" PRIx64,
			  set->pid, a, addr);
		return (int)set->npages++;
	}
	return -ENOMEM;
}

/* A free slot within reach of addr (and of the insn's target): address or 0. */
uint64_t bp_slot_find(struct bp_set *set, uint64_t addr, const struct bp_insn *insn)
{
	for (size_t i = 0; i < set->npages; i++) {
		struct scratch *s = &set->pages[i];
		uint64_t slot = s->addr + s->used, target;

		if (s->used + BP_ARCH_SLOT_SIZE > PAGE)
			continue;
		if (!arch_in_reach(slot, addr))
			continue;
		if (bp_arch_slot_target(insn, &target) && !arch_in_reach(slot, target))
			continue;
		return slot;
	}
	return 0;
}

void bp_slot_take(struct bp_set *set, uint64_t slot)
{
	for (size_t i = 0; i < set->npages; i++)
		if (slot == set->pages[i].addr + set->pages[i].used)
			set->pages[i].used += BP_ARCH_SLOT_SIZE;
}

int bp_unmap_scratch(struct bp_set *set, pid_t stopped_tid)
{
	struct remote_result res;
	int err = 0;

	if (!set->npages)
		return 0;
	if ((err = bp_ensure_syscall_insn(set, stopped_tid)) < 0)
		return err;
	/* the trampoline's page (the first) stays when keep_tramp() made it so */
	while (set->npages > (set->tramp_kept ? 1u : 0u)) {
		int64_t r = remote_munmap(stopped_tid, set->syscall_insn,
					  set->pages[set->npages - 1].addr, PAGE, &res);

		if (r < 0)
			return (int)r;
		set->npages--;
	}
	set->tramp = 0;
	return 0;
}

int bp_unmap_fork_child(struct bp_set *set, pid_t child)
{
	struct remote_result res;
	int first = 0, err;

	if (!set->npages)
		return 0;
	if ((err = bp_ensure_syscall_insn(set, child)) < 0)
		return err;
	for (size_t i = 0; i < set->npages; i++) {
		int64_t r;

		if (set->pages[i].addr == set->tramp && bp_tramp_kept_in(set, child))
			continue;
		r = remote_munmap(child, set->syscall_insn, set->pages[i].addr, PAGE, &res);

		if (r < 0 && !first)
			first = (int)r;
	}
	return first;
}

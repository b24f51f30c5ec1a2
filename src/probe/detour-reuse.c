/*
 * detour-reuse.c - the slots of unmapped code: detour_forget() (a
 * dlclose) marks a slot gone, and dt_slot_again() gives it again to a
 * probe of the same cookie once no thread can be inside it (see
 * detour-int.h).  A slot's counters keep counting for its cookie, so
 * that a slot taken again by a probe of the same cookie leaves every
 * sum detour_read_counts() makes as it was.
 *
 * Why no thread is inside a gone slot that is given again: its function
 * is unmapped, so no call enters its glue any more; a thread can still
 * be in it only by its pc (in the glue or the relocated entry) or by a
 * return address into it that a call from the glue left (the relocated
 * entry's jmp back into unmapped code cannot run, but the function may
 * have tail-called code that is still mapped, which returns into the
 * glue), on the stack or in a register (a link register), signed or
 * not (arch_ra_strip(): arm64's PAC).  No call enters it again after
 * the unmap, so these are all the ways in.  With every
 * thread of the process stopped, each one's registers and its stack,
 * from below its sp (a red zone) to the end of the mapping that holds
 * sp, and the stack its thread table entry names (a signal handler on
 * another stack), are read whole: a word anywhere in the slot, or a
 * stack that cannot be read or is longer than SCAN_MAX, keeps the slot
 * out of use (the probe gets a fresh slot, or int3), to be tried again
 * at the next stop.  A false match (a word that only looks like an
 * address in the slot) costs a slot, never a thread.  A thread in the
 * common routines may still make a record with the gone slot's number
 * in DESC: once the slot is given again, it is counted for the same
 * cookie, its leaf named by the new function.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/detour-plan.h"
#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "linux/procfs.h"
#include "probe/detour.h"
#include "probe/detour-int.h"
#include "util/error.h"
#include "util/xmalloc.h"

#define SCAN_MAX (UINT64_C(16) << 20)	/* bytes of a thread's stacks read at most */
#define SCAN_CHUNK 0x10000
#define RED_ZONE 128			/* below sp, read too */

_Static_assert(sizeof(arch_regs_t) % 8 == 0, "the registers are read as words");

void detour_forget(struct detour_set *ds, uint64_t addr)
{
	for (size_t i = 0; i < ds->nslots; i++)
		if (ds->sites[i].live && ds->sites[i].func == addr) {
			ds->sites[i].live = 0;
			ds->sites[i].gone = 1;
		}
	dt_nest_publish(ds, 0);
}

/* Does a word of [lo, hi) of the process lie in [a, a + DT_SLOT_SIZE)?  1 (or unreadable), 0. */
static int stack_holds(const struct detour_set *ds, pid_t tid, uint64_t lo, uint64_t hi,
		       uint64_t a, uint64_t *budget)
{
	uint64_t *buf;
	int found = 0;

	lo &= ~(uint64_t)7;
	if (hi <= lo)
		return 0;
	if (hi - lo > *budget)
		return 1;
	*budget -= hi - lo;
	buf = xmalloc(SCAN_CHUNK);
	for (uint64_t at = lo; !found && at < hi; at += SCAN_CHUNK) {
		size_t len = hi - at < SCAN_CHUNK ? (size_t)(hi - at) & ~(size_t)7 : SCAN_CHUNK;

		if (memio_read_all(ds->pid, tid, at, buf, len) < 0)
			found = 1;
		for (size_t k = 0; !found && k < len / 8; k++)
			found = arch_ra_strip(buf[k]) - a < DT_SLOT_SIZE;
	}
	free(buf);
	return found;
}

/* The mapping of maps[0 .. n) that holds a, or NULL. */
static const struct procfs_map *map_at(const struct procfs_map *maps, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= maps[i].start && a < maps[i].end)
			return &maps[i];
	return NULL;
}

/*
 * Can a thread of th[0 .. n) be inside the slot at a (its pc, a return
 * address in a register or on its stacks)?  1 when it can or when that
 * cannot be known, else 0.
 */
static int slot_busy(const struct detour_set *ds, uint64_t a, const struct detour_thread *th,
		     size_t n, const struct procfs_map *maps, size_t nmaps)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t w[sizeof(arch_regs_t) / 8], sp, budget = SCAN_MAX;
		const struct procfs_map *m;
		arch_regs_t regs;

		if (th[i].pc - a < DT_SLOT_SIZE || arch_regs_get(th[i].tid, &regs) < 0)
			return 1;
		memcpy(w, &regs, sizeof(w));
		for (size_t k = 0; k < sizeof(w) / 8; k++)
			if (arch_ra_strip(w[k]) - a < DT_SLOT_SIZE)
				return 1;
		sp = arch_sp(&regs);
		if (!(m = map_at(maps, nmaps, sp)) ||
		    stack_holds(ds, th[i].tid, sp - RED_ZONE < m->start ? m->start : sp - RED_ZONE,
				m->end, a, &budget))
			return 1;
		/* on another stack: its own, as much of it as is mapped */
		for (unsigned e = 0; e < K_NENT; e++) {
			uint64_t lo = ds->key_lo[e], hi = ds->key_hi[e];

			if (!ds->keys[e] || ds->key_tids[e] != th[i].tid || (sp >= lo && sp < hi))
				continue;
			if (!(m = map_at(maps, nmaps, hi - 1)) ||
			    stack_holds(ds, th[i].tid, lo < m->start ? m->start : lo, hi, a, &budget))
				return 1;
		}
	}
	return 0;
}

/* The page and index in it of slot number g. */
static unsigned page_of_number(size_t g, size_t *j)
{
	unsigned pg = g < DT_NSLOTS ? 0 : (unsigned)((g - DT_NSLOTS) / DT_FAR_SLOTS + 1);

	*j = g - dt_page_first(pg);
	return pg;
}

int dt_slot_again(struct detour_set *ds, const struct plan *p, const void *cookie,
		  const struct detour_thread *th, size_t n, unsigned *pg, size_t *j)
{
	struct procfs_map *maps = NULL;
	size_t nmaps = 0;
	int got = 0;

	for (size_t g = 0; !got && g < ds->nslots; g++) {
		struct dt_site *st = &ds->sites[g];
		uint64_t a;

		if (!st->gone || st->live || st->cookie != cookie)
			continue;
		*pg = page_of_number(g, j);
		a = dt_page_base(ds, *pg) + DT_TEMPLATE_MAX + *j * DT_SLOT_SIZE;
		if (!dt_page_base(ds, *pg) || !arch_detour_in_reach(p, a))
			continue;
		if (!maps && procfs_read_maps(ds->pid, &maps, &nmaps) < 0)
			return 0;
		if (slot_busy(ds, a, th, n, maps, nmaps)) {
			debug_msg("process %d: slot %zu at %#" PRIx64 " (of %#" PRIx64 ", unmapped) "
				  "not used again yet: a thread may be inside it", ds->pid, g, a,
				  st->func);
			continue;
		}
		debug_msg("process %d: slot %zu at %#" PRIx64 " (of %#" PRIx64 ", unmapped) used "
			  "again, no thread inside it", ds->pid, g, a, st->func);
		ds->again++;
		got = 1;
	}
	procfs_maps_free(maps);
	return got;
}

int dt_slots_capped(const struct detour_set *ds)
{
	size_t used;

	if (!ds->cfg.test_slots)
		return 0;
	used = ds->used;
	for (unsigned k = 0; k < DT_FAR_MAX; k++)
		used += ds->far[k].used;
	return used >= ds->cfg.test_slots;
}

void detour_slot_stats(const struct detour_set *ds, uint64_t *again, uint64_t *gone)
{
	*again = ds ? ds->again : 0;
	*gone = 0;
	for (size_t i = 0; ds && i < ds->nslots; i++)
		*gone += ds->sites[i].gone && !ds->sites[i].live;
}

/*
 * detour-far.c - the far code pages of a detour set (stub-abi.h): slots
 * for probed code out of the stub mapping's reach, in a page mapped near
 * it, whose glue reaches the mapping's common routines through the
 * page's header.  Their records, counters, thread table and sampling
 * are the mapping's.  What an earlier memtap left is used again: a page
 * whose header names the stub mapping used again keeps its number, its
 * slots are adopted (detour.c).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "linux/procfs.h"
#include "arch/arch.h"
#include "probe/detour.h"
#include "probe/detour-int.h"
#include "probe/remote.h"
#include "util/error.h"

uint64_t dt_page_base(const struct detour_set *ds, unsigned pg)
{
	return pg ? ds->far[pg - 1].base : ds->base;
}

size_t dt_page_first(unsigned pg)
{
	return pg ? DT_NSLOTS + (pg - 1) * (size_t)DT_FAR_SLOTS : 0;
}

size_t dt_page_slots(unsigned pg)
{
	return pg ? DT_FAR_SLOTS : PROBE_SLOTS;
}

int dt_page_reused(const struct detour_set *ds, unsigned pg)
{
	return pg ? ds->far[pg - 1].reused : ds->reused;
}

size_t *dt_page_used(struct detour_set *ds, unsigned pg)
{
	return pg ? &ds->far[pg - 1].used : &ds->used;
}

int dt_page_of(const struct detour_set *ds, uint64_t slot, unsigned *pg)
{
	for (unsigned k = 0; k <= DT_FAR_MAX; k++) {
		uint64_t b = dt_page_base(ds, k);

		if (b && slot >= b + DT_TEMPLATE_MAX &&
		    slot < b + DT_TEMPLATE_MAX + dt_page_slots(k) * DT_SLOT_SIZE &&
		    (slot - b - DT_TEMPLATE_MAX) % DT_SLOT_SIZE == 0) {
			*pg = k;
			return 1;
		}
	}
	return 0;
}

/* The header of a far page of ds numbered k, into h. */
static void header(const struct detour_set *ds, unsigned k, uint64_t h[F_SIZE / 8])
{
	h[F_MAGIC / 8] = DT_FAR_MAGIC;
	h[F_BASE / 8] = ds->base;
	h[F_RESULT / 8] = ds->base + (uint64_t)(dt_common_result - dt_template);
	h[F_ENTRY / 8] = ds->base + (uint64_t)(dt_common_entry - dt_template);
	h[F_SYNC / 8] = ds->base + (uint64_t)(dt_common_sync - dt_template);
	h[F_INDEX / 8] = k;
	h[F_PREFILTER / 8] = ds->base + (uint64_t)(dt_common_prefilter - dt_template);
}

void dt_far_scan(struct detour_set *ds, pid_t tid)
{
	struct procfs_map *r;
	size_t n;

	memset(ds->old_far, 0, sizeof(ds->old_far));
	if (!ds->reused || procfs_read_maps(ds->pid, &r, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t h[F_SIZE / 8], want[F_SIZE / 8];

		if (!(r[i].perms & PROT_EXEC) || r[i].ino || r[i].end - r[i].start != DT_CODE_SIZE ||
		    memio_read_all(ds->pid, tid, r[i].start, h, sizeof(h)) < 0 ||
		    h[F_INDEX / 8] < 1 || h[F_INDEX / 8] > DT_FAR_MAX)
			continue;
		header(ds, (unsigned)h[F_INDEX / 8], want);
		if (!memcmp(h, want, sizeof(h)))
			ds->old_far[h[F_INDEX / 8] - 1] = r[i].start;
	}
	procfs_maps_free(r);
}

int detour_far(struct detour_set *ds, pid_t tid, uint64_t lo, uint64_t hi)
{
	uint64_t h[F_SIZE / 8];
	struct remote_result res;
	unsigned k = 0;

	if (!ds->base)
		return -ENOTSUP;
	/* a page left by an earlier memtap, within reach */
	for (unsigned i = 1; i <= DT_FAR_MAX; i++) {
		uint64_t a = ds->old_far[i - 1];

		if (a && !ds->far[i - 1].base && arch_in_reach(a, lo) &&
		    arch_in_reach(a + DT_CODE_SIZE, hi)) {
			ds->far[i - 1].base = a;
			ds->far[i - 1].reused = 1;
			debug_msg("process %d: memtap's far code page %u at %#" PRIx64 " used again",
				  ds->pid, i, a);
			return 0;
		}
	}
	/* else a new one, numbered as none left */
	for (unsigned i = 1; i <= DT_FAR_MAX && !k; i++)
		if (!ds->far[i - 1].base && !ds->old_far[i - 1])
			k = i;
	if (!k)
		return -ENOSPC;
	for (int tries = 0; tries < 4; tries++) {
		int64_t got = dt_hole(ds, lo, hi, DT_CODE_SIZE);
		uint64_t hole;
		int err;

		if (got < 0)
			return (int)got;
		hole = (uint64_t)got;
		got = dt_map_at(ds, tid, hole, DT_CODE_SIZE, PROT_READ | PROT_EXEC);
		if (got == -EEXIST)
			continue;
		if (got < 0)
			return (int)got;
		header(ds, k, h);
		if ((err = memio_write_code(ds->pid, tid, hole, h, sizeof(h))) < 0) {
			remote_munmap(tid, ds->syscall_insn, hole, DT_CODE_SIZE, &res);
			return err;
		}
		ds->far[k - 1].base = hole;
		ds->made += DT_CODE_SIZE;
		debug_msg("process %d: far code page %u at %#" PRIx64, ds->pid, k, hole);
		return 0;
	}
	return -ENOMEM;
}

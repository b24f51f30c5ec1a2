/*
 * detour-sites.c - where an instruction of a detoured function runs:
 * in place, or, displaced by the patch, from the copy in its slot
 * (detour.h, detour_runs_at()).  The plan is made again from the
 * function's bytes with the saved ones put back, as detour_insert()
 * made it, and the slot's copy relocated again in memtap's memory: the
 * target is only read.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/detour-plan.h"
#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "probe/detour.h"
#include "probe/detour-int.h"
#include "util/xmalloc.h"

/* The most of a function read to plan it again, as detour.c reads it. */
#define SITES_FUNC_READ 65536

int detour_moved_insn(uint64_t func, const uint8_t *buf, size_t got, uint64_t size,
		      uint64_t slot, uint64_t insn, uint64_t *at)
{
	uint8_t code[DT_ORIG_ROOM];
	const char *why = NULL;
	struct plan p;

	if (size && got >= size)
		got = arch_detour_padded_size(func, buf, got, size);
	if (got < ARCH_PATCH_LEN || arch_detour_plan(func, buf, got, &p, &why) < 0)
		return -ENOTSUP;
	if (insn < p.site || insn >= p.site + p.len) {
		*at = insn;
		return 0;
	}
	if (arch_detour_relocate(&p, slot + DT_ORIG, code) < 0 ||
	    arch_detour_moved_pc(&p, slot + DT_ORIG, insn, at) < 0)
		return -ENOTSUP;
	return 1;
}

/* The address of slot g (DESC number), 0 if its page is not there. */
static uint64_t slot_of(const struct detour_set *ds, size_t g)
{
	for (unsigned k = 0; k <= DT_FAR_MAX; k++) {
		size_t first = dt_page_first(k);

		if (g >= first && g < first + dt_page_slots(k))
			return dt_page_base(ds, k) ?
			       dt_page_base(ds, k) + DT_TEMPLATE_MAX + (g - first) * DT_SLOT_SIZE : 0;
	}
	return 0;
}

int detour_runs_at(const struct detour_set *ds, pid_t tid, uint64_t insn, uint64_t *at)
{
	for (size_t g = 0; g < ds->nslots; g++) {
		const struct dt_site *st = &ds->sites[g];
		uint64_t slot = slot_of(ds, g);
		size_t len = st->size ? st->size : 64;
		uint8_t *buf;
		ssize_t got;
		int r;

		if (!st->live || insn < st->site || insn >= st->site + st->len)
			continue;
		if (!slot)
			return -ENOENT;
		if (len > SITES_FUNC_READ)
			len = SITES_FUNC_READ;
		if (len < 32)
			len = 32;
		buf = xmalloc(len);
		got = memio_read(ds->pid, tid, st->func, buf, len);
		if (got < 0 || (uint64_t)got < st->site - st->func + st->len) {
			free(buf);
			return got < 0 ? (int)got : -EIO;
		}
		/* the bytes before the patch, as detour_insert() planned them */
		memcpy(buf + (st->site - st->func), st->orig, st->len);
		r = detour_moved_insn(st->func, buf, (size_t)got, st->size, slot, insn, at);
		free(buf);
		return r;
	}
	*at = insn;
	return 0;
}

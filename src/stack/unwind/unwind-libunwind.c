/*
 * unwind-libunwind.c - DWARF unwinding with libunwind-ptrace over a
 * stack snapshot (--unwind=dwarf).
 *
 * One libunwind address space per process, created once, with
 * UNW_CACHE_GLOBAL: after the first walks through a code path, libunwind
 * finds each frame's register rules in its cache and no longer looks up
 * unwind tables.  Recreating it (or caching nothing) costs milliseconds
 * per walk, so it lives as long as the process and is only flushed
 * (unw_flush_cache) when code is mapped or unmapped.
 *
 * Accessors: a copy of _UPT_accessors in which access_mem reads the
 * snapshot (then the process, through a one-page cache) and access_reg
 * returns the snapshot's registers; unwind-table lookups stay with
 * _UPT_find_proc_info, which reads /proc/PID/maps and the ELF files.
 * libunwind passes the _UPT handle as the accessors' argument (also to
 * the calls it makes from inside _UPT_find_proc_info), so the snapshot
 * of the walk in progress is in a file-scope variable: walks are never
 * nested, and memtap is single-threaded.
 *
 * Compiled only with libunwind-ptrace (HAVE_LIBUNWIND).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "stack/unwind/unwind.h"

#ifdef HAVE_LIBUNWIND

#include <libunwind-ptrace.h>

#include "stack/modules.h"
#include "util/xmalloc.h"

struct lu_state {
	unw_addr_space_t as;
	void *upt;			/* _UPT_create(pid) */
	struct unwind_memcache cache;
	unsigned code_gen;		/* the unwinder's, at the last flush */
};

/* The walk in progress (see above). */
static struct lu_state *cur_state;
static const struct stack_snapshot *cur_snap;
static unw_accessors_t lu_accessors;

static int lu_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
			 int write, void *arg)
{
	(void)as;
	(void)arg;
	if (write || !cur_snap)
		return -UNW_EINVAL;
	if (unwind_memcache_read(&cur_state->cache, cur_snap, addr, val, sizeof(*val)) < 0)
		return -UNW_EINVAL;
	return 0;
}

static int lu_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val,
			 int write, void *arg)
{
	uint64_t v;

	(void)as;
	(void)arg;
	if (write)
		return -UNW_EREADONLYREG;
	if (!cur_snap || arch_unw_get(&cur_snap->regs, reg, &v) < 0)
		return -UNW_EBADREG;
	*val = v;
	return 0;
}

static int lu_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
			   int write, void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int lu_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

static int lu_init(struct unwinder *uw)
{
	struct lu_state *st;

	if (!lu_accessors.find_proc_info) {
		lu_accessors = _UPT_accessors;
		lu_accessors.access_mem = lu_access_mem;
		lu_accessors.access_reg = lu_access_reg;
		lu_accessors.access_fpreg = lu_access_fpreg;
		lu_accessors.resume = lu_resume;
	}
	st = xcalloc(1, sizeof(*st));
	st->as = unw_create_addr_space(&lu_accessors, 0);
	if (!st->as) {
		free(st);
		errno = ENOMEM;
		return -1;
	}
	unw_set_caching_policy(st->as, UNW_CACHE_GLOBAL);
	st->upt = _UPT_create(uw->pid);
	if (!st->upt) {
		unw_destroy_addr_space(st->as);
		free(st);
		errno = ENOMEM;
		return -1;
	}
	uw->priv = st;
	return 0;
}

static void lu_fini(struct unwinder *uw)
{
	struct lu_state *st = uw->priv;

	if (!st)
		return;
	_UPT_destroy(st->upt);
	unw_destroy_addr_space(st->as);
	free(st);
	uw->priv = NULL;
}

static void lu_maps_changed(struct unwinder *uw)
{
	struct lu_state *st = uw->priv;
	void *upt;

	unw_flush_cache(st->as, 0, 0);
	/* _UPT keeps the last ELF image it mapped, by address range. */
	upt = _UPT_create(uw->pid);
	if (upt) {
		_UPT_destroy(st->upt);
		st->upt = upt;
	}
}

/* The registers of the cursor's frame, at pc (for unwind_stub_step()). */
static int cursor_regs(unw_cursor_t *c, const struct stack_snapshot *s, unw_word_t pc,
		       arch_regs_t *r)
{
	unw_word_t sp;

	*r = s->regs;
	if (unw_get_reg(c, UNW_REG_SP, &sp) < 0)
		return -1;
	for (int i = 0; i < ARCH_NSAVED; i++) {
		unw_word_t v;

		if (unw_get_reg(c, arch_unw_saved[i], &v) == 0)
			arch_set_saved_reg(r, i, v);
	}
	arch_set_pc(r, pc);
	arch_set_sp(r, sp);
	return 0;
}

/*
 * A frame in a stub (no CFI; stack/modules.h) ends libunwind's walk:
 * unwind_stub_step() gives its caller's registers, and a new walk goes
 * on from them with the caller's return address less 1 as its pc (the
 * call instruction's rule), stored as the return address.  The stub's
 * pc stays only as the exact pc of the stop.
 */
static int lu_walk(struct unwinder *uw, const struct stack_snapshot *s,
		   uint64_t *pcs, int max_depth)
{
	struct lu_state *st = uw->priv;
	struct stack_snapshot next = *s;
	unw_cursor_t cursor;
	int n = 0, bump = 0;

	cur_state = st;
	cur_snap = &next;
	unwind_memcache_reset(&st->cache);
	if (uw->code_gen != st->code_gen) {
		/* code written where there was code: no rule of the old */
		st->code_gen = uw->code_gen;
		unw_flush_cache(st->as, 0, 0);
	}
	for (;;) {
		int first = n, stub = 0, go = 0;

		if (unw_init_remote(&cursor, st->as, st->upt) < 0)
			break;
		while (n < max_depth) {
			unw_word_t ip;

			if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			ip = arch_ra_strip(ip);
			/*
			 * No unw_is_signal_frame() here: on x86-64 it reads the
			 * code at every pc from the process, which would double
			 * the cost of a walk; a frame a signal interrupted keeps
			 * its exact pc.
			 */
			pcs[n] = n == first ? ip + (unw_word_t)bump : ip;
			n++;
			if (modules_find_stubs(uw->pm, ip)) {
				stub = cursor_regs(&cursor, &next, ip, &next.regs) == 0;
				break;
			}
			if (n > 1 && s->go_g0) {
				arch_regs_t r;

				/* Go's switch to g0: on from the goroutine's frame */
				if (cursor_regs(&cursor, &next, ip, &r) == 0 &&
				    (go = unwind_go_step(uw->pm, s, &r)) != 0) {
					next.regs = r;
					break;
				}
			}
			if (unw_step(&cursor) <= 0)
				break;
		}
		if (go == 2 && n < max_depth)
			pcs[n++] = s->go_pc;
		if (go > 0 && n < max_depth) {
			arch_set_pc(&next.regs, arch_pc(&next.regs) - 1);
			bump = 1;
			continue;
		}
		if (go)
			break;	/* the end of g0, or of pcs */
		if (!stub || unwind_stub_step(uw, s, &next.regs) <= 0)
			break;
		if (n > 1)
			n--;
		if (n >= max_depth)
			break;
		arch_set_pc(&next.regs, arch_pc(&next.regs) - 1);
		bump = 1;
	}
	cur_snap = NULL;
	cur_state = NULL;
	stack_snapshot_marks(s, &next);
	return n;
}

static const struct unwinder_ops lu_ops = {
	.name = "dwarf",
	.init = lu_init,
	.fini = lu_fini,
	.maps_changed = lu_maps_changed,
	.walk = lu_walk,
};

const struct unwinder_ops *const unwinder_libunwind_ops = &lu_ops;

#else /* !HAVE_LIBUNWIND */

const struct unwinder_ops *const unwinder_libunwind_ops = NULL;

#endif /* HAVE_LIBUNWIND */

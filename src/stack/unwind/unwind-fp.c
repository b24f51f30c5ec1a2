/*
 * unwind-fp.c - frame-pointer walk over a stack snapshot.
 *
 * Code built with -fno-omit-frame-pointer keeps, in every frame, the
 * caller's fp at [fp] and the return address at [fp + 8] (arch.h's
 * ARCH_FRAME_*: the same on x86-64 and arm64).  The
 * walk follows that chain while it goes up the stack and lands on
 * return addresses in code.
 *
 * The leaf needs care: a stop in a syscall wrapper or at a function's
 * first instruction (a breakpoint) has no frame of its own yet, so fp
 * is still the caller's frame and the caller's own return address would
 * be skipped; its return address is where a call leaves it
 * (arch_entry_ra(): the word at sp on x86-64, x30 on arm64).  That is
 * taken as frame 1 when it points into code of a known module (needs
 * the module list: without it the leaf's caller is lost).  Where the
 * leaf did push a frame, [sp] is the saved fp, a stack address,
 * and is ignored; where the return address is in a register (arm64's
 * x30), the leaf's frame record holding it says the chain gives it.
 *
 * When that word is no code address, the leaf's code followed to its ret
 * (stack/unwind/unwind-insn.h) gives its return address and the caller's fp,
 * whether or not the leaf has a frame: a leaf without frame pointer
 * that pushed other registers (musl's mmap) keeps its caller.  The
 * leaf's rule is cached per pc.
 *
 * A return address into a stub of the in-target probes (no frame
 * pointer there, a frame of known layout) is stepped over to the
 * stub's caller (unwind_stub_step()).
 *
 * Libraries built without frame pointers (Debian's glibc) break the
 * chain: fp may hold anything there.  The checks below stop the walk
 * at the first implausible link rather than report garbage.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stack/modules.h"
#include "stack/unwind/unwind-insn.h"
#include "stack/unwind/unwind.h"
#include "util/xmalloc.h"

/* How far beyond the snapshot a frame may lie (then read from the process). */
#define FP_MAX_STACK (64u << 20)

/* Leaf rules, direct-mapped on the pc. */
#define FP_LEAF_RULES 256

struct fp_leaf {
	uint64_t pc;		/* 0: empty */
	int ok;			/* the analysis found a rule */
	struct insn_rule rule;
};

struct fp_state {
	struct unwind_memcache cache;
	const struct stack_snapshot *snap;	/* the walk in progress */
	struct fp_leaf leaf[FP_LEAF_RULES];
	unsigned code_gen;	/* the unwinder's, when leaf was emptied */
};

static int fp_init(struct unwinder *uw)
{
	uw->priv = xcalloc(1, sizeof(struct fp_state));
	return 0;
}

static void fp_maps_changed(struct unwinder *uw)
{
	struct fp_state *st = uw->priv;

	memset(st->leaf, 0, sizeof(st->leaf));
}

static int fp_code_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fp_state *st = arg;

	return unwind_memcache_read_code(&st->cache, st->snap, addr, buf, len);
}

/* The rule of the leaf at pc (the exact pc of the stop), or NULL. */
static const struct insn_rule *leaf_rule(struct unwinder *uw, const struct stack_snapshot *s,
					 uint64_t pc)
{
	struct fp_state *st = uw->priv;
	struct fp_leaf *l = &st->leaf[(pc * 0x9e3779b97f4a7c15ULL) >> 56];

	if (l->pc != pc) {
		const struct insn_code code = { fp_code_read, st, unwind_insn_probe_entry, uw->pm };

		st->snap = s;
		l->pc = pc;
		l->ok = unwind_insn_rule(&code, pc, 1, &l->rule) == 0;
		st->snap = NULL;
	}
	return l->ok ? &l->rule : NULL;
}

/*
 * The leaf's caller by its rule: its return address into *ra, its
 * stack pointer and fp into *sp and *fp.  0, or -1.
 */
static int leaf_step(struct unwinder *uw, const struct stack_snapshot *s, uint64_t *ra,
		     uint64_t *sp, uint64_t *fp)
{
	struct fp_state *st = uw->priv;
	const struct insn_rule *r = leaf_rule(uw, s, arch_pc(&s->regs));
	uint64_t cfa, nfp = *fp;

	/* a return address still in its register: not on the stack this walk reads */
	if (!r || !r->ra_off)
		return -1;
	cfa = (r->cfa_reg == INSN_REG_SP ? *sp : *fp) + (uint64_t)(int64_t)r->cfa_off;
	if (cfa <= *sp || cfa - *sp > FP_MAX_STACK ||
	    unwind_memcache_read(&st->cache, s, cfa + (uint64_t)(int64_t)r->ra_off, ra,
				 sizeof(*ra)) < 0 ||
	    (r->fp_off && unwind_memcache_read(&st->cache, s, cfa + (uint64_t)(int64_t)r->fp_off,
					       &nfp, sizeof(nfp)) < 0))
		return -1;
	*sp = cfa;
	*fp = nfp;
	return 0;
}

static void fp_fini(struct unwinder *uw)
{
	free(uw->priv);
	uw->priv = NULL;
}

static int is_code(const struct unwinder *uw, uint64_t addr)
{
	if (addr < 4096)
		return 0;
	if (!uw->pm)
		return 1;
	return modules_find_range(uw->pm, addr) != NULL;
}

/*
 * The frame at *pc, with *sp and *fp, in a stub (stack/modules.h): the
 * caller's instead.  1 stepped, 0 no stub, -1 the walk ends there.
 */
static int fp_stub(struct unwinder *uw, const struct stack_snapshot *s, uint64_t *pc,
		   uint64_t *sp, uint64_t *fp)
{
	arch_regs_t r = s->regs;
	int k;

	arch_set_pc(&r, *pc);
	arch_set_sp(&r, *sp);
	arch_set_fp(&r, *fp);
	k = unwind_stub_step(uw, s, &r);
	if (k > 0) {
		*pc = arch_pc(&r);
		*sp = arch_sp(&r);
		*fp = arch_fp(&r);
	}
	return k;
}

/*
 * The frame at *pc (a return address), with *sp and *fp, returns into
 * Go's switch to g0: unwind_go_step()'s 1 or 2, and they are the
 * goroutine's frame (2: s->go_pc's caller's); -1 the walk ends; else 0.
 */
static int fp_go(struct unwinder *uw, const struct stack_snapshot *s, uint64_t *pc,
		 uint64_t *sp, uint64_t *fp)
{
	arch_regs_t r;
	int k;

	if (!s->go_g0)
		return 0;
	r = s->regs;
	arch_set_pc(&r, *pc);
	arch_set_sp(&r, *sp);
	arch_set_fp(&r, *fp);
	if ((k = unwind_go_step(uw->pm, s, &r)) <= 0)
		return k;
	*pc = arch_pc(&r);
	*sp = arch_sp(&r);
	*fp = arch_fp(&r);
	return k;
}

/* link[] below reads a frame record whole: the caller's fp, then its return address. */
_Static_assert(ARCH_FRAME_FP_OFF == 0 && ARCH_FRAME_RA_OFF == 8,
	       "a frame record is the caller's fp, then the return address");

static int fp_walk(struct unwinder *uw, const struct stack_snapshot *s,
		   uint64_t *pcs, int max_depth)
{
	struct fp_state *st = uw->priv;
	uint64_t sp = arch_sp(&s->regs);
	uint64_t fp = arch_fp(&s->regs);
	uint64_t pc = arch_pc(&s->regs);
	uint64_t limit = sp + FP_MAX_STACK;	/* the goroutine's, after Go's switch */
	int n = 0, k;

	unwind_memcache_reset(&st->cache);
	if (uw->code_gen != st->code_gen) {
		/* code written where there was code: its leaves' rules again */
		st->code_gen = uw->code_gen;
		memset(st->leaf, 0, sizeof(st->leaf));
	}
	pcs[n++] = pc;
	if ((k = fp_stub(uw, s, &pc, &sp, &fp)) < 0)
		return n;
	if (k > 0) {
		/* stopped in a stub: on from its caller, in the middle of its code */
		if (n < max_depth)
			pcs[n++] = pc;
	} else if (n < max_depth && uw->pm) {
		/*
		 * the leaf's caller: where its return address is at its
		 * entry (the word at sp, or a register), else by the
		 * leaf's rule
		 */
		for (int how = 0; how < 2; how++) {
			uint64_t w, wsp = how ? sp : sp + ARCH_RET_POP, wfp = fp;

			int in_mem = how == 0 && arch_entry_ra(&s->regs, &w) > 0;
			uint64_t rec;

			if (how == 0 ? in_mem && stack_snapshot_read(s, sp, &w, sizeof(w)) < 0
				     : leaf_step(uw, s, &w, &wsp, &wfp) < 0)
				continue;
			w = arch_ra_strip(w);
			/* in a register, and the leaf stored it in a frame record at fp: the chain's */
			if (how == 0 && !in_mem && fp >= sp &&
			    unwind_memcache_read(&st->cache, s, fp + ARCH_FRAME_RA_OFF, &rec,
						 sizeof(rec)) == 0 && arch_ra_strip(rec) == w)
				break;
			if ((k = fp_stub(uw, s, &w, &wsp, &wfp)) < 0)
				return n;
			if (k > 0 || is_code(uw, w)) {
				pcs[n++] = w;
				sp = wsp;
				fp = wfp;
				break;
			}
		}
	}
	while (n < max_depth) {
		uint64_t link[2], lsp;

		if (fp < sp || fp >= limit || (fp & 7))
			break;
		if (unwind_memcache_read(&st->cache, s, fp, link, sizeof(link)) < 0)
			break;
		if (link[0] <= fp)
			link[0] = 0;	/* the last link */
		link[1] = arch_ra_strip(link[1]);
		lsp = fp + ARCH_FRAME_SIZE;
		/* a return into a stub: the stub's caller (the stubs keep fp) */
		if ((k = fp_stub(uw, s, &link[1], &lsp, &link[0])) < 0)
			break;
		if (!k && !is_code(uw, link[1]))
			break;
		/* A leaf with a frame: [sp] was not taken, nothing to drop. */
		pcs[n++] = link[1];
		if ((k = fp_go(uw, s, &link[1], &lsp, &link[0])) < 0)
			break;
		if (k > 0) {
			/* the goroutine's frame, then its chain */
			if (k == 2 && n < max_depth)
				pcs[n++] = s->go_pc;
			if (n < max_depth)
				pcs[n++] = link[1];
			sp = lsp;
			fp = link[0];
			limit = sp + FP_MAX_STACK;
			continue;
		}
		if (!link[0])
			break;
		sp = lsp;
		fp = link[0];
	}
	return n;
}

const struct unwinder_ops unwinder_fp_ops = {
	.name = "fp",
	.init = fp_init,
	.fini = fp_fini,
	.maps_changed = fp_maps_changed,
	.walk = fp_walk,
};

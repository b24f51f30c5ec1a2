/*
 * detour.c (aarch64) - where a detour goes and what it displaces, the
 * code memtap writes into its slot, and the patch (see
 * arch/detour-plan.h; the slot's layout is stub-cpu.h's).
 *
 * The patch is one `B slot`: 4 bytes, one aligned word that a thread
 * running into it sees whole, reaching +-128 MiB (the stubs are mapped
 * that near each patched module).  So a detour displaces one
 * instruction: the function's first, or its second when the first is
 * a landing pad (BTI c, BTI j, BTI jc, PACIASP, PACIBSP), which stays
 * in place where an indirect call into a PROT_BTI page must find it.
 * BTI j counts: a function entered by BR (a PLT stub's `br x17`) may
 * start with it.  A bare BTI (HINT #32, no target) accepts no branch
 * and is not one; PACIAZ, PACIA1716 and the other hints are ordinary
 * instructions, displaced as any other.  Only the first word is a pad:
 * the one after it is reached sequentially (`bti c; paciasp`: PACIASP
 * is displaced, and runs in the copy).
 *
 * Planning refuses a function (with why) whose displaced instruction
 * a64_decode() will not move (an exclusive load or store, a BRK, a
 * signed call, undefined), that is shorter than its pad and one
 * instruction, or where a branch (B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ;
 * ADR, which may name a computed jump's target) lands on the displaced
 * instruction other than at the function's own entry: behind a pad,
 * a branch to the site is no call, yet the glue would take it as one,
 * and the displaced instruction branching to itself would loop through
 * the glue.  Every pc-relative form (ADR, ADRP, the literal loads,
 * PRFM, B, BL, B.cond, CBZ, TBZ) is relocated by reloc.c, with
 * A64_RELOC_BTI: a branch target out of B's reach is refused rather
 * than reached by BR x16 (arch_detour_in_reach() refuses such a slot
 * first).  An instruction after which nothing in the copy runs (B, BL,
 * BR, BLR, RET: A64_ENDS) ends the plan (p->tail): its copy has no B
 * back.
 *
 * The copy at DT_ORIG: the function's PACIASP or PACIBSP again when
 * that was its pad (the glue's XPACLRI took the signature off x30, so
 * that the function's epilogue authenticates what the copy signs with
 * the sp the copy is entered with: the caller's for an entry probe, the
 * glue's frame for a result probe); the relocated instruction; B back
 * to the instruction after it.  Unused words of the slot are BRK #0.
 *
 * Pure functions of words and addresses, so the unit tests run them on
 * any host (tests/unit/a64-detour*): words go to and from the target's
 * little-endian memory with a64_get() and a64_put().
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/detour-plan.h"
#include "arch/stub-abi.h"

#define A64_XPACLRI 0xd50320ffu		/* hint #7 */
#define A64_PACIASP 0xd503233fu
#define A64_PACIBSP 0xd503237fu

static uint32_t word_at(const uint8_t *buf, size_t off)
{
	return a64_get(buf + off);
}

size_t arch_landing_pad(const uint8_t *buf, size_t n)
{
	uint32_t w;

	if (n < A64_INSN_LEN)
		return 0;
	w = word_at(buf, 0);
	return a64_landing_pad(&w, 1);
}

/* Does the pad leave x30 signed (the copy signs it again)? */
static int pad_signs(uint32_t pad)
{
	return pad == A64_PACIASP || pad == A64_PACIBSP;
}

/* Is in a branch (or ADR) to [lo, hi)? */
static int lands_in(const struct a64_insn *in, uint64_t lo, uint64_t hi)
{
	switch (in->kind) {
	case A64_ADR:
	case A64_B:
	case A64_BL:
	case A64_BCOND:
	case A64_CB:
	case A64_TB:
		return in->target >= lo && in->target < hi;
	default:
		return 0;
	}
}

/* Does a branch of the function land in [site, site + len), other than at func itself? */
static int branch_into(uint64_t func, const uint8_t *buf, size_t size, uint64_t site,
		       unsigned len)
{
	for (size_t off = 0; off + A64_INSN_LEN <= size; off += A64_INSN_LEN) {
		struct a64_insn in;

		if (a64_decode(word_at(buf, off), func + off, &in) == 0 &&
		    lands_in(&in, site, site + len) && in.target != func)
			return 1;
	}
	return 0;
}

/* Is word an exclusive load or store (insn.c's test)? */
static int exclusive(uint32_t w)
{
	return (w & 0x3f800000) == 0x08000000 && !((w & 0x00200000) && !(w >> 31));
}

int arch_detour_plan(uint64_t func, const uint8_t *buf, size_t size, struct plan *p,
		     const char **why)
{
	size_t off = arch_landing_pad(buf, size);
	struct a64_insn *in = &p->cpu.insn[0];
	uint32_t w;
	int err;

	memset(p, 0, sizeof(*p));
	if (func & 3) {
		*why = "its address is not 4-aligned";
		return -ENOTSUP;
	}
	if (off + A64_INSN_LEN > size) {
		*why = "the function is too short";
		return -ENOTSUP;
	}
	p->cpu.pad = off ? word_at(buf, 0) : 0;
	p->site = func + off;
	w = word_at(buf, off);
	err = a64_decode(w, p->site, in);
	if (err < 0) {
		*why = err == -EBUSY ? "a brk in its entry" :
		       exclusive(w) ? "an exclusive load or store in its entry" :
		       "an entry instruction that cannot be relocated";
		return -ENOTSUP;
	}
	p->len = A64_INSN_LEN;
	p->ninsns = 1;
	p->tail = !!(in->flags & A64_ENDS);
	if (lands_in(in, p->site, p->site + p->len) ||
	    branch_into(func, buf, size, p->site, p->len)) {
		*why = "a branch into its first instructions";
		return -ENOTSUP;
	}
	return 0;
}

size_t arch_syscall_sites(uint64_t func, const uint8_t *buf, size_t size, uint64_t *sites,
			  size_t max)
{
	(void)func;
	(void)buf;
	(void)size;
	(void)sites;
	(void)max;
	return 0;	/* not decoded on arm64 yet: no syscall is let through a launch filter */
}

size_t arch_detour_padded_size(uint64_t func, const uint8_t *buf, size_t got, size_t size)
{
	uint64_t end = (func + size + 15) & ~(uint64_t)15;
	size_t off = size, room = ARCH_PATCH_LEN + arch_landing_pad(buf, size);	/* it stays */

	if (!size || size >= room || (func & 3) || (size & 3) || end - func < room ||
	    end - func > got)
		return size;
	for (; func + off < end; off += A64_INSN_LEN)
		if (word_at(buf, off) != A64_NOP)
			return size;
	return off;
}

/* words[0..n) into code as the target holds them. */
static void put_words(uint8_t *code, const uint32_t *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a64_put(code + 4 * i, words[i]);
}

/* BRK #0 over code[0..len). */
static void fill_brk(uint8_t *code, size_t len)
{
	for (size_t i = 0; i + A64_INSN_LEN <= len; i += A64_INSN_LEN)
		a64_put(code + i, A64_BRK0);
}

int arch_detour_relocate(struct plan *p, uint64_t at, uint8_t *code)
{
	uint32_t tmp[A64_RELOC_MAX / 4], b;
	unsigned used = 0;
	int n;

	if ((at & 3) || p->ninsns != 1)
		return -EINVAL;
	fill_brk(code, DT_ORIG_ROOM);
	if (pad_signs(p->cpu.pad)) {
		a64_put(code, p->cpu.pad);
		used += A64_INSN_LEN;
	}
	n = a64_relocate(&p->cpu.insn[0], at + used, A64_RELOC_BTI, tmp, sizeof(tmp));
	if (n < 0)
		return n;
	if (used + (unsigned)n + (p->tail ? 0 : A64_INSN_LEN) > DT_ORIG_ROOM)
		return -ENOSPC;
	put_words(code + used, tmp, (size_t)n / 4);
	p->moved[0] = used;
	used += (unsigned)n;
	if (!p->tail) {
		if (a64_enc_b(at + used, p->site + p->len, &b) < 0)
			return -ERANGE;
		a64_put(code + used, b);
	}
	p->moved[1] = used;
	return 0;
}

int arch_detour_moved_pc(const struct plan *p, uint64_t at, uint64_t pc, uint64_t *to)
{
	if (pc == p->site) {
		*to = at + p->moved[0];
		return 0;
	}
	if (pc != p->site + p->len)
		return -1;
	/* after an instruction that ends the plan: no instruction of its path */
	*to = p->tail ? pc : at + p->moved[1];
	return 0;
}

int arch_detour_in_reach(const struct plan *p, uint64_t slot)
{
	const struct a64_insn *in = &p->cpu.insn[0];

	if (!arch_in_reach(slot, p->site) || !arch_in_reach(slot, p->site + p->len))
		return 0;
	switch (in->kind) {
	case A64_B:
	case A64_BL:
	case A64_BCOND:
	case A64_CB:
	case A64_TB:
		return arch_in_reach(slot, in->target);
	default:
		return 1;	/* the others reach any address (reloc.c) */
	}
}

/*
 * The glue's words.  enc_* encode one instruction; struct glue writes
 * them at their addresses.
 */
struct glue {
	uint8_t *code;
	uint64_t s;		/* the slot's address */
	size_t k;		/* bytes written */
};

static void emit(struct glue *g, uint32_t w)
{
	a64_put(g->code + g->k, w);
	g->k += A64_INSN_LEN;
}

static uint64_t here(const struct glue *g)
{
	return g->s + g->k;
}

/* B (link 0) or BL (link 1) to target, from the next word. */
static void emit_b(struct glue *g, unsigned link, uint64_t target)
{
	int64_t off = (int64_t)(target - here(g));

	emit(g, link << 31 | 0x14000000 | ((uint32_t)(off >> 2) & 0x3ffffff));
}

/* w9 = desc: MOVZ w9, #lo; MOVK w9, #hi, lsl #16. */
static void emit_desc(struct glue *g, uint32_t desc)
{
	emit(g, 0x52800000 | (desc & 0xffff) << 5 | 9);
	emit(g, 0x72a00000 | (desc >> 16) << 5 | 9);
}

/* STP (load 0; pre-indexed when index) or LDP (load 1; post-indexed) of xa, xb at [sp, #off]. */
static uint32_t enc_pair(int load, int index, unsigned a, unsigned b, int off)
{
	uint32_t op = load ? (index ? 0xa8c00000 : 0xa9400000) :
			     (index ? 0xa9800000 : 0xa9000000);

	return op | ((uint32_t)(off / 8) & 0x7f) << 15 | b << 10 | 31 << 5 | a;
}

/* Save (load 0) or restore (load 1) x0-x8 and x30 in the glue's frame. */
static void emit_frame(struct glue *g, int load)
{
	static const unsigned regs[][2] = { { 0, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 }, { 8, 30 } };

	if (!load) {
		emit(g, enc_pair(0, 1, 0, 1, -DT_GLUE_FRAME));
		for (unsigned i = 1; i < 5; i++)
			emit(g, enc_pair(0, 0, regs[i][0], regs[i][1], 16 * (int)i));
		return;
	}
	for (unsigned i = 4; i > 0; i--)
		emit(g, enc_pair(1, 0, regs[i][0], regs[i][1], 16 * (int)i));
	emit(g, enc_pair(1, 1, 0, 1, DT_GLUE_FRAME));
}

/*
 * A jump (call) to a common routine, at base + off; from a far page,
 * LDR x16 from the far page's header word at far + f, BR (BLR) x16.
 */
static void emit_common(struct glue *g, int call, uint64_t base, const uint8_t *routine,
			uint64_t far, unsigned f)
{
	int64_t off;

	if (!far) {
		emit_b(g, (unsigned)call, base + (uint64_t)(routine - dt_template));
		return;
	}
	off = (int64_t)(far + f - here(g));
	emit(g, 0x58000000 | ((uint32_t)(off >> 2) & 0x7ffff) << 5 | 16);	/* ldr x16, lit */
	emit(g, (call ? 0xd63f0000 : 0xd61f0000) | 16 << 5);			/* blr/br x16 */
}

void arch_detour_glue(uint64_t base, uint64_t far, uint64_t s, int result, int sync,
		      uint32_t desc, uint8_t *code)
{
	struct glue g = { code, s, 0 };
	uint64_t orig = s + DT_ORIG;

	fill_brk(code, DT_ORIG);
	emit(&g, A64_XPACLRI);
	if (dt_prefiltered(result, sync, desc)) {
		emit_desc(&g, desc);
		emit(&g, 0x10000000 | ((uint32_t)(-(int64_t)g.k) & 3) << 29 |
			 ((uint32_t)(-(int64_t)g.k >> 2) & 0x7ffff) << 5 | 10);	/* adr x10, s */
		emit_common(&g, 0, base, dt_common_prefilter, far, F_PREFILTER);
		g.k = DT_PF_LEN;
	}
	emit_frame(&g, 0);
	if (result) {
		emit_b(&g, 1, orig);
		emit_desc(&g, desc);
		emit_common(&g, 0, base, dt_common_result, far, F_RESULT);
		return;
	}
	emit_desc(&g, desc);
	emit_common(&g, 1, base, sync ? dt_common_sync : dt_common_entry, far,
		    sync ? F_SYNC : F_ENTRY);
	emit_frame(&g, 1);
	if (g.k < DT_ORIG)
		emit_b(&g, 0, orig);	/* else it ends at the copy: falls into it */
}

void arch_detour_patch(uint8_t *patch, uint64_t site, uint64_t to)
{
	uint32_t b;

	/* arch_detour_in_reach() chose a slot a B reaches: else a trap, never a wild jump */
	if (a64_enc_b(site, to, &b) < 0)
		b = A64_BRK0;
	a64_put(patch, b);
}

uint64_t arch_patched_target(const uint8_t *buf, size_t n, uint64_t addr, size_t *off)
{
	uint32_t w;
	size_t len;

	*off = arch_landing_pad(buf, n);
	if (n < *off + ARCH_PATCH_LEN)
		return 0;
	w = word_at(buf, *off);
	if ((w & 0xfc000000) != 0x14000000)	/* b */
		return 0;
	return a64_patched_target(&w, 1, addr + *off, &len);
}

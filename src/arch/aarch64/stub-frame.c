/*
 * stub-frame.c (aarch64) - the frames of the stub mapping's code
 * (arch/stub-frame.h): memtap wrote that code, and it has no CFI.
 *
 * At each instruction, where the frame's return address is and how far
 * the caller's sp is above sp (the CFA) are found by following the code
 * from its entry points: the common routines (decoded once, in
 * memtap's own copy of the template: dt_common_result, entered with the
 * glue's frame on the stack, dt_common_entry, dt_common_sync and
 * dt_common_prefilter, entered with the return address in x30, and
 * every routine they call) and a slot's glue and relocated entry (its
 * words as probe/ has them).  ADD and SUB of sp, sp, #imm, the STP, LDP,
 * STR and LDR of x registers at sp with or without writeback move the
 * CFA and save or restore x30 and x19-x29; a branch carries the state
 * to its target, a BL starts its target with the return address in x30
 * and loses x30 here; after a RET, a B, a BR or a BRK the code is
 * unknown until a branch target or an entry point; any other writeback
 * of sp makes it unknown.
 *
 * The frame stub-frame.h can say: the return address in x30 where sp is
 * the caller's (ra_off STUB_RA_IN_REG: at an entry point, in the glue
 * before its frame, in the relocated entry), or at sp + ra_off with the
 * caller's sp at sp + ra_off + 8 (the common routines keep x30 in the
 * top word of each frame: detour-stubs.S); anything else, as between
 * the LDP of x30 and the LDP that pops the glue's frame, has none (-1).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "cpu.h"
#include "arch/stub-frame.h"
#include "arch/stub-abi.h"
#include "insn.h"

#define RA_REG INT16_MIN	/* the return address in x30 */
#define NONE INT16_MAX		/* unknown, or a register not saved */

/* The state before an instruction: cfa -1 = unknown; offsets from the CFA. */
struct fstate {
	int16_t cfa;			/* the caller's sp at sp + cfa */
	int16_t ra;			/* RA_REG, or the return address at CFA + ra */
	int16_t saved[ARCH_NSAVED];	/* x19 + i at CFA + saved[i], or NONE */
};

static void unknown(struct fstate *f)
{
	f->cfa = -1;
	f->ra = NONE;
	for (int i = 0; i < ARCH_NSAVED; i++)
		f->saved[i] = NONE;
}

static void entry_state(struct fstate *f, int16_t cfa, int16_t ra)
{
	unknown(f);
	f->cfa = cfa;
	f->ra = ra;
}

/* Register r stored at CFA + at (store 1), or loaded from it (store 0). */
static void reg_at(struct fstate *f, unsigned r, int64_t at, int store)
{
	int16_t v = store ? (int16_t)at : NONE;

	if (r == 30)
		f->ra = store ? (int16_t)at : RA_REG;
	else if (r >= 19 && r <= 29)
		f->saved[r - 19] = v;
}

static int64_t sext(uint32_t v, unsigned bits)
{
	return (int64_t)((uint64_t)v << (64 - bits)) >> (64 - bits);
}

/*
 * The state after the word w at off, from cur; branch targets into
 * pend.  0: it goes on to the next word; -1: the code after is unknown.
 */
static int step(uint32_t w, size_t off, size_t len, struct fstate *cur, struct fstate *pend)
{
	unsigned rt = w & 31, rn = w >> 5 & 31, rt2 = w >> 10 & 31;
	int64_t target = -1, imm;
	int load;

	if ((w & 0x7c000000) == 0x14000000) {		/* B, BL */
		target = (int64_t)off + sext(w & 0x3ffffff, 26) * 4;
		if (w & 0x80000000) {
			if (target >= 0 && (size_t)target < len && pend[target].cfa < 0)
				entry_state(&pend[target], 0, RA_REG);
			if (cur->ra == RA_REG)
				cur->ra = NONE;		/* x30 is the call's now */
			return 0;
		}
		if (target >= 0 && (size_t)target < len && pend[target].cfa < 0)
			pend[target] = *cur;
		return -1;
	}
	if ((w & 0xff000010) == 0x54000000)		/* B.cond */
		target = (int64_t)off + sext(w >> 5 & 0x7ffff, 19) * 4;
	else if ((w & 0x7e000000) == 0x34000000)	/* CBZ, CBNZ */
		target = (int64_t)off + sext(w >> 5 & 0x7ffff, 19) * 4;
	else if ((w & 0x7e000000) == 0x36000000)	/* TBZ, TBNZ */
		target = (int64_t)off + sext(w >> 5 & 0x3fff, 14) * 4;
	if (target >= 0) {
		if ((size_t)target < len && pend[target].cfa < 0)
			pend[target] = *cur;
		return 0;
	}
	if ((w & 0xfffffc1f) == 0xd65f0000 || (w & 0xfffffc1f) == 0xd61f0000 ||
	    (w & 0xffe0001f) == 0xd4200000)		/* RET, BR, BRK */
		return -1;
	if ((w & 0xfffffc1f) == 0xd63f0000) {		/* BLR */
		if (cur->ra == RA_REG)
			cur->ra = NONE;
		return 0;
	}
	if ((w & 0x1f800000) == 0x11000000 && rt == 31 && !(w & 0x20000000)) {
		/* ADD, SUB (immediate) to sp (not CMP, CMN: to xzr): of sp, 64 bits */
		imm = (int64_t)(w >> 10 & 0xfff) << ((w >> 22 & 1) ? 12 : 0);
		if (rn != 31 || !(w & 0x80000000)) {
			cur->cfa = -1;
			return 0;
		}
		cur->cfa = (int16_t)(cur->cfa + ((w & 0x40000000) ? imm : -imm));
		return 0;
	}
	if (rn != 31)
		return 0;
	if ((w & 0xfe000000) == 0xa8000000) {
		/* STP, LDP of x registers at sp: post-index, offset, pre-index */
		unsigned mode = w >> 23 & 3;

		imm = sext(w >> 15 & 0x7f, 7) * 8;
		load = w >> 22 & 1;
		if (mode == 0)
			goto other;			/* no-allocate pair: not ours */
		if (mode == 3)
			cur->cfa = (int16_t)(cur->cfa - imm);
		{
			int64_t at = (mode == 1 ? 0 : mode == 3 ? 0 : imm) - cur->cfa;

			reg_at(cur, rt, at, !load);
			reg_at(cur, rt2, at + 8, !load);
		}
		if (mode == 1)
			cur->cfa = (int16_t)(cur->cfa - imm);
		return 0;
	}
	if ((w & 0xffc00000) == 0xf9000000 || (w & 0xffc00000) == 0xf9400000) {
		/* STR, LDR x at sp + imm12 * 8 */
		reg_at(cur, rt, (int64_t)(w >> 10 & 0xfff) * 8 - cur->cfa, !(w & 0x00400000));
		return 0;
	}
	if ((w & 0xffa00400) == 0xf8000400) {
		/* STR, LDR x with writeback: post-index (bit 11 clear), pre-index */
		imm = sext(w >> 12 & 0x1ff, 9);
		load = w >> 22 & 1;
		if (w & 0x800)
			cur->cfa = (int16_t)(cur->cfa - imm);
		reg_at(cur, rt, -(int64_t)cur->cfa, !load);
		if (!(w & 0x800))
			cur->cfa = (int16_t)(cur->cfa - imm);
		return 0;
	}
other:
	/* any other load or store that writes sp back */
	if (((w & 0x3b200000) == 0x38000000 && (w >> 10 & 1)) ||
	    ((w & 0x3a000000) == 0x28000000 && (w >> 23 & 1)))
		cur->cfa = -1;
	return 0;
}

/* Follow the words of code[0..len) from the entry states in pend[]; out[] each one's. */
static void follow(const uint8_t *code, size_t len, struct fstate *out, struct fstate *pend)
{
	struct fstate cur;

	unknown(&cur);
	for (size_t off = 0; off + 4 <= len; off += 4) {
		if (pend[off].cfa >= 0)
			cur = pend[off];
		out[off] = cur;
		if (cur.cfa < 0)
			continue;
		if (step(a64_get(code + off), off, len, &cur, pend) < 0 || cur.cfa < 0)
			unknown(&cur);
	}
}

/* The frame of state s, as stub-frame.h says it. */
static int to_frame(const struct fstate *s, struct arch_stub_frame *f)
{
	if (s->cfa < 0)
		return -1;
	if (s->ra == RA_REG) {
		if (s->cfa != 0)
			return -1;
		f->ra_off = STUB_RA_IN_REG;
	} else if (s->ra == -8 && s->cfa >= 8) {
		f->ra_off = (uint32_t)(s->cfa - 8);
	} else {
		return -1;
	}
	for (int i = 0; i < ARCH_NSAVED; i++)
		f->saved[i] = s->saved[i] == NONE ? -1 : s->cfa + s->saved[i];
	return 0;
}

static void init(struct fstate *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		unknown(&s[i]);
}

int arch_stub_frame(const uint8_t *slot, uint64_t off, struct arch_stub_frame *f)
{
	static struct fstate tmpl[DT_TEMPLATE_MAX], pend[DT_TEMPLATE_MAX];
	static int have_tmpl;
	struct fstate st[DT_SAVED], spend[DT_SAVED];
	size_t len = (size_t)(dt_template_end - dt_template);

	memset(f, 0, sizeof(*f));
	if (!slot) {
		if (off >= DT_TEMPLATE_MAX || off >= len || off % 4)
			return -1;
		if (!have_tmpl) {
			init(tmpl, DT_TEMPLATE_MAX);
			init(pend, DT_TEMPLATE_MAX);
			/* dt_common_result: the glue's frame, the caller's return address at its top */
			entry_state(&pend[dt_common_result - dt_template], DT_GLUE_FRAME,
				    DT_GLUE_RA - DT_GLUE_FRAME);
			entry_state(&pend[dt_common_entry - dt_template], 0, RA_REG);
			entry_state(&pend[dt_common_sync - dt_template], 0, RA_REG);
			entry_state(&pend[dt_common_prefilter - dt_template], 0, RA_REG);
			follow(dt_template, len, tmpl, pend);
			have_tmpl = 1;
		}
		return to_frame(&tmpl[off], f);
	}
	if (off >= DT_SAVED || off % 4)
		return -1;
	init(st, DT_SAVED);
	init(spend, DT_SAVED);
	entry_state(&spend[0], 0, RA_REG);
	entry_state(&spend[DT_ORIG], 0, RA_REG);
	/* a prefilter (MOVZ w9 after XPACLRI, not the glue's STP) branches back to its glue */
	if ((a64_get(slot + 4) & 0xff80001f) == 0x52800009)
		entry_state(&spend[DT_PF_LEN], 0, RA_REG);
	follow(slot, DT_SAVED, st, spend);
	return to_frame(&st[off], f);
}

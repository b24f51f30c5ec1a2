/*
 * insn-unwind.c (aarch64) - the frame of code without CFI, from its
 * instructions (arch/insn-unwind.h; what the analysis does,
 * stack/unwind/unwind-insn.h): A64's, decoded by hand as insn.c does.
 *
 * On arm64 a call leaves the return address in x30 (lr) and moves no
 * stack: at a function's entry CFA = sp, and the return address stays
 * in x30 until the function spills it, usually with x29 (fp) as a frame
 * record, `stp x29, x30, [sp, #-N]!`.  RET branches to x30 and moves
 * sp by nothing, so at a RET the CFA is sp, and the return address is
 * where x30 was loaded from (or x30 itself, never spilled).
 *
 * Followed: ADD and SUB (immediate, also shifted by 12) of sp and x29,
 * which MOV to and from sp are, and of sp and a register that MOVZ,
 * MOVN and MOVK made a constant on the path (a large frame); the loads and stores of a register or
 * a pair at sp or x29 plus an offset, with their pre- and post-indexed
 * writeback of the base; B, BL, BLR, B.cond, CBZ, CBNZ, TBZ, TBNZ and
 * RET (RETAA, RETAB: the signed return address is still the return
 * address).  PACIASP, AUTIASP and the other PAC instructions change
 * the bits of x30, not what it holds.  Any other write of x29 or x30
 * makes it unknown, and any other write of sp (a register added to it,
 * an AND, SVE's ADDVL) ends the path, as BR and undefined words do.
 *
 * A path's state, before each instruction: sp as base + offset, the
 * base being the sp or the x29 of the pc (or unknown); what x29 and x30
 * hold (their own value at the pc, a value base + offset, the word the
 * stack slot at base + offset held at the pc, or unknown); the last
 * register set to a constant, until it is written again; and a short
 * list of the 8-byte stack slots written on the way: a load from a slot
 * the path wrote gives back what was stored there.  At a RET through
 * x30: CFA = sp; x30 holding its value at the pc gives ra_off 0 (still
 * in the link register), x30 loaded from a slot below the CFA gives
 * its offset from the CFA; x29 the same, else the path says nothing.
 * A return address (not exact) starts with x30 unknown: the call that
 * returns there wrote it.
 *
 * Paths, as on x86-64: straight on through calls and B; a conditional
 * branch's other arm is kept (with the state) and tried when the path
 * ends without a usable RET; a jump to a place visited already ends a
 * path.  A call followed by padding, a landing pad or a frame record's
 * store (the next function) does not return.  A B to a function memtap
 * probes (its BRK #0, a patch into its stubs) or to a PLT entry is a
 * tail call: the callee starts with the caller's state, which is a
 * return's.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/insn-unwind.h"
#include "arch/insn-walk.h"
#include "insn.h"

#define NSLOTS 16		/* stack slots a path remembers */
#define WINDOW 256		/* code bytes read at a time */

#define R_FP 29
#define R_LR 30
#define R_SP 31			/* sp or xzr, by the instruction */

enum { B_SP = INSN_B_SP, B_FP = INSN_B_FP, B_NONE = INSN_B_NONE };	/* struct insn_val's base */
enum { H_FP, H_LR, H_VAL, H_SLOT, H_UNK };	/* what a register or slot holds */

/*
 * H_FP, H_LR: x29's, x30's value at the pc; H_VAL: the value v;
 * H_SLOT: the word at v at the pc; H_UNK: anything else.
 */
struct held {
	uint8_t what;
	struct insn_val v;
};

struct slot {
	struct insn_val at;		/* the 8-byte slot's address */
	struct held h;
};

struct path {
	uint64_t pc;
	struct insn_val sp;
	struct held fp, lr;
	int8_t kreg;		/* a register holding the constant kval, or -1 */
	int64_t kval;
	uint8_t nslots;
	struct slot slots[NSLOTS];
};

struct scan {
	struct insn_walk walk;	/* first: step_path() is given it */
	struct path alts[INSN_WALK_MAX_ALTS];
	uint64_t wbase;		/* code window */
	size_t wlen;
	uint8_t window[WINDOW];
};

static const struct insn_val unknown_val = { B_NONE, 0 };
static const struct held unknown_held = { H_UNK, { B_NONE, 0 } };

/* The word at pc into *w: 0, or -1 (unreadable, not 4-aligned). */
static int word_at(struct scan *sc, uint64_t pc, uint32_t *w)
{
	size_t n;

	if (pc & 3)
		return -1;
	if (!(pc >= sc->wbase && pc - sc->wbase + A64_INSN_LEN <= sc->wlen)) {
		sc->wlen = 0;
		if (pc < 4096)
			return -1;
		/* a window, or up to the page's end, or the one word */
		n = WINDOW;
		if (sc->walk.code->read(sc->walk.code->arg, pc, sc->window, n) != 0) {
			n = 4096 - (pc & 4095);
			if (n > WINDOW)
				n = WINDOW;
			if (sc->walk.code->read(sc->walk.code->arg, pc, sc->window, n) != 0) {
				n = A64_INSN_LEN;
				if (sc->walk.code->read(sc->walk.code->arg, pc, sc->window, n) != 0)
					return -1;
			}
		}
		sc->wbase = pc;
		sc->wlen = n;
	}
	*w = a64_get(sc->window + (pc - sc->wbase));
	return 0;
}

static struct held val_held(struct insn_val v)
{
	return v.base == B_NONE ? unknown_held : (struct held){ H_VAL, v };
}

/* What general register r (0..30; 31 is xzr here) holds. */
static struct held reg_held(const struct path *p, unsigned r)
{
	if (r == R_FP)
		return p->fp;
	if (r == R_LR)
		return p->lr;
	return unknown_held;
}

/* Register r (0..30) now holds h; the others are not followed. */
static void set_reg(struct path *p, unsigned r, struct held h)
{
	if ((int)r == p->kreg)
		p->kreg = -1;
	if (r == R_FP)
		p->fp = h;
	else if (r == R_LR)
		p->lr = h;
}

/* The value of register r as an address: 31 is sp. */
static struct insn_val reg_val(const struct path *p, unsigned r)
{
	if (r == R_SP)
		return p->sp;
	if (r == R_FP && p->fp.what == H_FP)
		return (struct insn_val){ B_FP, 0 };
	if (r == R_FP && p->fp.what == H_VAL)
		return p->fp.v;
	return unknown_val;
}

/* Base register r (31: sp) is written back with v. */
static void set_base(struct path *p, unsigned r, struct insn_val v)
{
	if (r == R_SP)
		p->sp = v;
	else
		set_reg(p, r, val_held(v));
}

/* The path wrote len bytes at at: the slots they overlap hold unknown words. */
static void clobber(struct path *p, struct insn_val at, int64_t len)
{
	for (int i = 0; i < p->nslots; i++) {
		struct slot *s = &p->slots[i];

		if (s->at.base == at.base && s->at.off > at.off - 8 && s->at.off < at.off + len)
			s->h = unknown_held;
	}
}

/* The path stored h, 8 bytes, at at. */
static void store(struct path *p, struct insn_val at, struct held h)
{
	struct slot *s = NULL;

	if (at.base == B_NONE)
		return;
	clobber(p, at, 8);
	for (int i = 0; i < p->nslots; i++)
		if (insn_val_same(p->slots[i].at, at))
			s = &p->slots[i];
	if (!s) {
		if (p->nslots == NSLOTS) {
			/* forget the oldest, one holding no register of the pc's first */
			int i = 0;

			while (i < NSLOTS - 1 && p->slots[i].h.what != H_UNK)
				i++;
			memmove(p->slots + i, p->slots + i + 1, sizeof(p->slots[0]) * (NSLOTS - 1 - i));
			p->nslots--;
		}
		s = &p->slots[p->nslots++];
	}
	s->at = at;
	s->h = h;
}

/* What an 8-byte load from at gives. */
static struct held load(const struct path *p, struct insn_val at)
{
	for (int i = 0; i < p->nslots; i++)
		if (insn_val_same(p->slots[i].at, at))
			return p->slots[i].h;
	/* below the pc's sp: written after the pc by what the path did not see */
	if (at.base == B_NONE || (at.base == B_SP && at.off < 0))
		return unknown_held;
	for (int i = 0; i < p->nslots; i++)
		if (p->slots[i].at.base == at.base && p->slots[i].at.off > at.off - 8 &&
		    p->slots[i].at.off < at.off + 8)
			return unknown_held;	/* partly written */
	return (struct held){ H_SLOT, at };
}

/*
 * Is target the entry of a function that memtap probes: a BRK #0 (a
 * breakpoint), or a patch into the stubs (a detour)?  The code there is
 * not the function's, but the function starts there.
 */
static int entry_probed(struct scan *sc, uint64_t target)
{
	uint32_t w[4];
	size_t n, len;
	uint64_t to;

	if (insn_walk_probe_code(&sc->walk, target))
		return 1;
	for (n = 0; n < 4 && word_at(sc, target + 4 * n, &w[n]) == 0; n++)
		;
	if (n == 0)
		return 0;
	if (w[0] == A64_BRK0)
		return 1;
	to = sc->walk.code->is_probe_entry ? a64_patched_target(w, n, target, &len) : 0;
	return to && insn_walk_probe_code(&sc->walk, to);
}

/*
 * Is target a PLT entry: (BTI C) ADRP x16, page; LDR x17, [x16, #lo];
 * ADD x16, x16, #lo; BR x17?  It jumps to a function's entry.
 */
static int plt_at(struct scan *sc, uint64_t target)
{
	uint32_t w[4];

	if (word_at(sc, target, &w[0]) != 0)
		return 0;
	if (w[0] == 0xd503245f)		/* bti c */
		target += 4;
	for (int i = 0; i < 4; i++)
		if (word_at(sc, target + 4 * (uint64_t)i, &w[i]) != 0)
			return 0;
	return (w[0] & 0x9f00001f) == 0x90000010 && (w[1] & 0xffc003ff) == 0xf9400211 &&
	       (w[2] & 0xffc003ff) == 0x91000210 && w[3] == 0xd61f0220;
}

/* The path reached a return through x30: its rule, 0; or -1 when its state says nothing. */
static int at_ret(const struct path *p, struct insn_rule *rule)
{
	struct insn_val cfa = p->sp;

	if (cfa.base == B_NONE || cfa.off < 0)
		return -1;
	rule->cfa_reg = cfa.base == B_SP ? INSN_REG_SP : INSN_REG_FP;
	rule->cfa_off = cfa.off;
	if (p->lr.what == H_LR)
		rule->ra_off = 0;
	else if (p->lr.what == H_SLOT && p->lr.v.base == cfa.base && p->lr.v.off < cfa.off)
		rule->ra_off = p->lr.v.off - cfa.off;
	else
		return -1;
	if (p->fp.what == H_FP)
		rule->fp_off = 0;
	else if (p->fp.what == H_SLOT && p->fp.v.base == cfa.base && p->fp.v.off < cfa.off)
		rule->fp_off = p->fp.v.off - cfa.off;
	else
		return -1;
	return 0;
}

/*
 * Does the code at pc, right after a call, say that the callee does not
 * return (abort, __stack_chk_fail)?  The compiler put the next function
 * or its alignment there: padding (NOP, UDF, a zero word, BRK), a
 * landing pad or a frame record's store.
 */
static int noreturn_at(struct scan *sc, uint64_t pc)
{
	uint32_t w;

	if (word_at(sc, pc, &w) != 0)
		return 1;
	return w == A64_NOP || (w >> 16) == 0 || (w & 0xffe0001f) == A64_BRK0 ||
	       a64_is_landing_pad(w) ||
	       (w & 0xffc07fff) == 0xa9807bfd;	/* stp x29, x30, [sp, #-N]! */
}

enum { GO_ON = INSN_GO_ON, DEAD = INSN_DEAD, FOUND = INSN_FOUND };

/* Load/store pair (bits 29..27 101, 25 0): STP, LDP, LDPSW, STGP, STNP, LDNP. */
static void step_pair(struct path *p, uint32_t w)
{
	unsigned opc = w >> 30, v = (w >> 26) & 1, l = (w >> 22) & 1, type = (w >> 23) & 3;
	unsigned rt = w & 31, rt2 = (w >> 10) & 31, rn = (w >> 5) & 31;
	int64_t scale = v ? 4 << opc : opc == 2 ? 8 : opc == 1 && !l ? 16 : 4;
	int64_t off = (int64_t)(((w >> 15) & 0x7f) ^ 0x40) - 0x40;
	struct insn_val base = reg_val(p, rn), at;
	int x64 = !v && opc == 2;

	off *= scale;
	at = type == 1 ? base : insn_val_add(base, off);	/* post-indexed: at the base */
	if (l) {
		struct held h1 = x64 ? load(p, at) : unknown_held;
		struct held h2 = x64 ? load(p, insn_val_add(at, 8)) : unknown_held;

		if (type == 1 || type == 3)
			set_base(p, rn, insn_val_add(base, off));
		if (!v) {
			set_reg(p, rt, h1);
			set_reg(p, rt2, h2);
		}
		return;
	}
	if (x64) {
		store(p, at, reg_held(p, rt));
		store(p, insn_val_add(at, 8), reg_held(p, rt2));
	} else if (at.base != B_NONE) {
		clobber(p, at, 2 * scale);
	}
	if (type == 1 || type == 3)
		set_base(p, rn, insn_val_add(base, off));
}

/* Load/store register, immediate or register offset (bits 29..27 111, 25 0). */
static int step_ldst(struct path *p, uint32_t w)
{
	unsigned size = w >> 30, v = (w >> 26) & 1, opc = (w >> 22) & 3;
	unsigned rt = w & 31, rn = (w >> 5) & 31, idx = (w >> 10) & 3;
	unsigned scale = v ? (opc & 2) << 1 | size : size;
	struct insn_val base = reg_val(p, rn), at = unknown_val;
	int wb = 0, load_op = v ? opc & 1 : opc != 0;
	int64_t off = 0;

	if (!v && size == 3 && opc == 2)
		return GO_ON;		/* PRFM, PRFUM */
	if (w & (1u << 24)) {		/* unsigned offset */
		off = (int64_t)((w >> 10) & 0xfff) << scale;
		at = insn_val_add(base, off);
	} else if (!(w & (1u << 21))) {	/* imm9: unscaled, post, unprivileged, pre */
		off = (int64_t)(((w >> 12) & 0x1ff) ^ 0x100) - 0x100;
		wb = idx == 1 || idx == 3;
		at = idx == 1 ? base : insn_val_add(base, off);
	} else if (idx & 1) {		/* LDRAA, LDRAB (size 11, V 0) */
		if (v || size != 3)
			return DEAD;
		load_op = 1;
		if (w & (1u << 11)) {
			if (rn == R_SP)
				return DEAD;	/* a signed offset's writeback of sp */
			set_reg(p, rn, unknown_held);
		}
	} else if (idx == 0) {		/* atomic memory operations: Rt loaded */
		load_op = !v;
	}
	/* else register offset: at unknown */
	if (load_op) {
		struct held h = !v && size == 3 && opc == 1 ? load(p, at) : unknown_held;

		if (wb)
			set_base(p, rn, insn_val_add(base, off));
		if (!v)
			set_reg(p, rt, h);
		return GO_ON;
	}
	if (!v && size == 3 && opc == 0)
		store(p, at, rt == R_SP ? unknown_held : reg_held(p, rt));
	else if (at.base != B_NONE)
		clobber(p, at, 1 << scale);
	if (wb)
		set_base(p, rn, insn_val_add(base, off));
	return GO_ON;
}

/* Loads and stores (bits 27 1, 25 0). */
static int step_mem(struct path *p, uint32_t w)
{
	unsigned rt = w & 31, rn = (w >> 5) & 31, v = (w >> 26) & 1;

	if ((w & 0x3a000000) == 0x28000000) {
		step_pair(p, w);
		return p->sp.base == B_NONE ? DEAD : GO_ON;
	}
	if ((w & 0x3a000000) == 0x38000000)
		return step_ldst(p, w) == DEAD || p->sp.base == B_NONE ? DEAD : GO_ON;
	if ((w & 0x3b000000) == 0x18000000) {	/* load literal */
		if (!v && (w >> 30) != 3)
			set_reg(p, rt, unknown_held);
		return GO_ON;
	}
	/* SIMD structures, post-indexed; STG and its kin, indexed */
	if (((w & 0xbf800000) == 0x0c800000 || (w & 0xbf800000) == 0x0d800000 ||
	     ((w & 0xff200000) == 0xd9200000 && (w & 0x400))) && rn == R_SP)
		return DEAD;
	/* the rest (exclusives, ordered, CAS, RCpc): Rt, Rt2, Rs may be written */
	if (!v) {
		set_reg(p, rt, unknown_held);
		set_reg(p, (w >> 10) & 31, unknown_held);
		set_reg(p, (w >> 16) & 31, unknown_held);
	}
	return GO_ON;
}

/* A call returns with x0-x18 and x30 changed. */
static void called(struct path *p)
{
	p->lr = unknown_held;
	if (p->kreg <= 18 || p->kreg == R_LR)
		p->kreg = -1;
}

/* Data processing, immediate (bits 28..26 100). */
static int step_dpimm(struct path *p, uint32_t w)
{
	unsigned rd = w & 31, rn = (w >> 5) & 31, sf = w >> 31, s = (w >> 29) & 1;

	if ((w & 0x1f800000) == 0x12800000 && rd != R_SP) {	/* MOVN, MOVZ, MOVK */
		unsigned opc = (w >> 29) & 3, hw = (w >> 21) & 3;
		uint64_t imm = (uint64_t)((w >> 5) & 0xffff) << (16 * hw), v;
		int known = opc == 3 ? p->kreg == (int)rd : opc != 1;

		v = opc == 2 ? imm : opc == 0 ? ~imm : ((uint64_t)p->kval & ~(0xffffull << (16 * hw))) | imm;
		set_reg(p, rd, unknown_held);
		if (known) {
			p->kreg = (int8_t)rd;
			p->kval = (int64_t)(sf ? v : v & 0xffffffff);
		}
		return GO_ON;
	}

	if ((w & 0x1f800000) == 0x11000000) {	/* ADD, SUB (immediate) */
		int64_t imm = (int64_t)((w >> 10) & 0xfff) << ((w >> 22) & 1 ? 12 : 0);
		struct insn_val r = sf ? insn_val_add(reg_val(p, rn), (w >> 30) & 1 ? -imm : imm)
				       : unknown_val;

		if (rd == R_SP && !s) {
			p->sp = r;
			return r.base == B_NONE ? DEAD : GO_ON;
		}
		if (rd != R_SP)
			set_reg(p, rd, val_held(r));
		return GO_ON;
	}
	/* AND, ORR, EOR (immediate), ADDG, SUBG: Rd 31 is sp */
	if (rd == R_SP && (((w & 0x1f800000) == 0x12000000 && ((w >> 29) & 3) != 3) ||
			   (w & 0x1fc00000) == 0x11800000))
		return DEAD;
	if (rd != R_SP)
		set_reg(p, rd, unknown_held);
	return GO_ON;
}

/* Data processing, register (bits 27..25 x101). */
static int step_dpreg(struct path *p, uint32_t w)
{
	unsigned rd = w & 31, rm = (w >> 16) & 31, opt = (w >> 13) & 7, sh = (w >> 10) & 7;

	/* ADD, SUB (extended register): Rd 31 is sp, followed when Rm is a constant */
	if ((w & 0x3f200000) == 0x0b200000 && rd == R_SP) {
		int64_t d = p->kval;

		if (!(w >> 31) || (int)rm != p->kreg || sh > 4 || (opt & 3) < 2)
			return DEAD;
		if ((opt & 3) == 2)	/* UXTW, SXTW */
			d = opt == 2 ? (int64_t)(uint32_t)d : (int64_t)(int32_t)d;
		if (d < -INSN_MAX_OFF || d > INSN_MAX_OFF)
			return DEAD;
		d *= 1 << sh;
		p->sp = insn_val_add(reg_val(p, (w >> 5) & 31), (w >> 30) & 1 ? -d : d);
		return p->sp.base == B_NONE ? DEAD : GO_ON;
	}
	/* PACIA, AUTIA, XPACI and their kin: the same value, signed or not */
	if ((w & 0xffff0000) == 0xdac10000)
		return GO_ON;
	if (rd != R_SP)
		set_reg(p, rd, unknown_held);
	return GO_ON;
}

/* One instruction w of path p; p->pc moves to the next one. */
static int step(struct scan *sc, struct path *p, uint32_t w, struct insn_rule *rule)
{
	uint64_t next = p->pc + A64_INSN_LEN;
	struct a64_insn in;
	struct path *alt;
	int k;

	if ((w & 0xfe000000) == 0xd6000000) {	/* branch to a register */
		unsigned opc = (w >> 21) & 0xf, op3 = (w >> 10) & 0x3f;

		if (opc == 2 && (op3 != 0 || ((w >> 5) & 31) == R_LR))
			return at_ret(p, rule) == 0 ? FOUND : DEAD;	/* RET, RETAA, RETAB */
		if (opc != 1 && opc != 9)
			return DEAD;		/* BR, a RET elsewhere, ERET */
		called(p);			/* BLR, BLRAA: a call */
		if (noreturn_at(sc, next))
			return DEAD;
		p->pc = next;
		return GO_ON;
	}
	k = a64_decode(w, p->pc, &in);
	if (k != 0 && !(k == -ENOTSUP && (w & 0x0a000000) == 0x08000000))
		return DEAD;			/* BRK, HLT, undefined; exclusives go on */
	switch (in.kind) {
	case A64_BL:
		called(p);
		if (noreturn_at(sc, next))
			return DEAD;
		break;
	case A64_B:
		if (entry_probed(sc, in.target) || plt_at(sc, in.target))
			/* a tail call: the callee returns as a RET would */
			return at_ret(p, rule) == 0 ? FOUND : DEAD;
		if (!insn_walk_enterable(&sc->walk, in.target))
			return DEAD;
		p->pc = in.target;
		return GO_ON;
	case A64_BCOND:
	case A64_CB:
	case A64_TB:
		alt = insn_walk_fork(&sc->walk, p, in.target);
		if (alt)
			alt->pc = in.target;
		break;
	case A64_ADR:
	case A64_ADRP:
		set_reg(p, in.reg, unknown_held);
		break;
	default:
		if ((w & 0x1c000000) == 0x10000000)
			k = step_dpimm(p, w);
		else if ((w & 0x0e000000) == 0x0a000000)
			k = step_dpreg(p, w);
		else if ((w & 0x0a000000) == 0x08000000)
			k = step_mem(p, w);
		else if ((w & 0xfff00000) == 0xd5300000 || (w & 0xfff80000) == 0xd5280000)
			set_reg(p, w & 31, unknown_held);	/* MRS, SYSL */
		else if ((w & 0xffe0001f) == 0xd4000001)
			set_reg(p, 0, unknown_held);		/* SVC: the result in x0 */
		else if ((w & 0xffa0f800) == 0x04205000 && (w & 31) == R_SP)
			return DEAD;				/* ADDVL, ADDPL sp */
		else if ((w & 0xffa0f800) == 0x04205000 || (w & 0xfffff800) == 0x04bf5000)
			set_reg(p, w & 31, unknown_held);	/* ADDVL, ADDPL, RDVL */
		else if ((w & 0x5f20fc00) == 0x1e200000 || (w & 0xbfe0fc00) == 0x0e002c00 ||
			 (w & 0xbfe0fc00) == 0x0e003c00)
			set_reg(p, w & 31, unknown_held);	/* FP to general, UMOV, SMOV */
		if (k != GO_ON)
			return k;
		break;
	}
	p->pc = next;
	return GO_ON;
}

/* The instruction at path p's pc, stepped (insn_walk_run()'s step): walk is the scan's. */
static int step_path(struct insn_walk *walk, void *p_, struct insn_rule *rule)
{
	struct scan *sc = (struct scan *)walk;
	struct path *p = p_;
	uint32_t w;

	if (word_at(sc, p->pc, &w) != 0)
		return DEAD;
	return step(sc, p, w, rule);
}

void arch_insn_entry_rule(struct insn_rule *rule)
{
	/* the call moved no stack: the caller's sp is sp, the return address in x30 */
	rule->cfa_reg = INSN_REG_SP;
	rule->cfa_off = 0;
	rule->ra_off = 0;
	rule->fp_off = 0;
}

int arch_insn_rule(const struct insn_code *code, uint64_t pc, int exact,
		   struct insn_rule *rule)
{
	struct scan *sc;
	struct path p;
	uint32_t w;
	int k;

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -1;
	insn_walk_init(&sc->walk, code, A64_INSN_LEN, sc->alts, sizeof(sc->alts[0]));
	if (exact && word_at(sc, pc, &w) == 0 && w == A64_BRK0) {
		/* a breakpoint at a function's entry */
		free(sc);
		arch_insn_entry_rule(rule);
		return 0;
	}
	memset(&p, 0, sizeof(p));
	p.pc = pc;
	p.sp.base = B_SP;
	p.fp.what = H_FP;
	/* at a return address, x30 is the call's: the frame's own is elsewhere */
	p.lr.what = exact ? H_LR : H_UNK;
	p.kreg = -1;
	k = insn_walk_run(&sc->walk, &p, step_path, rule);
	free(sc);
	return k;
}

/*
 * reloc.c (aarch64) - an A64 instruction moved to another address, and
 * the patches that branch there (see insn.h).
 *
 * An instruction whose target is in reach of its own immediate from the
 * new address keeps its form, with the immediate recomputed.  Out of
 * reach, each form becomes a short sequence that leaves the same
 * registers and goes on to the same place: an address built with ADR,
 * ADRP + ADD (+-4 GiB) or loaded from a .quad that the sequence jumps
 * over (anywhere); a branch through x16 or x17 after the address is
 * built; a conditional branch inverted so that it skips such a branch.
 *
 * One writer (struct out) both counts and writes, so that
 * a64_reloc_len() and a64_relocate() cannot disagree: a64_relocate()
 * counts first, checks the room, then writes.
 */
#include "config.h"

#include <errno.h>

#include "insn.h"

struct out {
	uint64_t at;		/* the address of out[0] */
	uint32_t *w;		/* NULL: count only */
	size_t n;		/* words so far */
	int scratch;		/* the register clobbered, or -1 */
	int err;
};

static void emit(struct out *o, uint32_t word)
{
	if (o->w)
		o->w[o->n] = word;
	o->n++;
}

static void emit_quad(struct out *o, uint64_t v)
{
	emit(o, (uint32_t)v);
	emit(o, (uint32_t)(v >> 32));
}

/* The address the next word goes to. */
static uint64_t here(const struct out *o)
{
	return o->at + 4 * o->n;
}

/* Does off, a multiple of 1 << shift, fit a signed immediate of bits bits scaled by it? */
static int fits(int64_t off, unsigned bits, unsigned shift)
{
	int64_t lim = (int64_t)1 << (bits - 1 + shift);

	return (off & (((int64_t)1 << shift) - 1)) == 0 && off >= -lim && off < lim;
}

static int64_t delta(uint64_t from, uint64_t to)
{
	return (int64_t)(to - from);
}

static int64_t page_delta(uint64_t from, uint64_t to)
{
	return (int64_t)((to >> 12) - (from >> 12));
}

static uint32_t with_imm19(uint32_t w, int64_t off)
{
	return (w & ~(0x7ffffu << 5)) | ((uint32_t)(off >> 2) & 0x7ffff) << 5;
}

static uint32_t with_imm14(uint32_t w, int64_t off)
{
	return (w & ~(0x3fffu << 5)) | ((uint32_t)(off >> 2) & 0x3fff) << 5;
}

/* ADR (op 0) or ADRP (op 1) with the 21-bit immediate imm. */
static uint32_t enc_adr(unsigned op, unsigned rd, int64_t imm)
{
	return op << 31 | ((uint32_t)imm & 3) << 29 | 0x10000000 |
	       ((uint32_t)(imm >> 2) & 0x7ffff) << 5 | rd;
}

static uint32_t enc_b(unsigned link, int64_t off)
{
	return link << 31 | 0x14000000 | ((uint32_t)(off >> 2) & 0x3ffffff);
}

static uint32_t enc_add_imm(unsigned rd, unsigned rn, unsigned imm12)
{
	return 0x91000000 | imm12 << 10 | rn << 5 | rd;	/* add xd, xn, #imm12 */
}

static uint32_t enc_ldr_x_lit(unsigned rt, int64_t off)
{
	return 0x58000000 | ((uint32_t)(off >> 2) & 0x7ffff) << 5 | rt;
}

static uint32_t enc_br(unsigned rn)
{
	return 0xd61f0000 | rn << 5;
}

static uint32_t enc_mov(unsigned rd, unsigned rm)
{
	return 0xaa0003e0 | rm << 16 | rd;	/* orr xd, xzr, xm */
}

/* Xreg = addr: ADR, ADRP + ADD, or LDR Xreg, #8; B #12; .quad addr.  reg is not 31. */
static void load_addr(struct out *o, unsigned reg, uint64_t addr)
{
	uint64_t a = here(o);

	if (fits(delta(a, addr), 21, 0)) {
		emit(o, enc_adr(0, reg, delta(a, addr)));
	} else if (fits(page_delta(a, addr), 21, 0)) {
		emit(o, enc_adr(1, reg, page_delta(a, addr)));
		emit(o, enc_add_imm(reg, reg, (unsigned)(addr & 0xfff)));
	} else {
		emit(o, enc_ldr_x_lit(reg, 8));
		emit(o, enc_b(0, 12));
		emit_quad(o, addr);
	}
}

/* The bytes of a branch at a to target (through scratch when B does not reach), or -ERANGE. */
static int far_len(uint64_t a, uint64_t target, unsigned flags)
{
	if (fits(delta(a, target), 26, 2))
		return 4;
	if (flags & A64_RELOC_BTI)
		return -ERANGE;
	return fits(page_delta(a, target), 21, 0) ? 12 : 16;
}

static void far_branch(struct out *o, uint64_t target, unsigned scratch, unsigned flags)
{
	uint64_t a = here(o);

	switch (far_len(a, target, flags)) {
	case 4:
		emit(o, enc_b(0, delta(a, target)));
		return;
	case 12:
		emit(o, enc_adr(1, scratch, page_delta(a, target)));
		emit(o, enc_add_imm(scratch, scratch, (unsigned)(target & 0xfff)));
		emit(o, enc_br(scratch));
		break;
	case 16:
		emit(o, enc_ldr_x_lit(scratch, 8));
		emit(o, enc_br(scratch));
		emit_quad(o, target);
		break;
	default:
		o->err = -ERANGE;
		return;
	}
	o->scratch = (int)scratch;
}

/*
 * A conditional branch: itself with a new immediate when it reaches,
 * else inverted (inv) to skip a branch to the target.  bits: its
 * immediate's width.
 */
static void cond_branch(struct out *o, const struct a64_insn *in, uint32_t inv, unsigned bits,
			unsigned scratch, unsigned flags)
{
	uint64_t a = here(o);
	int far;

	if (fits(delta(a, in->target), bits, 2)) {
		emit(o, bits == 19 ? with_imm19(in->word, delta(a, in->target)) :
			with_imm14(in->word, delta(a, in->target)));
		return;
	}
	far = far_len(a + 4, in->target, flags);
	if (far < 0) {
		o->err = far;
		return;
	}
	emit(o, bits == 19 ? with_imm19(inv, 4 + far) : with_imm14(inv, 4 + far));
	far_branch(o, in->target, scratch, flags);
}

/* LDR (unsigned offset 0) of the literal load's kind, through Xbase. */
static uint32_t load_through(uint32_t lit, unsigned base)
{
	static const uint32_t op[2][4] = {
		{ 0xb9400000, 0xf9400000, 0xb9800000, 0xf9800000 },	/* w x sw prfm */
		{ 0xbd400000, 0xfd400000, 0x3dc00000, 0 },		/* s d q */
	};

	return op[(lit >> 26) & 1][lit >> 30] | base << 5 | (lit & 0x1f);
}

static void literal(struct out *o, const struct a64_insn *in)
{
	uint64_t a = here(o);
	int gp = !((in->word >> 26) & 1) && in->kind == A64_LDR_LIT && in->reg != 31;
	unsigned base = gp ? in->reg : 16;

	if (fits(delta(a, in->target), 19, 2)) {
		emit(o, with_imm19(in->word, delta(a, in->target)));
		return;
	}
	load_addr(o, base, in->target);
	emit(o, load_through(in->word, base));
	if (!gp)
		o->scratch = 16;
}

static void adr(struct out *o, const struct a64_insn *in)
{
	uint64_t a = here(o);

	if (in->reg == 31) {
		emit(o, A64_NOP);	/* the result goes to xzr */
	} else if (in->kind == A64_ADR) {
		load_addr(o, in->reg, in->target);
	} else if (fits(page_delta(a, in->target), 21, 0)) {
		emit(o, enc_adr(1, in->reg, page_delta(a, in->target)));
	} else {
		emit(o, enc_ldr_x_lit(in->reg, 8));
		emit(o, enc_b(0, 12));
		emit_quad(o, in->target);
	}
}

/* BLR Xn: x30 = pc + 4, then BR x16 or x17 (BTYPE 01, as BLR's callee accepts). */
static void blr(struct out *o, const struct a64_insn *in)
{
	unsigned rn = in->reg;

	if (rn != 16 && rn != 17) {
		emit(o, enc_mov(16, rn));
		rn = 16;
		o->scratch = 16;
	}
	load_addr(o, 30, in->pc + 4);
	emit(o, enc_br(rn));
}

static void relocate(struct out *o, const struct a64_insn *in, unsigned flags)
{
	unsigned scratch = in->reg == 16 ? 17 : 16;

	switch (in->kind) {
	case A64_OTHER:
	case A64_PAD:
	case A64_BR:
	case A64_RET:
		emit(o, in->word);
		break;
	case A64_ADR:
	case A64_ADRP:
		adr(o, in);
		break;
	case A64_LDR_LIT:
	case A64_PRFM_LIT:
		literal(o, in);
		break;
	case A64_B:
		far_branch(o, in->target, 16, flags);
		break;
	case A64_BL:
		load_addr(o, 30, in->pc + 4);
		far_branch(o, in->target, 16, flags);
		break;
	case A64_BCOND:
		if ((in->word & 0xe) == 0xe) {	/* al, nv: always */
			if (fits(delta(here(o), in->target), 19, 2))
				cond_branch(o, in, 0, 19, 16, flags);
			else
				far_branch(o, in->target, 16, flags);
			break;
		}
		/* the inverse condition, as a plain b.cond */
		cond_branch(o, in, (in->word ^ 1) & ~0x10u, 19, 16, flags);
		break;
	case A64_CB:
		cond_branch(o, in, in->word ^ 0x01000000, 19, scratch, flags);
		break;
	case A64_TB:
		cond_branch(o, in, in->word ^ 0x01000000, 14, scratch, flags);
		break;
	case A64_BLR:
		blr(o, in);
		break;
	default:
		o->err = -EINVAL;
		break;
	}
}

/* Count the code for in at at into *o: 0 or -errno. */
static int count(struct out *o, const struct a64_insn *in, uint64_t at, unsigned flags)
{
	*o = (struct out){ .at = at, .scratch = -1 };
	if ((at & 3) || (in->pc & 3))
		return -EINVAL;
	relocate(o, in, flags);
	return o->err;
}

int a64_reloc_len(const struct a64_insn *in, uint64_t at, unsigned flags)
{
	struct out o;
	int err = count(&o, in, at, flags);

	return err < 0 ? err : (int)(4 * o.n);
}

int a64_reloc_scratch(const struct a64_insn *in, uint64_t at, unsigned flags)
{
	struct out o;

	return count(&o, in, at, flags) < 0 ? -1 : o.scratch;
}

int a64_relocate(const struct a64_insn *in, uint64_t at, unsigned flags, uint32_t *out,
		 size_t room)
{
	struct out o;
	int err = count(&o, in, at, flags);

	if (err < 0)
		return err;
	if (4 * o.n > room)
		return -ENOSPC;
	o = (struct out){ .at = at, .w = out, .scratch = -1 };
	relocate(&o, in, flags);
	return (int)(4 * o.n);
}

int a64_b_in_reach(uint64_t from, uint64_t to)
{
	return fits(delta(from, to), 26, 2) && !(from & 3);
}

int a64_enc_b(uint64_t from, uint64_t to, uint32_t *word)
{
	if (!a64_b_in_reach(from, to))
		return -ERANGE;
	*word = enc_b(0, delta(from, to));
	return 0;
}

size_t a64_patch_len(uint64_t site, uint64_t to)
{
	return (size_t)far_len(site, to, 0);
}

size_t a64_patch(uint32_t *out, uint64_t site, uint64_t to)
{
	struct out o = { .at = site, .w = out, .scratch = -1 };

	far_branch(&o, to, 16, 0);
	return 4 * o.n;
}

uint64_t a64_patched_target(const uint32_t *w, size_t n, uint64_t addr, size_t *len)
{
	struct a64_insn in;

	if (n >= 1 && (w[0] & 0xfc000000) == 0x14000000) {
		a64_decode(w[0], addr, &in);
		*len = 4;
		return in.target;
	}
	if (n >= 3 && (w[0] & 0x9f00001f) == 0x90000010 &&
	    (w[1] & 0xffc003ff) == enc_add_imm(16, 16, 0) && w[2] == enc_br(16)) {
		a64_decode(w[0], addr, &in);
		*len = 12;
		return in.target + ((w[1] >> 10) & 0xfff);
	}
	if (n >= 4 && w[0] == enc_ldr_x_lit(16, 8) && w[1] == enc_br(16)) {
		*len = 16;
		return (uint64_t)w[3] << 32 | w[2];
	}
	return 0;
}

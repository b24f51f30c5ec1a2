/*
 * a64-insn-unwind-libdw.c - the A64 instruction analysis of
 * src/arch/aarch64/insn-unwind.c against the CFI of arm64 ELF files
 * (Debian's arm64 libc, libc6-arm64-cross), read on this host: libdw
 * reads another CPU's CFI through its backends, and the analysis is a
 * pure function of the words it reads.
 *
 *   a64-insn-unwind-libdw [-b PERCENT] [-s STEP] [-v] FILE...
 *
 * For every FDE of each FILE's .eh_frame (the table of .eh_frame_hdr),
 * at every STEP-th instruction from its start (1: all) to its end:
 * libdw's rule (dwarf_cfi_addrframe) where it is one struct insn_rule
 * holds (CFA = sp or x29 + N; x30 unchanged or saved at CFA + M; x29
 * unchanged or saved at CFA + M; DWARF's x29 = 29, x30 = 30, sp = 31),
 * against arch_insn_rule() at that pc, exact, with the code read from
 * the file.  A pc agrees when the CFA's register and offset and the
 * places of the return address and of the caller's x29 are the same, or
 * follow from them by what the instructions from the FDE's start did
 * (x29 = sp + K: either gives the CFA; x29 or x30 stored in a slot, or
 * loaded back from it: in the register and in the slot alike).  Prints per file and in
 * all
 *
 *   agree 95.7% of 271745 pcs (...; cfa differs N, ra differs N,
 *   fp differs N, no rule N)
 *
 * and with -v every pc that disagrees.  Exit status 1 when the
 * agreement in all is below PERCENT (default 0), 77 when no FILE has
 * CFI, 99 on other failures.
 *
 * arch/arch.h, which arch/insn-unwind.h includes, is this host's CPU's:
 * the build defines its guard and aarch64's DWARF numbers instead
 * (tests/Makefile.inc), for this program and the arm64 file it tests.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/insn-unwind.h"
#include "cfi-compare.h"

#if ARCH_DW_SP != 31 || ARCH_DW_FP != 29 || ARCH_DW_RA != 30
#error "not aarch64's DWARF numbers"
#endif

#define NOP 0xd503201fu

static int verbose;

/* Where libdw says register regno of the caller is: 0 (unchanged) or an offset from the CFA in *off. */
static int saved_at(Dwarf_Frame *frame, int regno, int32_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
		return -1;
	if (nops == 0) {
		*off = 0;
		return ops == NULL ? 0 : -1;	/* same value; undefined is not a rule */
	}
	if (nops != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
	    (int64_t)ops[1].number == 0)
		return -1;
	*off = (int32_t)(int64_t)ops[1].number;
	return 0;
}

/* Where libdw says x30 and x29 of the caller are: 0 when struct insn_rule holds it, else -1. */
static int saved_regs(Dwarf_Frame *frame, struct insn_rule *r)
{
	if (saved_at(frame, ARCH_DW_RA, &r->ra_off) != 0 ||
	    saved_at(frame, ARCH_DW_FP, &r->fp_off) != 0)
		return -1;
	return 0;
}

static const char *reg_name(int r)
{
	return r == INSN_REG_SP ? "sp" : "x29";
}

/*
 * What the instructions so far in a straight line did (the test's own
 * reading of a few A64 forms, in address order): a rule that differs
 * from the CFI's but follows from them is as good.
 */
struct line {
	int ended;		/* after a RET, B or BR: padding is never run */
	int fp_loaded;		/* x29 loaded back: in its slot and in x29 */
	int lr_loaded;		/* x30 the same */
	int lr_stored;		/* x30 stored at sp + lr_sp, and not changed since */
	int64_t lr_sp;
	int fp_stored;		/* x29 the same, at sp + fp_slot */
	int64_t fp_slot;
	int fp_known;		/* x29 = sp + fp_sp: the CFA from either */
	int64_t fp_sp;
};

/* sp moved by d. */
static void line_sp(struct line *l, int64_t d)
{
	l->fp_sp -= d;
	l->lr_sp -= d;
	l->fp_slot -= d;
}

/* x30 stored at sp + off (after any writeback). */
static void line_stored(struct line *l, unsigned r, int64_t off)
{
	if (r == 30) {
		l->lr_stored = 1;
		l->lr_sp = off;
	} else if (r == 29) {
		l->fp_stored = 1;
		l->fp_slot = off;
	}
}

static void line_loaded(struct line *l, unsigned r)
{
	if (r == 29) {
		l->fp_loaded = 1;
		l->fp_known = 0;
		l->fp_stored = 0;
	} else if (r == 30) {
		l->lr_loaded = 1;
		l->lr_stored = 0;
	}
}

static void line_step(struct line *l, uint32_t w)
{
	unsigned rd = w & 31, rn = (w >> 5) & 31;

	if (w == NOP)
		return;
	if ((w & 0xfffffc1f) == 0xd65f0000 || w == 0xd65f0bff || w == 0xd65f0fff ||
	    (w & 0xfc000000) == 0x14000000 || (w & 0xfffffc1f) == 0xd61f0000) {
		memset(l, 0, sizeof(*l));	/* RET, RETAA, RETAB, B, BR */
		l->ended = 1;
		return;
	}
	l->ended = 0;
	if ((w & 0x3a000000) == 0x28000000) {	/* LDP, STP */
		unsigned opc = w >> 30, v = (w >> 26) & 1, type = (w >> 23) & 3;
		int64_t scale = v ? 4 << opc : opc == 2 ? 8 : 4;
		int64_t off = ((int64_t)(((w >> 15) & 0x7f) ^ 0x40) - 0x40) * scale;

		if ((type == 1 || type == 3) && rn == 31)
			line_sp(l, off);
		if ((w >> 22) & 1 && !v) {
			line_loaded(l, rd);
			line_loaded(l, (w >> 10) & 31);
		} else if (!v && opc == 2 && rn == 31) {
			/* STP Xt, Xt2: at sp + off before, sp after a writeback */
			int64_t at = type == 1 ? -off : type == 3 ? 0 : off;

			line_stored(l, rd, at);
			line_stored(l, (w >> 10) & 31, at + 8);
		}
		return;
	}
	if ((w & 0xffe00400) == 0xf8400400) {	/* LDR Xt, pre- or post-indexed */
		if (rn == 31)
			line_sp(l, (int64_t)(((w >> 12) & 0x1ff) ^ 0x100) - 0x100);
		line_loaded(l, rd);
		return;
	}
	if ((w & 0xffc00000) == 0xf9400000) {	/* LDR Xt, unsigned offset */
		line_loaded(l, rd);
		return;
	}
	if ((w & 0xffe00400) == 0xf8000400 && rn == 31) {	/* STR Xt, indexed */
		int64_t off = (int64_t)(((w >> 12) & 0x1ff) ^ 0x100) - 0x100;

		line_sp(l, off);
		line_stored(l, rd, w & 0x800 ? 0 : -off);
		return;
	}
	if ((w & 0xffc00000) == 0xf9000000 && rn == 31) {	/* STR Xt, unsigned offset */
		line_stored(l, rd, (int64_t)((w >> 10) & 0xfff) << 3);
		return;
	}
	if ((w & 0x7c000000) == 0x14000000 || (w & 0xfffffc1f) == 0xd63f0000) {
		l->lr_stored = 0;	/* BL, BLR */
		return;
	}
	if ((w & 0xbf800000) == 0x91000000) {	/* ADD, SUB (immediate), 64-bit */
		int64_t imm = (int64_t)((w >> 10) & 0xfff) << ((w >> 22) & 1 ? 12 : 0);

		if ((w >> 30) & 1)
			imm = -imm;
		if (rd == 31 && rn == 31) {
			line_sp(l, imm);
		} else if (rd == 31 && rn == 29) {
			l->fp_known = !l->fp_loaded;	/* sp = x29 + imm */
			l->fp_sp = -imm;
		} else if (rd == 29 && rn == 31) {
			l->fp_known = 1;
			l->fp_sp = imm;
			l->fp_loaded = 0;
			l->fp_stored = 0;
		} else if (rd == 29) {
			l->fp_known = 0;
			l->fp_loaded = 0;
			l->fp_stored = 0;
		}
		return;
	}
	if (rd == 30 && (w & 0x0a000000) != 0x08000000 && (w & 0x0e000000) != 0x0e000000)
		l->lr_stored = 0;	/* another write of x30 */
	if (rd == 29 && (w & 0x0a000000) != 0x08000000 && (w & 0x0e000000) != 0x0e000000) {
		l->fp_known = 0;	/* another write of x29 */
		l->fp_loaded = 0;
		l->fp_stored = 0;
	}
}

/* Does got follow from want and the line? */
static int equivalent(const struct line *l, const struct insn_rule *got,
		      const struct insn_rule *want)
{
	int cfa = got->cfa_reg == want->cfa_reg && got->cfa_off == want->cfa_off, ra = 0, fp = 0;

	if (!cfa && l->fp_known && got->cfa_reg == INSN_REG_SP && want->cfa_reg == INSN_REG_FP)
		cfa = got->cfa_off == want->cfa_off + l->fp_sp;
	if (!cfa && l->fp_known && got->cfa_reg == INSN_REG_FP && want->cfa_reg == INSN_REG_SP)
		cfa = got->cfa_off + l->fp_sp == want->cfa_off;
	if (cfa && !want->ra_off && l->lr_stored && got->ra_off &&
	    got->cfa_reg == INSN_REG_SP && l->lr_sp - got->cfa_off == got->ra_off)
		ra = 1;		/* in x30 and in its slot alike */
	if (cfa && !want->fp_off && l->fp_stored && got->fp_off &&
	    got->cfa_reg == INSN_REG_SP && l->fp_slot - got->cfa_off == got->fp_off)
		fp = 1;		/* in x29 and in its slot alike */
	return cfa && (ra || got->ra_off == want->ra_off || (l->lr_loaded && !got->ra_off)) &&
	       (fp || got->fp_off == want->fp_off || (l->fp_loaded && !got->fp_off));
}

/* Compare at every step-th instruction of [start, end). */
static void check_range(const struct cfi_image *im, Dwarf_CFI *cfi, uint64_t start, uint64_t end,
			const char *file, void *arg, struct cfi_counts *c)
{
	const struct insn_code code = { cfi_image_read, (void *)im, NULL, NULL };
	unsigned step = *(const unsigned *)arg;
	struct line l = { 0 };
	uint64_t pc = start;
	unsigned n = 0;

	for (; pc < end; pc += 4, n++) {
		unsigned char buf[4];
		struct insn_rule want, got;
		uint32_t w;
		int k;

		if (cfi_image_read((void *)im, pc, buf, sizeof(buf)) != 0)
			return;
		w = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
		    (uint32_t)buf[3] << 24;
		k = cfi_rule(cfi, pc, &want, saved_regs);
		if (k == -2)
			return;		/* past the FDE */
		if (k == 0 && n % step == 0 && !(l.ended && w == NOP)) {
			c->pcs++;
			if (arch_insn_rule(&code, pc, 1, &got) != 0) {
				c->none++;
				if (verbose)
					printf("%s 0x%" PRIx64 ": no rule, cfi %s%+d\n", file, pc,
					       reg_name(want.cfa_reg), want.cfa_off);
			} else if (got.cfa_reg == want.cfa_reg && got.cfa_off == want.cfa_off &&
				   got.ra_off == want.ra_off && got.fp_off == want.fp_off) {
				c->agree++;
			} else if (equivalent(&l, &got, &want)) {
				c->same++;
			} else {
				if (got.cfa_reg != want.cfa_reg || got.cfa_off != want.cfa_off)
					c->cfa++;
				else if (got.ra_off != want.ra_off)
					c->ra++;
				else
					c->fp++;
				if (verbose)
					printf("%s 0x%" PRIx64 ": cfa %s%+d ra %d fp %d, "
					       "cfi %s%+d ra %d fp %d\n", file, pc,
					       reg_name(got.cfa_reg), got.cfa_off, got.ra_off, got.fp_off,
					       reg_name(want.cfa_reg), want.cfa_off, want.ra_off,
					       want.fp_off);
			}
		}
		line_step(&l, w);
	}
}

static void print_counts(const char *what, const struct cfi_counts *c)
{
	printf("%s: agree %.1f%% of %" PRIu64 " pcs (%.1f%% the same rule, %" PRIu64
	       " an equivalent one; cfa differs %" PRIu64 ", ra differs %" PRIu64
	       ", fp differs %" PRIu64 ", no rule %" PRIu64 ")\n", what, cfi_counts_pct(c), c->pcs,
	       c->pcs ? 100.0 * c->agree / c->pcs : 0.0, c->same, c->cfa, c->ra, c->fp, c->none);
}

static void below(double pct, double bar)
{
	printf("agreement %.1f%% is below %.1f%%\n", pct, bar);
}

int main(int argc, char **argv)
{
	unsigned step = 1;
	const struct cfi_compare cc = { "a64-insn-unwind-libdw", EM_AARCH64, "arm64", check_range,
					print_counts, below, &step };
	double bar = 0;
	int opt;

	while ((opt = getopt(argc, argv, "b:s:v")) != -1) {
		if (opt == 's') {
			step = (unsigned)strtoul(optarg, NULL, 10);
			if (!step)
				step = 1;
		} else if (cfi_compare_opt(opt, optarg, &bar, &verbose) != 0) {
			fprintf(stderr, "usage: a64-insn-unwind-libdw [-b PERCENT] [-s STEP] [-v] FILE...\n");
			return 99;
		}
	}
	return cfi_compare_files(&cc, argv + optind, argc - optind, bar);
}

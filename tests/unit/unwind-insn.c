/*
 * unwind-insn.c - the instruction analysis of stack/unwind/unwind-insn.c (and
 * the arch's, src/arch/$(arch)/insn-unwind.c) against the CFI of ELF
 * files that have it.
 *
 *   unwind-insn [-b PERCENT] [-v] FILE...
 *
 * For every FDE of each FILE's .eh_frame (the table of .eh_frame_hdr),
 * at every instruction boundary from its start (decoded in a line) to
 * its end: libdw's rule (dwarf_cfi_addrframe), where it is one the
 * unwinder caches (CFA = %rsp or %rbp + N, return address at CFA - 8,
 * %rbp unchanged or saved at CFA + M), against unwind_insn_rule() with
 * the code read from the file.  A pc agrees when the CFA's register and
 * offset, the return address's place and %rbp's place are the same.
 * Prints per file and in all
 *
 *   agree 97.3% of 812345 pcs (cfa differs N, rbp differs N, no rule N)
 *
 * and with -v every pc that disagrees.  Exit status 1 when the
 * agreement in all is below PERCENT (default 0), 77 when no FILE has
 * CFI, 99 on other failures.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

#include "stack/unwind/unwind-insn.h"
#include "cfi-compare.h"

static int verbose;

/* Where libdw says the return address and %rbp are: 0 when one rule the unwinder caches, else -1. */
static int saved_regs(Dwarf_Frame *frame, struct insn_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, ARCH_DW_RA, mem, &ops, &nops) != 0 || nops != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
	    (int64_t)ops[1].number != -8)
		return -1;
	r->ra_off = -8;
	if (dwarf_frame_register(frame, ARCH_DW_FP, mem, &ops, &nops) != 0)
		return -1;
	r->fp_off = 0;
	if (nops != 0) {
		if (nops != 2 || ops[0].atom != DW_OP_call_frame_cfa ||
		    ops[1].atom != DW_OP_plus_uconst)
			return -1;
		r->fp_off = (int32_t)(int64_t)ops[1].number;
	}
	return 0;
}

static const char *reg_name(int r)
{
	return r == INSN_REG_SP ? "rsp" : "rbp";
}

/*
 * What the instructions so far in a straight line did (the test's own
 * reading, in address order): a rule that differs from the CFI's but
 * follows from them is as good.
 */
struct line {
	int ended;		/* after a ret or jmp: padding is never run */
	int bp_popped;		/* %rbp restored: still in its slot, and in %rbp */
	int bp_known;		/* %rbp = %rsp + bp_sp: the CFA from either */
	int64_t bp_sp;
};

static int reg_is(const ZydisDecodedOperand *op, ZydisRegister r)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->reg.value == r;
}

static void line_step(struct line *l, const ZydisDecodedInstruction *zi,
		      const ZydisDecodedOperand *ops)
{
	int two = zi->operand_count_visible == 2;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_NOP:
		return;
	case ZYDIS_MNEMONIC_RET:
	case ZYDIS_MNEMONIC_JMP:
		memset(l, 0, sizeof(*l));
		l->ended = 1;
		return;
	case ZYDIS_MNEMONIC_PUSH:
		l->bp_sp += 8;
		break;
	case ZYDIS_MNEMONIC_POP:
		l->bp_sp -= 8;
		if (reg_is(&ops[0], ZYDIS_REGISTER_RBP)) {
			l->bp_popped = 1;
			l->bp_known = 0;
		}
		break;
	case ZYDIS_MNEMONIC_LEAVE:
		l->bp_popped = 1;
		l->bp_known = 0;
		break;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (two && reg_is(&ops[0], ZYDIS_REGISTER_RSP)) {
			if (ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
				l->bp_sp += zi->mnemonic == ZYDIS_MNEMONIC_SUB ? ops[1].imm.value.s
									  : -ops[1].imm.value.s;
			else
				l->bp_known = 0;
		}
		break;
	case ZYDIS_MNEMONIC_MOV:
		if (two && reg_is(&ops[0], ZYDIS_REGISTER_RBP) && reg_is(&ops[1], ZYDIS_REGISTER_RSP)) {
			l->bp_known = 1;
			l->bp_sp = 0;
		} else if (two && reg_is(&ops[0], ZYDIS_REGISTER_RSP) &&
			   reg_is(&ops[1], ZYDIS_REGISTER_RBP)) {
			l->bp_known = 1;
			l->bp_sp = 0;
		}
		break;
	case ZYDIS_MNEMONIC_LEA:
		if (two && reg_is(&ops[0], ZYDIS_REGISTER_RSP) && ops[1].mem.base == ZYDIS_REGISTER_RBP &&
		    ops[1].mem.index == ZYDIS_REGISTER_NONE) {
			l->bp_known = 1;
			l->bp_sp = -ops[1].mem.disp.value;
		}
		break;
	default:
		break;
	}
	l->ended = 0;
}

/* Compare at every instruction of [start, end). */
static void check_range(const struct cfi_image *im, Dwarf_CFI *cfi, uint64_t start, uint64_t end,
			const char *file, void *arg, struct cfi_counts *c)
{
	const struct insn_code code = { cfi_image_read, (void *)im, NULL, NULL };
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct line l = { 0 };
	uint64_t pc = start;

	(void)arg;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (pc < end) {
		unsigned char buf[ZYDIS_MAX_INSTRUCTION_LENGTH];
		size_t n = end - pc < sizeof(buf) ? end - pc : sizeof(buf);
		struct insn_rule want, got;
		int k;

		if (cfi_image_read((void *)im, pc, buf, n) != 0 ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, buf, n, &zi, ops)))
			return;
		k = cfi_rule(cfi, pc, &want, saved_regs);
		if (k == -2)
			return;		/* past the FDE */
		if (k == 0 && !(l.ended && zi.mnemonic == ZYDIS_MNEMONIC_NOP)) {
			c->pcs++;
			if (unwind_insn_rule(&code, pc, 1, &got) != 0) {
				c->none++;
				if (verbose)
					printf("%s 0x%" PRIx64 ": no rule, cfi %s%+d\n", file, pc,
					       reg_name(want.cfa_reg), want.cfa_off);
			} else if (got.cfa_reg != want.cfa_reg || got.cfa_off != want.cfa_off ||
				   got.ra_off != want.ra_off) {
				if (l.bp_known && got.cfa_reg == INSN_REG_SP &&
				    want.cfa_reg == INSN_REG_FP &&
				    got.cfa_off == want.cfa_off + l.bp_sp && got.ra_off == want.ra_off &&
				    (got.fp_off == want.fp_off || (l.bp_popped && !got.fp_off))) {
					c->same++;
				} else {
					c->cfa++;
					if (verbose)
						printf("%s 0x%" PRIx64 ": cfa %s%+d ra %d, cfi %s%+d ra %d\n",
						       file, pc, reg_name(got.cfa_reg), got.cfa_off,
						       got.ra_off, reg_name(want.cfa_reg), want.cfa_off,
						       want.ra_off);
				}
			} else if (got.fp_off != want.fp_off) {
				if (l.bp_popped && got.fp_off == 0) {
					c->same++;
				} else {
					c->fp++;
					if (verbose)
						printf("%s 0x%" PRIx64 ": rbp %d, cfi %d\n", file, pc,
						       got.fp_off, want.fp_off);
				}
			} else {
				c->agree++;
			}
		}
		line_step(&l, &zi, ops);
		pc += zi.length;
	}
}

static void print_counts(const char *what, const struct cfi_counts *c)
{
	printf("%s: agree %.1f%% of %" PRIu64 " pcs (%.1f%% the same rule, %" PRIu64
	       " an equivalent one; cfa differs %" PRIu64 ", rbp differs %" PRIu64
	       ", no rule %" PRIu64 ")\n", what,
	       cfi_counts_pct(c), c->pcs, c->pcs ? 100.0 * c->agree / c->pcs : 0.0, c->same, c->cfa,
	       c->fp, c->none);
}

static void below(double pct, double bar)
{
	fprintf(stderr, "unwind-insn: agreement %.1f%% below %.1f%%\n", pct, bar);
}

int main(int argc, char **argv)
{
	const struct cfi_compare cc = { "unwind-insn", EM_NONE, NULL, check_range, print_counts,
					below, NULL };
	double bar = 0;
	int opt;

	while ((opt = getopt(argc, argv, "b:v")) != -1) {
		if (cfi_compare_opt(opt, optarg, &bar, &verbose) != 0) {
			fprintf(stderr, "usage: unwind-insn [-b PERCENT] [-v] FILE...\n");
			return 99;
		}
	}
	return cfi_compare_files(&cc, argv + optind, argc - optind, bar);
}

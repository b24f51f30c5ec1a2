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

#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>
#include <Zydis/Zydis.h>

#include "stack/unwind/unwind-insn.h"

struct image {
	const unsigned char *map;
	size_t size;
	Elf *elf;
	GElf_Phdr loads[16];
	int nloads;
};

struct counts {
	uint64_t pcs, agree, same, cfa, rbp, none;
};

static int verbose;

static int image_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct image *im = arg;

	for (int i = 0; i < im->nloads; i++) {
		const GElf_Phdr *ph = &im->loads[i];

		if (addr >= ph->p_vaddr && addr - ph->p_vaddr < ph->p_filesz &&
		    len <= ph->p_filesz - (addr - ph->p_vaddr)) {
			uint64_t off = ph->p_offset + (addr - ph->p_vaddr);

			if (off > im->size || len > im->size - off)
				return -1;
			memcpy(buf, im->map + off, len);
			return 0;
		}
	}
	return -1;
}

/* The rule of libdw at pc, in the terms of struct insn_rule; 0 or -1 (not simple). */
static int cfi_rule(Dwarf_CFI *cfi, uint64_t pc, struct insn_rule *r)
{
	Dwarf_Frame *frame;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int ret = -1;

	if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return -2;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != ARCH_DW_FP && ops[0].number != ARCH_DW_SP))
		goto out;
	r->cfa_reg = ops[0].number == ARCH_DW_SP ? INSN_REG_SP : INSN_REG_FP;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	if (dwarf_frame_register(frame, ARCH_DW_RA, mem, &ops, &nops) != 0 || nops != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
	    (int64_t)ops[1].number != -8)
		goto out;
	r->ra_off = -8;
	if (dwarf_frame_register(frame, ARCH_DW_FP, mem, &ops, &nops) != 0)
		goto out;
	r->fp_off = 0;
	if (nops != 0) {
		if (nops != 2 || ops[0].atom != DW_OP_call_frame_cfa ||
		    ops[1].atom != DW_OP_plus_uconst)
			goto out;
		r->fp_off = (int32_t)(int64_t)ops[1].number;
	}
	ret = 0;
out:
	free(frame);
	return ret;
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
static void check_range(const struct image *im, Dwarf_CFI *cfi, uint64_t start, uint64_t end,
			const char *file, struct counts *c)
{
	const struct insn_code code = { image_read, (void *)im, NULL, NULL };
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct line l = { 0 };
	uint64_t pc = start;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (pc < end) {
		unsigned char buf[ZYDIS_MAX_INSTRUCTION_LENGTH];
		size_t n = end - pc < sizeof(buf) ? end - pc : sizeof(buf);
		struct insn_rule want, got;
		int k;

		if (image_read((void *)im, pc, buf, n) != 0 ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, buf, n, &zi, ops)))
			return;
		k = cfi_rule(cfi, pc, &want);
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
					c->rbp++;
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

static void print_counts(const char *what, const struct counts *c)
{
	printf("%s: agree %.1f%% of %" PRIu64 " pcs (%.1f%% the same rule, %" PRIu64
	       " an equivalent one; cfa differs %" PRIu64 ", rbp differs %" PRIu64
	       ", no rule %" PRIu64 ")\n", what,
	       c->pcs ? 100.0 * (c->agree + c->same) / c->pcs : 0.0, c->pcs,
	       c->pcs ? 100.0 * c->agree / c->pcs : 0.0, c->same, c->cfa, c->rbp, c->none);
}

static int32_t rd32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The FDE starts of .eh_frame_hdr, sorted; their number, or -1. */
static long fde_starts(const struct image *im, uint64_t **out)
{
	size_t nph;
	uint64_t *starts;
	long n;

	if (elf_getphdrnum(im->elf, &nph) != 0)
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		const unsigned char *h;

		if (!gelf_getphdr(im->elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		if (ph.p_offset > im->size || ph.p_filesz > im->size - ph.p_offset || ph.p_filesz < 12)
			return -1;
		h = im->map + ph.p_offset;
		/* version 1, eh_frame_ptr pcrel sdata4, count udata4, table datarel sdata4 */
		if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
			return -1;
		n = (uint32_t)rd32(h + 8);
		if ((uint64_t)n * 8 > ph.p_filesz - 12)
			return -1;
		starts = calloc((size_t)n + 1, sizeof(*starts));
		if (!starts)
			return -1;
		for (long j = 0; j < n; j++)
			starts[j] = ph.p_vaddr + (uint64_t)(int64_t)rd32(h + 12 + 8 * j);
		*out = starts;
		return n;
	}
	return -1;
}

/* 0 checked, 1 no CFI, -1 unreadable. */
static int check_file(const char *file, struct counts *all)
{
	struct counts c = { 0 };
	struct image im = { 0 };
	struct stat st;
	Dwarf_CFI *cfi = NULL;
	uint64_t *starts = NULL;
	size_t nph;
	long n;
	int fd = open(file, O_RDONLY), ret = -1;

	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(file);
		return -1;
	}
	im.size = (size_t)st.st_size;
	im.map = mmap(NULL, im.size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (im.map == MAP_FAILED) {
		perror(file);
		close(fd);
		return -1;
	}
	im.elf = elf_memory((char *)im.map, im.size);
	if (!im.elf || elf_getphdrnum(im.elf, &nph) != 0)
		goto out;
	for (size_t i = 0; i < nph && im.nloads < 16; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(im.elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			im.loads[im.nloads++] = ph;
	}
	cfi = dwarf_getcfi_elf(im.elf);
	n = fde_starts(&im, &starts);
	if (!cfi || n <= 0) {
		fprintf(stderr, "%s: no .eh_frame_hdr table\n", file);
		ret = 1;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? starts[i + 1] : UINT64_MAX;

		check_range(&im, cfi, starts[i], end, file, &c);
	}
	print_counts(file, &c);
	all->pcs += c.pcs;
	all->agree += c.agree;
	all->same += c.same;
	all->cfa += c.cfa;
	all->rbp += c.rbp;
	all->none += c.none;
	ret = 0;
out:
	free(starts);
	if (cfi)
		dwarf_cfi_end(cfi);
	if (im.elf)
		elf_end(im.elf);
	munmap((void *)im.map, im.size);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	struct counts all = { 0 };
	double bar = 0, pct;
	int opt, checked = 0;

	while ((opt = getopt(argc, argv, "b:v")) != -1) {
		switch (opt) {
		case 'b':
			bar = strtod(optarg, NULL);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: unwind-insn [-b PERCENT] [-v] FILE...\n");
			return 99;
		}
	}
	elf_version(EV_CURRENT);
	for (int i = optind; i < argc; i++) {
		int k = check_file(argv[i], &all);

		if (k < 0)
			return 99;
		checked += k == 0;
	}
	if (!checked || !all.pcs) {
		fprintf(stderr, "unwind-insn: no file with CFI\n");
		return 77;
	}
	print_counts("all", &all);
	pct = 100.0 * (all.agree + all.same) / all.pcs;
	if (pct < bar) {
		fprintf(stderr, "unwind-insn: agreement %.1f%% below %.1f%%\n", pct, bar);
		return 1;
	}
	return 0;
}

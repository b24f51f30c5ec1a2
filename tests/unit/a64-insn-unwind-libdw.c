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

#include "arch/insn-unwind.h"

#if ARCH_DW_SP != 31 || ARCH_DW_FP != 29 || ARCH_DW_RA != 30
#error "not aarch64's DWARF numbers"
#endif

#define NOP 0xd503201fu

struct image {
	const unsigned char *map;
	size_t size;
	Elf *elf;
	GElf_Phdr loads[16];
	int nloads;
};

struct counts {
	uint64_t pcs, agree, same, cfa, ra, fp, none;
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

/* The rule of libdw at pc, in the terms of struct insn_rule; 0, -1 (not simple), -2 (none). */
static int cfi_rule(Dwarf_CFI *cfi, uint64_t pc, struct insn_rule *r)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	int ret = -1;

	if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return -2;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != ARCH_DW_FP && ops[0].number != ARCH_DW_SP))
		goto out;
	r->cfa_reg = ops[0].number == ARCH_DW_SP ? INSN_REG_SP : INSN_REG_FP;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	if (saved_at(frame, ARCH_DW_RA, &r->ra_off) != 0 ||
	    saved_at(frame, ARCH_DW_FP, &r->fp_off) != 0)
		goto out;
	ret = 0;
out:
	free(frame);
	return ret;
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
static void check_range(const struct image *im, Dwarf_CFI *cfi, uint64_t start, uint64_t end,
			const char *file, unsigned step, struct counts *c)
{
	const struct insn_code code = { image_read, (void *)im, NULL, NULL };
	struct line l = { 0 };
	uint64_t pc = start;
	unsigned n = 0;

	for (; pc < end; pc += 4, n++) {
		unsigned char buf[4];
		struct insn_rule want, got;
		uint32_t w;
		int k;

		if (image_read((void *)im, pc, buf, sizeof(buf)) != 0)
			return;
		w = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
		    (uint32_t)buf[3] << 24;
		k = cfi_rule(cfi, pc, &want);
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

static void print_counts(const char *what, const struct counts *c)
{
	printf("%s: agree %.1f%% of %" PRIu64 " pcs (%.1f%% the same rule, %" PRIu64
	       " an equivalent one; cfa differs %" PRIu64 ", ra differs %" PRIu64
	       ", fp differs %" PRIu64 ", no rule %" PRIu64 ")\n", what,
	       c->pcs ? 100.0 * (c->agree + c->same) / c->pcs : 0.0, c->pcs,
	       c->pcs ? 100.0 * c->agree / c->pcs : 0.0, c->same, c->cfa, c->ra, c->fp, c->none);
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

/* 0 checked, 1 no CFI (or not arm64), -1 unreadable. */
static int check_file(const char *file, unsigned step, struct counts *all)
{
	struct counts c = { 0 };
	struct image im = { 0 };
	struct stat st;
	Dwarf_CFI *cfi = NULL;
	uint64_t *starts = NULL;
	GElf_Ehdr eh;
	size_t nph;
	long n;
	int fd = open(file, O_RDONLY), ret = -1;

	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(file);
		if (fd >= 0)
			close(fd);
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
	if (!im.elf || elf_getphdrnum(im.elf, &nph) != 0 || !gelf_getehdr(im.elf, &eh))
		goto out;
	if (eh.e_machine != EM_AARCH64) {
		fprintf(stderr, "%s: not an arm64 file\n", file);
		ret = 1;
		goto out;
	}
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

		check_range(&im, cfi, starts[i], end, file, step, &c);
	}
	print_counts(file, &c);
	all->pcs += c.pcs;
	all->agree += c.agree;
	all->same += c.same;
	all->cfa += c.cfa;
	all->ra += c.ra;
	all->fp += c.fp;
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
	unsigned step = 1;
	int opt, checked = 0;

	while ((opt = getopt(argc, argv, "b:s:v")) != -1) {
		switch (opt) {
		case 'b':
			bar = strtod(optarg, NULL);
			break;
		case 's':
			step = (unsigned)strtoul(optarg, NULL, 10);
			if (!step)
				step = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: a64-insn-unwind-libdw [-b PERCENT] [-s STEP] [-v] FILE...\n");
			return 99;
		}
	}
	elf_version(EV_CURRENT);
	for (int i = optind; i < argc; i++) {
		int k = check_file(argv[i], step, &all);

		if (k < 0)
			return 99;
		checked += k == 0;
	}
	if (!checked || !all.pcs) {
		fprintf(stderr, "a64-insn-unwind-libdw: no arm64 file with CFI\n");
		return 77;
	}
	print_counts("all", &all);
	pct = 100.0 * (all.agree + all.same) / all.pcs;
	if (pct < bar) {
		printf("agreement %.1f%% is below %.1f%%\n", pct, bar);
		return 1;
	}
	return 0;
}

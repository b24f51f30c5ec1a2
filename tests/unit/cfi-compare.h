/*
 * cfi-compare.h - what the programs that hold an instruction analysis
 * against libdw's CFI share (tests/unit/unwind-insn.c for this host's
 * CPU, tests/unit/a64-insn-unwind-libdw.c for arm64): an ELF file
 * mapped and its code read by address, the CFA of libdw's rule in the
 * terms of struct insn_rule, the FDEs' starts from .eh_frame_hdr, and
 * the walk over the files and their FDEs that counts how many pcs
 * agree.  The comparison at each pc, and what is printed of the counts,
 * are the program's own (struct cfi_compare).  Included once per
 * program, by its one C file; arch/insn-unwind.h gives struct
 * insn_rule and ARCH_DW_SP, ARCH_DW_FP.
 */
#ifndef CFI_COMPARE_H
#define CFI_COMPARE_H

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

/* A file mapped whole, and its first 16 PT_LOAD headers. */
struct cfi_image {
	const unsigned char *map;
	size_t size;
	Elf *elf;
	GElf_Phdr loads[16];
	int nloads;
};

/*
 * The pcs compared, and how each went: the same rule, an equivalent
 * one, or one that differs in its CFA, in the return address's place
 * (ra) or in the frame pointer's (fp), or no rule from the analysis.
 */
struct cfi_counts {
	uint64_t pcs, agree, same, cfa, ra, fp, none;
};

/*
 * The program's part: check_range() compares at the pcs it chooses in
 * [start, end), one FDE of file, and counts in c (arg is the program's
 * own); print_counts() prints the counts of a file, or of all ("all").
 */
struct cfi_compare {
	const char *name;		/* the program's, for its messages */
	int machine;			/* the files' EM_, or EM_NONE: any */
	const char *machine_name;	/* with machine: "arm64" */
	void (*check_range)(const struct cfi_image *im, Dwarf_CFI *cfi, uint64_t start,
			    uint64_t end, const char *file, void *arg, struct cfi_counts *c);
	void (*print_counts)(const char *what, const struct cfi_counts *c);
	void (*below)(double pct, double bar);	/* says the agreement is below the bar */
	void *arg;
};

/* Read len bytes at addr of the image (arg): 0, or -1 when a PT_LOAD's file bytes do not hold them. */
static inline int cfi_image_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct cfi_image *im = arg;

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

/* The CFA of frame in r (cfa_reg, cfa_off): 0, or -1 when it is not sp or the fp + N. */
static inline int cfi_frame_cfa(Dwarf_Frame *frame, struct insn_rule *r)
{
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != ARCH_DW_FP && ops[0].number != ARCH_DW_SP))
		return -1;
	r->cfa_reg = ops[0].number == ARCH_DW_SP ? INSN_REG_SP : INSN_REG_FP;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	return 0;
}

/*
 * The rule of libdw at pc in r: its CFA by cfi_frame_cfa(), the places
 * of the caller's registers by the program's saved(), 0 or -1 as that
 * rule is one struct insn_rule holds or not; 0, -1 (not simple), or -2
 * (no rule at pc: past the FDE).
 */
static inline int cfi_rule(Dwarf_CFI *cfi, uint64_t pc, struct insn_rule *r,
			   int (*saved)(Dwarf_Frame *frame, struct insn_rule *r))
{
	Dwarf_Frame *frame;
	int ret = -1;

	if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
		return -2;
	if (cfi_frame_cfa(frame, r) == 0 && saved(frame, r) == 0)
		ret = 0;
	free(frame);
	return ret;
}

static inline int32_t cfi_rd32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The FDE starts of .eh_frame_hdr, sorted, in *out (to free); their number, or -1. */
static inline long cfi_fde_starts(const struct cfi_image *im, uint64_t **out)
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
		n = (uint32_t)cfi_rd32(h + 8);
		if ((uint64_t)n * 8 > ph.p_filesz - 12)
			return -1;
		starts = calloc((size_t)n + 1, sizeof(*starts));
		if (!starts)
			return -1;
		for (long j = 0; j < n; j++)
			starts[j] = ph.p_vaddr + (uint64_t)(int64_t)cfi_rd32(h + 12 + 8 * j);
		*out = starts;
		return n;
	}
	return -1;
}

/*
 * Compare every FDE of file, print its counts and add them to all's:
 * 0 checked; 1 no CFI, or not of cc's machine (said on stderr); -1
 * unreadable (said on stderr when the system says why).
 */
static inline int cfi_compare_file(const struct cfi_compare *cc, const char *file,
				   struct cfi_counts *all)
{
	struct cfi_counts c = { 0 };
	struct cfi_image im = { 0 };
	struct stat st;
	Dwarf_CFI *cfi = NULL;
	uint64_t *starts = NULL;
	GElf_Ehdr eh = { 0 };
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
	if (!im.elf || elf_getphdrnum(im.elf, &nph) != 0 ||
	    (cc->machine != EM_NONE && !gelf_getehdr(im.elf, &eh)))
		goto out;
	if (cc->machine != EM_NONE && eh.e_machine != cc->machine) {
		fprintf(stderr, "%s: not an %s file\n", file, cc->machine_name);
		ret = 1;
		goto out;
	}
	for (size_t i = 0; i < nph && im.nloads < 16; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(im.elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			im.loads[im.nloads++] = ph;
	}
	cfi = dwarf_getcfi_elf(im.elf);
	n = cfi_fde_starts(&im, &starts);
	if (!cfi || n <= 0) {
		fprintf(stderr, "%s: no .eh_frame_hdr table\n", file);
		ret = 1;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		uint64_t end = i + 1 < n ? starts[i + 1] : UINT64_MAX;

		cc->check_range(&im, cfi, starts[i], end, file, cc->arg, &c);
	}
	cc->print_counts(file, &c);
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

/* The share of the pcs that agree, in percent. */
static inline double cfi_counts_pct(const struct cfi_counts *c)
{
	return c->pcs ? 100.0 * (c->agree + c->same) / c->pcs : 0.0;
}

/*
 * The options every comparison takes: -b PERCENT into *bar, -v sets
 * *verbose.  0 when opt (getopt()'s, its argument arg) is one of them,
 * -1 when it is not.
 */
static inline int cfi_compare_opt(int opt, const char *arg, double *bar, int *verbose)
{
	switch (opt) {
	case 'b':
		*bar = strtod(arg, NULL);
		return 0;
	case 'v':
		*verbose = 1;
		return 0;
	default:
		return -1;
	}
}

/*
 * cfi_compare_file() on each of the n files, then the counts of all
 * printed; the exit status: 0; 1 when the agreement in all is below
 * bar percent (said by cc->below()); 77 when no file had CFI to compare
 * (said on stderr); 99 at the first unreadable file.
 */
static inline int cfi_compare_files(const struct cfi_compare *cc, char **files, int n, double bar)
{
	struct cfi_counts all = { 0 };
	int checked = 0;
	double pct;

	elf_version(EV_CURRENT);
	for (int i = 0; i < n; i++) {
		int k = cfi_compare_file(cc, files[i], &all);

		if (k < 0)
			return 99;
		checked += k == 0;
	}
	if (!checked || !all.pcs) {
		fprintf(stderr, "%s: no %s%sfile with CFI\n", cc->name,
			cc->machine != EM_NONE ? cc->machine_name : "",
			cc->machine != EM_NONE ? " " : "");
		return 77;
	}
	cc->print_counts("all", &all);
	pct = cfi_counts_pct(&all);
	if (pct < bar) {
		cc->below(pct, bar);
		return 1;
	}
	return 0;
}

#endif /* CFI_COMPARE_H */

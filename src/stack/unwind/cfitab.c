/*
 * cfitab.c - a module's CFI compiled into simple rows (cfitab.h).
 *
 * The FDEs are found through .eh_frame_hdr's sorted table of initial
 * locations (what GNU ld and lld write: pc-relative or data-relative
 * 4-byte entries); each FDE's rows come from libdw
 * (dwarf_cfi_addrframe at its start, then at the end of the row found,
 * until the next FDE or a pc libdw has no row for), classified as the
 * rule cache of unwind-libdw.c does, and neighbours with the same rule
 * merged.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack/unwind/cfitab.h"

#ifdef HAVE_LIBDW

#include <dwarf.h>
#include <gelf.h>
#include <elfutils/libdw.h>

#include "arch/arch.h"
#include "stack/unwind/cfi-rule.h"
#include "util/xmalloc.h"

/* The row of a libdw frame (start left to the caller). */
static void classify(Dwarf_Frame *frame, struct cfitab_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	Dwarf_Addr start, end;
	bool signal = false;
	int32_t off, cfa_off;
	uint8_t kind;

	memset(r, 0, sizeof(*r));
	r->kind = CT_NONE;
	if (dwarf_frame_info(frame, &start, &end, &signal) != ARCH_DW_RA || signal)
		return;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != ARCH_DW_SP && ops[0].number != ARCH_DW_FP) ||
	    (int64_t)ops[0].number2 < INT32_MIN || (int64_t)ops[0].number2 > INT32_MAX)
		return;
	kind = ops[0].number == ARCH_DW_SP ? CT_SP : CT_FP;
	cfa_off = (int32_t)(int64_t)ops[0].number2;
	if (dwarf_frame_register(frame, ARCH_DW_RA, mem, &ops, &nops) != 0)
		return;
	if (nops == 0) {
		r->kind = CT_END;	/* undefined or same value: the outermost frame */
		return;
	}
	if (!cfi_saved_at(ops, nops, &off) || off != -8)
		return;
	if (dwarf_frame_register(frame, ARCH_DW_FP, mem, &ops, &nops) != 0)
		return;
	off = 0;
	if (nops != 0 && (!cfi_saved_at(ops, nops, &off) || off < INT16_MIN || off > INT16_MAX))
		return;
	r->kind = kind;
	r->cfa_off = cfa_off;
	r->fp_off = (int16_t)off;
}

/* An encoded 4-byte value of .eh_frame_hdr at p (hdr at vaddr base): its address. */
static int hdr_word(const uint8_t *p, unsigned enc, uint64_t base, uint64_t here, uint64_t *v)
{
	int32_t w;

	memcpy(&w, p, 4);
	switch (enc) {
	case DW_EH_PE_udata4: *v = (uint32_t)w; return 0;
	case DW_EH_PE_sdata4: *v = (uint64_t)(int64_t)w; return 0;
	case DW_EH_PE_pcrel | DW_EH_PE_sdata4: *v = here + (uint64_t)(int64_t)w; return 0;
	case DW_EH_PE_datarel | DW_EH_PE_sdata4: *v = base + (uint64_t)(int64_t)w; return 0;
	default: return -1;
	}
}

/* The initial locations of the FDEs, sorted: *starts (n of them). */
static int fde_starts(Elf *elf, uint64_t **starts, size_t *n)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;
		const uint8_t *p;
		uint64_t count, v;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr"))
			continue;
		if (sh.sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || d->d_size < 12)
			return -EINVAL;
		p = d->d_buf;
		/* version 1, eh_frame_ptr (4 bytes), a count, the table */
		if (p[0] != 1 || p[2] != DW_EH_PE_udata4 ||
		    p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) ||
		    hdr_word(p + 4, p[1], sh.sh_addr, sh.sh_addr + 4, &v) < 0 ||
		    hdr_word(p + 8, p[2], sh.sh_addr, sh.sh_addr + 8, &count) < 0)
			return -ENOENT;	/* another encoding: not read */
		if (count > (d->d_size - 12) / 8)
			return -EINVAL;
		*starts = xmalloc((count ? count : 1) * sizeof(**starts));
		for (size_t i = 0; i < count; i++) {
			hdr_word(p + 12 + i * 8, p[3], sh.sh_addr, 0, &(*starts)[i]);
			if (i && (*starts)[i] < (*starts)[i - 1]) {
				free(*starts);
				return -EINVAL;	/* not sorted */
			}
		}
		*n = count;
		return 0;
	}
	return -ENOENT;
}

struct build {
	struct cfitab *t;
	size_t cap;
};

/* A row from link-time pc on (merged into the last one when equal). */
static int push(struct build *b, uint64_t pc, const struct cfitab_row *r)
{
	struct cfitab *t = b->t;
	struct cfitab_row *last = t->nrows ? &t->rows[t->nrows - 1] : NULL;

	if (pc - t->lo > UINT32_MAX)
		return -1;
	if (last && last->kind == r->kind && last->cfa_off == r->cfa_off &&
	    last->fp_off == r->fp_off)
		return 0;
	if (last && last->start == pc - t->lo) {
		*last = *r;	/* an empty row replaced */
		last->start = (uint32_t)(pc - t->lo);
		return 0;
	}
	if (t->nrows == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1024;
		t->rows = xrealloc(t->rows, b->cap * sizeof(*t->rows));
	}
	t->rows[t->nrows] = *r;
	t->rows[t->nrows].start = (uint32_t)(pc - t->lo);
	t->nrows++;
	return 0;
}

static int compile_elf(Elf *elf, struct cfitab *t)
{
	static const struct cfitab_row none = { .kind = CT_NONE };
	struct build b = { .t = t };
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	uint64_t *starts = NULL;
	size_t n = 0;
	int err;

	if (!cfi)
		return -ENOENT;
	err = fde_starts(elf, &starts, &n);
	if (err < 0 || !n) {
		if (!err)
			free(starts);
		dwarf_cfi_end(cfi);
		return err < 0 ? err : -ENOENT;
	}
	t->lo = starts[0];
	t->hi = t->lo;
	for (size_t i = 0; i < n; i++) {
		uint64_t pc = starts[i], next = i + 1 < n ? starts[i + 1] : UINT64_MAX;

		if (pc < t->hi)
			continue;	/* overlapping FDEs: the first one's rows */
		if (pc > t->hi && push(&b, t->hi, &none) < 0)
			goto too_big;
		t->fdes++;
		while (pc < next) {
			Dwarf_Frame *frame;
			Dwarf_Addr start, end;
			bool signal;
			struct cfitab_row r;

			if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
				break;
			dwarf_frame_info(frame, &start, &end, &signal);
			classify(frame, &r);
			free(frame);
			if (end <= pc)
				break;
			if (push(&b, pc, &r) < 0)
				goto too_big;
			pc = end < next ? end : next;
		}
		t->hi = pc;
	}
	free(starts);
	dwarf_cfi_end(cfi);
	if (push(&b, t->hi, &none) < 0)	/* the end: a row of its own */
		return -EFBIG;
	for (size_t i = 0; i < t->nrows; i++)
		if (t->rows[i].kind == CT_SP || t->rows[i].kind == CT_FP)
			t->simple++;
	t->npages = (size_t)(((t->hi - t->lo) >> CFITAB_PAGE_SHIFT) + 1);
	t->index = xmalloc((t->npages + 1) * sizeof(*t->index));
	for (size_t i = 0, r = 0; i <= t->npages; i++) {
		uint64_t at = (uint64_t)i << CFITAB_PAGE_SHIFT;

		while (r + 1 < t->nrows && t->rows[r + 1].start <= at)
			r++;
		t->index[i] = (uint32_t)r;
	}
	return 0;
too_big:
	free(starts);
	dwarf_cfi_end(cfi);
	return -EFBIG;
}

int cfitab_compile(int fd, struct cfitab *t)
{
	Elf *elf;
	int err;

	memset(t, 0, sizeof(*t));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		errno = EINVAL;
		return -1;
	}
	err = compile_elf(elf, t);
	elf_end(elf);
	if (err < 0) {
		cfitab_free(t);
		errno = -err;
		return -1;
	}
	return 0;
}

#else /* !HAVE_LIBDW */

int cfitab_compile(int fd, struct cfitab *t)
{
	(void)fd;
	memset(t, 0, sizeof(*t));
	errno = ENOSYS;
	return -1;
}

#endif

void cfitab_free(struct cfitab *t)
{
	free(t->rows);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

const struct cfitab_row *cfitab_lookup(const struct cfitab *t, uint64_t pc)
{
	size_t lo, hi, page;
	uint32_t off;

	if (!t->nrows || pc < t->lo || pc >= t->hi)
		return NULL;
	off = (uint32_t)(pc - t->lo);
	page = off >> CFITAB_PAGE_SHIFT;
	/* the last row starting at or before off, within the page's rows */
	lo = t->index[page];
	hi = page + 1 <= t->npages ? t->index[page + 1] : t->nrows - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (t->rows[mid].start <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &t->rows[lo];
}

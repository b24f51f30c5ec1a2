/*
 * cfitab-test.c - the compiled unwind tables (src/stack/unwind/cfitab.c)
 * against libdw: for each ELF file given, every pc its table covers
 * (every STRIDE-th, and every row's first and last) looked up in the
 * table gives the rule libdw's CFI gives there, classified here on its
 * own; pcs outside the table have no row.
 *
 *   cfitab-test [-s STRIDE] FILE...
 *
 * Prints a line per file (FDEs, rows, simple rows, bytes, pcs checked);
 * exit 0, 1 on a difference, 77 without libdw.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stack/unwind/cfitab.h"

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

struct rule {
	int kind;
	int64_t cfa_off, fp_off;
};

/* libdw's frame at pc as a row would say it; CT_NONE: not simple or none */
static struct rule libdw_rule(Dwarf_CFI *cfi, uint64_t pc)
{
	struct rule r = { CT_NONE, 0, 0 };
	Dwarf_Frame *f;
	Dwarf_Op mem[3], *ops, *cfa;
	size_t n, ncfa;
	Dwarf_Addr s, e;
	bool sig = false;

	if (dwarf_cfi_addrframe(cfi, pc, &f) != 0)
		return r;
	if (dwarf_frame_info(f, &s, &e, &sig) != 16 || sig ||
	    dwarf_frame_cfa(f, &cfa, &ncfa) != 0 || ncfa != 1 || cfa[0].atom != DW_OP_bregx ||
	    (cfa[0].number != 6 && cfa[0].number != 7) ||
	    dwarf_frame_register(f, 16, mem, &ops, &n) != 0)
		goto out;
	if (n == 0) {
		r.kind = CT_END;
		goto out;
	}
	/* the return address at CFA - 8 */
	if (n != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
	    (int64_t)ops[1].number != -8)
		goto out;
	r.cfa_off = (int64_t)cfa[0].number2;
	if (r.cfa_off != (int32_t)r.cfa_off)
		goto out;
	if (dwarf_frame_register(f, 6, mem, &ops, &n) != 0)
		goto out;
	if (n) {
		if (n != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
		    (int64_t)ops[1].number == 0 || (int64_t)ops[1].number != (int16_t)ops[1].number)
			goto out;
		r.fp_off = (int64_t)ops[1].number;
	}
	r.kind = cfa[0].number == 7 ? CT_SP : CT_FP;
out:
	free(f);
	return r;
}

static int check_pc(const char *file, const struct cfitab *t, Dwarf_CFI *cfi, uint64_t pc)
{
	const struct cfitab_row *row = cfitab_lookup(t, pc);
	struct rule want = libdw_rule(cfi, pc);
	struct rule got = { CT_NONE, 0, 0 };

	if (row)
		got = (struct rule){ row->kind, row->cfa_off, row->fp_off };
	if (got.kind == CT_END || got.kind == CT_NONE)
		got.cfa_off = got.fp_off = 0;
	if (want.kind == CT_END || want.kind == CT_NONE)
		want.cfa_off = want.fp_off = 0;
	if (got.kind == want.kind && got.cfa_off == want.cfa_off && got.fp_off == want.fp_off)
		return 0;
	fprintf(stderr, "%s: pc %#llx: table kind %d cfa %+lld fp %+lld, libdw kind %d cfa %+lld fp %+lld\n",
		file, (unsigned long long)pc, got.kind, (long long)got.cfa_off, (long long)got.fp_off,
		want.kind, (long long)want.cfa_off, (long long)want.fp_off);
	return 1;
}

static int check_file(const char *file, unsigned stride)
{
	struct cfitab t;
	int fd = open(file, O_RDONLY), bad = 0;
	unsigned long checked = 0;
	Elf *elf;
	Dwarf_CFI *cfi;

	if (fd < 0 || cfitab_compile(fd, &t) < 0) {
		fprintf(stderr, "%s: %s\n", file, strerror(errno));
		return 1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (!cfi) {
		fprintf(stderr, "%s: no CFI by libdw\n", file);
		return 1;
	}
	if (t.nrows < 2 || t.fdes == 0 || t.simple == 0 || t.rows[0].start != 0) {
		fprintf(stderr, "%s: a table of %zu rows, %zu FDEs, %zu simple\n", file, t.nrows,
			t.fdes, t.simple);
		bad = 1;
	}
	for (size_t i = 0; i + 1 < t.nrows && bad < 20; i++) {
		uint64_t a = t.lo + t.rows[i].start, b = t.lo + t.rows[i + 1].start;

		if (b <= a) {
			fprintf(stderr, "%s: row %zu not sorted\n", file, i);
			bad++;
			break;
		}
		bad += check_pc(file, &t, cfi, a) + check_pc(file, &t, cfi, b - 1);
		checked += 2;
	}
	for (uint64_t pc = t.lo; pc < t.hi && bad < 20; pc += stride, checked++)
		bad += check_pc(file, &t, cfi, pc);
	/* outside: no row */
	if (cfitab_lookup(&t, t.lo - 1) || cfitab_lookup(&t, t.hi)) {
		fprintf(stderr, "%s: a row outside [%#llx, %#llx)\n", file, (unsigned long long)t.lo,
			(unsigned long long)t.hi);
		bad++;
	}
	printf("%s: %zu FDEs, %zu rows (%zu simple), %zu bytes with the index of %zu pages, %lu pcs checked%s\n",
	       file, t.fdes, t.nrows, t.simple, t.nrows * sizeof(*t.rows) + (t.npages + 1) * 4,
	       t.npages, checked, bad ? ": DIFFERENT" : "");
	dwarf_cfi_end(cfi);
	elf_end(elf);
	close(fd);
	cfitab_free(&t);
	return bad != 0;
}

int main(int argc, char **argv)
{
	unsigned stride = 1;
	int bad = 0, i = 1;

	if (argc > 2 && !strcmp(argv[1], "-s")) {
		stride = (unsigned)strtoul(argv[2], NULL, 0);
		if (!stride)
			stride = 1;
		i = 3;
	}
	elf_version(EV_CURRENT);
	for (; i < argc; i++)
		bad |= check_file(argv[i], stride);
	return bad;
}
#else
int main(void)
{
	return 77;
}
#endif

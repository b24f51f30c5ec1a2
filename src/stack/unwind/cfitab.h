/*
 * cfitab.h - a module's call frame information compiled into a compact
 * table of simple rows, sorted by pc, with a per-page index: the form a
 * walk that knows nothing of DWARF (a stub in the target) can use.
 *
 * A row holds from its start to the next row's start.  Simple rows:
 * CFA = sp + off (CT_SP) or fp + off (CT_FP), the return address at
 * CFA - 8, the caller's fp saved at CFA + fp_off or unchanged (sp, fp
 * and the return address column: the arch's ARCH_DW_*); CT_END where the
 * return address is undefined (the outermost frame: _start, clone3's
 * child); every other rule (CFA expressions as in PLT entries, signal
 * frames, a CFA in another register, a return address elsewhere) and
 * the code between FDEs is CT_NONE, "no row": a walk stops there and the
 * stack from there is unwound from a copy.
 *
 * Addresses are the module's link-time addresses (the ELF's vaddrs: add
 * the load bias for a mapped module).
 */
#ifndef MEMTAP_CFITAB_H
#define MEMTAP_CFITAB_H

#include <stddef.h>
#include <stdint.h>

enum { CT_NONE = 0, CT_SP, CT_FP, CT_END };

struct cfitab_row {
	uint32_t start;		/* from the table's lo */
	int32_t cfa_off;	/* CFA = sp or fp (kind) + cfa_off */
	int16_t fp_off;		/* caller's fp at CFA + fp_off; 0: unchanged */
	uint8_t kind;		/* CT_* */
	uint8_t pad;
};

#define CFITAB_PAGE_SHIFT 8

/*
 * rows[0].start is 0; index[i] is the last row starting at or before
 * lo + (i << CFITAB_PAGE_SHIFT), for i < npages: a lookup searches rows
 * index[i] .. index[i + 1] only.
 */
struct cfitab {
	uint64_t lo, hi;	/* link-time pcs covered: [lo, hi) */
	struct cfitab_row *rows;
	size_t nrows;
	uint32_t *index;
	size_t npages;
	size_t fdes;		/* FDEs compiled */
	size_t simple;		/* rows of kind CT_SP or CT_FP */
};

/*
 * Compile the CFI of the ELF file open at fd (its .eh_frame, through the
 * sorted table of .eh_frame_hdr).  Returns 0 and fills *t (free it with
 * cfitab_free), or -1 with errno set: ENOENT when the file has no
 * .eh_frame_hdr table memtap reads (the walk then has no row in it),
 * EINVAL for a malformed one, ENOSYS without libdw.
 */
int cfitab_compile(int fd, struct cfitab *t);

/* Free what cfitab_compile allocated; t can be compiled again. */
void cfitab_free(struct cfitab *t);

/* The row of link-time pc, or NULL (outside the table: no row). */
const struct cfitab_row *cfitab_lookup(const struct cfitab *t, uint64_t pc);

#endif /* MEMTAP_CFITAB_H */

/*
 * gopclntab.h - Go's own function table (.gopclntab): the names of the
 * functions of a Go program, and their source lines, with or without
 * .symtab and DWARF (go build -ldflags='-s -w' keeps it: Go's runtime
 * names its tracebacks from it).
 *
 * Formats read, by the table's magic: Go 1.16 and 1.17 (0xfffffffa),
 * 1.18 and 1.19 (0xfffffff0), 1.20 and later (0xfffffff1).  Older
 * tables (0xfffffffb, Go 1.2 to 1.15) are not read.
 *
 * Every offset the table holds is checked against its size: a
 * malformed table gives NULL and its reason once, a malformed entry no
 * name, never a read outside the table.
 *
 * Life cycle: gopcln_parse() or gopcln_from_elf() copies what it reads;
 * the result lives until gopcln_free(), and the strings of a lookup
 * with it.
 */
#ifndef MEMTAP_GOPCLNTAB_H
#define MEMTAP_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct gopcln;

/*
 * The table in data (size bytes; text: the address of .text, used when
 * the table leaves its start to a relocation, 0 if unknown).  NULL when
 * it is no table of a known format, with *why a short reason.
 */
struct gopcln *gopcln_parse(const unsigned char *data, size_t size, uint64_t text,
			    const char **why);

/*
 * The table of an ELF file: its .gopclntab section (or
 * .data.rel.ro.gopclntab).  NULL: none (*why NULL), or malformed (*why
 * the reason).
 */
struct gopcln *gopcln_from_elf(Elf *elf, const char **why);

/* Is elf a Go program or library (a .gopclntab or .go.buildinfo section)? */
int gopcln_elf_is_go(Elf *elf);

void gopcln_free(struct gopcln *t);

/* "1.16", "1.18" or "1.20": the format of the table. */
const char *gopcln_format(const struct gopcln *t);

/* One function's part of the table, for an address. */
struct gopcln_hit {
	const char *name;	/* NULL: the entry's name is out of the table */
	uint64_t start;		/* the function's entry (file address) */
	const char *file;	/* NULL: unknown */
	int line;		/* 0: unknown */
};

/*
 * The function whose code holds file address pc: 0 and *hit, -1 when
 * no function of the table does.  lines: file and line too (the
 * pcfile and pcln tables).
 */
int gopcln_lookup(const struct gopcln *t, uint64_t pc, int lines, struct gopcln_hit *hit);

/* The entry of the function named name, 0 and *start; -1 when none. */
int gopcln_find_func(const struct gopcln *t, const char *name, uint64_t *start);

/*
 * The functions named name, from the one at index *next on (0: the
 * first): 0 with the entry and end (file addresses, the next
 * function's entry) of the next such function, and *next past it; -1
 * when there is no more.
 */
int gopcln_next_func(const struct gopcln *t, const char *name, uint64_t *next, uint64_t *start,
		     uint64_t *end);

#endif /* MEMTAP_GOPCLNTAB_H */

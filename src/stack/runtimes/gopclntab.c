/*
 * gopclntab.c - Go's function table, as Go's runtime reads it
 * (runtime/symtab.go, cmd/link's pcln.go).
 *
 * The header: magic (4 bytes), two zero bytes, the instruction quantum,
 * the pointer size (8), then words: the number of functions and of
 * files, (1.18 on) the start of the text, and the offsets, from the
 * table's start, of the function names, the compilation units' file
 * lists, the file names, the pc-value tables and the function table.
 * The function table: for each function and one past the last, its
 * entry and the offset of its _func record (1.18 on two 32-bit words,
 * the entry relative to the start of the text; 1.16 two words).  A
 * _func: the entry (32 or 64 bits), the name's offset, the argument
 * size, deferreturn, and the offsets of its pcsp, pcfile and pcln
 * tables, npcdata, its unit's first file.
 *
 * A pc-value table is a list of (value delta, pc delta) pairs, the
 * value zig-zag and both varints, the value from -1 and the pc from
 * the entry: a value holds from its pc to the next pair's; a zero
 * value delta after the first pair ends it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "stack/runtimes/gopclntab.h"
#include "util/xmalloc.h"

enum go_fmt { GO116, GO118, GO120 };

struct gopcln {
	unsigned char *data;
	size_t size;
	enum go_fmt fmt;
	unsigned quantum;
	uint64_t nfunc;
	uint64_t text;		/* 1.18 on: entries are relative to it */
	uint64_t names, cus, files, pctab, ftab;	/* offsets in data */
	size_t entsz;		/* a function table entry: 8 or 16 */
};

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

struct gopcln *gopcln_parse(const unsigned char *data, size_t size, uint64_t text,
			    const char **why)
{
	struct gopcln t = { 0 };
	uint64_t w[8];
	size_t hdr;
	uint32_t magic;

	*why = "too short";
	if (size < 64)
		return NULL;
	magic = rd32(data);
	if (magic == 0xfffffffa)
		t.fmt = GO116;
	else if (magic == 0xfffffff0)
		t.fmt = GO118;
	else if (magic == 0xfffffff1)
		t.fmt = GO120;
	else {
		*why = magic == 0xfffffffb ? "a table of Go 1.2 to 1.15, not read" : "no known magic";
		return NULL;
	}
	*why = "a malformed header";
	if (data[4] || data[5] || data[7] != 8 || !data[6] || data[6] > 4)
		return NULL;
	t.quantum = data[6];
	hdr = t.fmt == GO116 ? 64 : 72;
	if (size < hdr)
		return NULL;
	for (size_t i = 0; i < (hdr - 8) / 8; i++)
		w[i] = rd64(data + 8 + 8 * i);
	t.nfunc = w[0];
	if (t.fmt == GO116) {
		t.names = w[2], t.cus = w[3], t.files = w[4], t.pctab = w[5], t.ftab = w[6];
		t.entsz = 16;
	} else {
		t.text = w[2] ? w[2] : text;
		t.names = w[3], t.cus = w[4], t.files = w[5], t.pctab = w[6], t.ftab = w[7];
		t.entsz = 8;
	}
	*why = "offsets out of the table";
	if (t.names > size || t.cus > size || t.files > size || t.pctab > size || t.ftab > size)
		return NULL;
	*why = "a function table out of the table";
	if (!t.nfunc || (size - t.ftab) / t.entsz < 1 || t.nfunc > (size - t.ftab) / t.entsz - 1)
		return NULL;
	*why = NULL;
	t.size = size;
	t.data = xmalloc(size);
	memcpy(t.data, data, size);
	struct gopcln *r = xmalloc(sizeof(*r));

	*r = t;
	return r;
}

void gopcln_free(struct gopcln *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

const char *gopcln_format(const struct gopcln *t)
{
	return t->fmt == GO116 ? "1.16" : t->fmt == GO118 ? "1.18" : "1.20";
}

/* The entry of function i (i <= nfunc: nfunc is the end of the last). */
static uint64_t entry_of(const struct gopcln *t, uint64_t i)
{
	const unsigned char *e = t->data + t->ftab + i * t->entsz;

	return t->fmt == GO116 ? rd64(e) : t->text + rd32(e);
}

/* The offset in data of function i's _func, of at least need bytes; 0 if out. */
static uint64_t func_of(const struct gopcln *t, uint64_t i, size_t need)
{
	const unsigned char *e = t->data + t->ftab + i * t->entsz;
	uint64_t off = t->fmt == GO116 ? rd64(e + 8) : rd32(e + 4);

	if (off > t->size - t->ftab || need > t->size - t->ftab - off)
		return 0;
	return t->ftab + off;
}

/* The NUL-terminated string at off of data, or NULL. */
static const char *str_at(const struct gopcln *t, uint64_t base, uint64_t off)
{
	if (base > t->size || off >= t->size - base)
		return NULL;
	if (!memchr(t->data + base + off, 0, t->size - base - off))
		return NULL;
	return (const char *)t->data + base + off;
}

/* A varint at *p below end, or -1. */
static int varint(const unsigned char **p, const unsigned char *end, uint32_t *v)
{
	uint32_t r = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*p >= end)
			return -1;
		uint8_t b = *(*p)++;

		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/* The value of pc-value table off for pc, in the function entered at entry; -1 none. */
static int pcvalue(const struct gopcln *t, uint32_t off, uint64_t entry, uint64_t pc,
		   int32_t *out)
{
	const unsigned char *p, *end = t->data + t->size;
	uint64_t at = entry;
	int32_t val = -1;

	if (!off || off >= t->size - t->pctab)
		return -1;
	p = t->data + t->pctab + off;
	for (int first = 1;; first = 0) {
		uint32_t uv, pcd;

		if (p >= end || (*p == 0 && !first))
			return -1;
		if (varint(&p, end, &uv) < 0 || varint(&p, end, &pcd) < 0)
			return -1;
		val += (int32_t)(-(uv & 1) ^ (uv >> 1));
		at += (uint64_t)pcd * t->quantum;
		if (pc < at) {
			*out = val;
			return 0;
		}
	}
}

static uint64_t gopcln_fields(const struct gopcln *t)
{
	return t->fmt == GO116 ? 8 : 4;	/* the entry's size: the fields after it */
}

/* File and line of pc in the function whose _func is at f, entered at entry. */
static void lines_of(const struct gopcln *t, uint64_t f, uint64_t entry, uint64_t pc,
		     struct gopcln_hit *hit)
{
	const unsigned char *fn = t->data + f + gopcln_fields(t);
	uint32_t pcfile = rd32(fn + 16), pcln = rd32(fn + 20), cu = rd32(fn + 28);
	int32_t fileno, line;
	uint64_t slot;

	if (pcvalue(t, pcln, entry, pc, &line) == 0 && line > 0)
		hit->line = line;
	if (pcvalue(t, pcfile, entry, pc, &fileno) < 0 || fileno < 0)
		return;
	slot = ((uint64_t)cu + (uint64_t)fileno) * 4;
	if (t->size - t->cus < 4 || slot > t->size - t->cus - 4)
		return;
	uint32_t foff = rd32(t->data + t->cus + slot);

	if (foff != UINT32_MAX)
		hit->file = str_at(t, t->files, foff);
	if (!hit->file)
		hit->line = 0;
}

int gopcln_lookup(const struct gopcln *t, uint64_t pc, int lines, struct gopcln_hit *hit)
{
	uint64_t lo = 0, hi = t->nfunc, f;
	int32_t nameoff;

	memset(hit, 0, sizeof(*hit));
	if (pc < entry_of(t, 0) || pc >= entry_of(t, t->nfunc))
		return -1;
	/* the last function entered at or below pc */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (entry_of(t, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (pc >= entry_of(t, lo + 1))
		return -1;	/* a table out of order */
	hit->start = entry_of(t, lo);
	f = func_of(t, lo, gopcln_fields(t) + 32);
	if (!f)
		return 0;
	nameoff = (int32_t)rd32(t->data + f + gopcln_fields(t));
	if (nameoff >= 0)
		hit->name = str_at(t, t->names, (uint64_t)nameoff);
	if (lines)
		lines_of(t, f, hit->start, pc, hit);
	return 0;
}

int gopcln_next_func(const struct gopcln *t, const char *name, uint64_t *next, uint64_t *start,
		     uint64_t *end)
{
	for (uint64_t i = *next; i < t->nfunc; i++) {
		uint64_t f = func_of(t, i, gopcln_fields(t) + 4);
		const char *s;
		int32_t nameoff;

		if (!f)
			continue;
		nameoff = (int32_t)rd32(t->data + f + gopcln_fields(t));
		s = nameoff >= 0 ? str_at(t, t->names, (uint64_t)nameoff) : NULL;
		if (s && !strcmp(s, name) && entry_of(t, i) < entry_of(t, i + 1)) {
			*start = entry_of(t, i);
			*end = entry_of(t, i + 1);
			*next = i + 1;
			return 0;
		}
	}
	*next = t->nfunc;
	return -1;
}

int gopcln_find_func(const struct gopcln *t, const char *name, uint64_t *start)
{
	uint64_t i = 0, end;

	return gopcln_next_func(t, name, &i, start, &end);
}

/* The section of elf named one of names: its header; NULL if none. */
static Elf_Scn *section(Elf *elf, const char *const *names, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || !(n = elf_strptr(elf, shstrndx, sh->sh_name)))
			continue;
		for (const char *const *m = names; *m; m++)
			if (!strcmp(n, *m))
				return scn;
	}
	return NULL;
}

int gopcln_elf_is_go(Elf *elf)
{
	static const char *const names[] = { ".gopclntab", ".data.rel.ro.gopclntab",
					     ".go.buildinfo", NULL };
	GElf_Shdr sh;

	return elf && section(elf, names, &sh) != NULL;
}

struct gopcln *gopcln_from_elf(Elf *elf, const char **why)
{
	static const char *const tab[] = { ".gopclntab", ".data.rel.ro.gopclntab", NULL };
	static const char *const text[] = { ".text", NULL };
	GElf_Shdr sh, tsh;
	Elf_Scn *scn;
	Elf_Data *d;

	*why = NULL;
	if (!elf || !(scn = section(elf, tab, &sh)) || sh.sh_type == SHT_NOBITS)
		return NULL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf) {
		*why = "unreadable";
		return NULL;
	}
	return gopcln_parse(d->d_buf, d->d_size, section(elf, text, &tsh) ? tsh.sh_addr : 0, why);
}

/*
 * symbolize.c - names, lines and inlined frames of module addresses,
 * with libdw (libdwfl for files and symbols, libdw for DWARF scopes),
 * in what symbolize-module.c read of each module.
 *
 * One Dwfl per module, created at its first lookup or read ahead
 * (symbolize-store.c), with the module's ELF reported at bias 0:
 * libdwfl addresses are then the module's own (relative) addresses.
 * The ELF comes from the module table (an open descriptor, so a file
 * of an exited container process or a deleted library still
 * resolves); debug files found by memtap itself (debugfind.h), or
 * their uncompressed copies (debug-cache.h): libdwfl opens no path of
 * its own, and asks no debuginfod server.
 *
 * Inlined frames: dwarf_getscopes() lists the DIEs containing the
 * address, innermost first.  Each DW_TAG_inlined_subroutine is one
 * frame, located at the line the line table gives for the address
 * (innermost) or at the DW_AT_call_file/DW_AT_call_line of the scope
 * inside it; the first DW_TAG_subprogram ends the list and is the real
 * function, named from the symbol table when it has the address.
 *
 * Demangling uses libiberty's cplus_demangle() with DMGL_AUTO, which
 * tries Rust (legacy and v0) before C++ (HAVE_LIBIBERTY_DEMANGLE).
 */
#include "config.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#ifdef HAVE_LIBIBERTY_DEMANGLE
# include <libiberty/demangle.h>
#endif

#include "stack/runtimes/jitnames.h"
#include "stack/modules.h"
#include "stack/symbols/symbolize.h"
#include "stack/symbols/symbolize-int.h"
#include "util/xmalloc.h"

struct sym_entry {
	struct sym_info info;
	struct sym_frame *frames;
};

struct symbolizer {
	unsigned flags;
	struct sym_entry **tab;		/* open addressing on (module, addr) */
	size_t tab_size, count;
	char **strs;			/* interned strings, open addressing */
	size_t strs_size, nstrs;
	uint64_t lookups;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* One copy of each string, owned by the symbolizer. */
static const char *intern(struct symbolizer *sz, const char *s)
{
	size_t mask, j;

	if (!s)
		return NULL;
	if ((sz->nstrs + 1) * 2 > sz->strs_size) {
		char **old = sz->strs;
		size_t old_size = sz->strs_size;

		sz->strs_size = old_size ? old_size * 2 : 256;
		sz->strs = xcalloc(sz->strs_size, sizeof(*sz->strs));
		for (size_t i = 0; i < old_size; i++)
			if (old[i]) {
				j = hash_str(old[i]) & (sz->strs_size - 1);
				while (sz->strs[j])
					j = (j + 1) & (sz->strs_size - 1);
				sz->strs[j] = old[i];
			}
		free(old);
	}
	mask = sz->strs_size - 1;
	for (j = hash_str(s) & mask; sz->strs[j]; j = (j + 1) & mask)
		if (strcmp(sz->strs[j], s) == 0)
			return sz->strs[j];
	sz->strs[j] = xstrdup(s);
	sz->nstrs++;
	return sz->strs[j];
}

char *symbolize_demangle(const char *name)
{
#ifdef HAVE_LIBIBERTY_DEMANGLE
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_AUTO);
#else
	(void)name;
	return NULL;
#endif
}

struct symbolizer *symbolizer_new(unsigned flags)
{
	struct symbolizer *sz = xcalloc(1, sizeof(*sz));

	sz->flags = flags;
	sz->tab_size = 1024;
	sz->tab = xcalloc(sz->tab_size, sizeof(*sz->tab));
	return sz;
}

void symbolizer_free(struct symbolizer *sz)
{
	if (!sz)
		return;
	for (size_t i = 0; i < sz->tab_size; i++)
		if (sz->tab[i]) {
			free(sz->tab[i]->frames);
			free(sz->tab[i]);
		}
	free(sz->tab);
	for (size_t i = 0; i < sz->strs_size; i++)
		free(sz->strs[i]);
	free(sz->strs);
	free(sz);
}

uint64_t symbolizer_lookups(const struct symbolizer *sz)
{
	return sz->lookups;
}

size_t symbolizer_cached(const struct symbolizer *sz)
{
	return sz->count;
}

static uint64_t alias_key(const void *arg, size_t i)
{
	return ((const struct sym_module *)arg)->aliases[i].addr;
}

/* The best alias of the function at addr, or name if none is better. */
static const char *best_alias(struct sym_module *sm, uint64_t addr, const char *name)
{
	size_t i;

	sym_module_read_aliases(sm);
	i = sym_count_up_to(sm->naliases, addr, alias_key, sm);
	if (i && sm->aliases[i - 1].addr == addr)
		return sm->aliases[i - 1].name;
	return name;
}

/*
 * dwfl_module_addrinfo()'s name for addr as best_alias() prefers it, and
 * the offset: from the index when it knows the start and a function
 * starts there, else from libdwfl.
 */
static uint64_t indexed, searched;

void symbolize_index_counts(uint64_t *i, uint64_t *s)
{
	*i = indexed;
	*s = searched;
}

static const char *function_at(struct sym_module *sm, uint64_t addr, GElf_Off *offset)
{
	const char *name;
	uint64_t start;
	GElf_Sym sym;
	int r;

	sym_module_read_aliases(sm);
	r = sym_index_find(sm, addr, &start);
	if (r == SYM_INDEX_NONE) {
		*offset = 0;
		indexed++;
		return NULL;
	}
	if (r == SYM_INDEX_FOUND && (name = best_alias(sm, start, NULL))) {
		*offset = addr - start;
		indexed++;
		return name;
	}
	searched++;
	name = dwfl_module_addrinfo(sm->mod, addr, offset, &sym, NULL, NULL, NULL);
	return name ? best_alias(sm, addr - *offset, name) : NULL;
}

/*
 * A DIE's name: its linkage name when that is a mangled one (it carries
 * the namespace and class), else DW_AT_name (C code renamed with asm
 * labels has linkage names such as glibc's __GI___mmap64).
 */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (name && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
		return name;
	return dwarf_diename(die) ? dwarf_diename(die) : name;
}

static void add_frame(struct symbolizer *sz, struct sym_entry *e, size_t *cap,
		      const char *name, uint64_t offset, const char *file, int line,
		      int inlined)
{
	struct sym_frame *f;
	char *dem = NULL, *plain = NULL;
	const char *at = name ? strchr(name, '@') : NULL;

	/* symbol versions (__libc_start_main@@GLIBC_2.34) are not names */
	if (at && at > name) {
		plain = xmalloc((size_t)(at - name) + 1);
		memcpy(plain, name, (size_t)(at - name));
		plain[at - name] = '\0';
		name = plain;
	}
	e->frames = xgrowarray(e->frames, cap, (size_t)e->info.nframes + 1, sizeof(*f));
	f = &e->frames[e->info.nframes++];
	f->system_name = intern(sz, name);
	if (name && !(sz->flags & SYMBOLIZE_NO_DEMANGLE))
		dem = symbolize_demangle(name);
	f->function = dem ? intern(sz, dem) : f->system_name;
	free(dem);
	free(plain);
	f->offset = offset;
	if (sz->flags & SYMBOLIZE_NO_LINES) {
		file = NULL;
		line = 0;
	}
	f->file = intern(sz, file);
	f->line = file ? line : 0;
	f->inlined = inlined;
}

/*
 * Source lines, checked.
 *
 * libdwfl finds the CU of an address by the start of its nearest
 * address range below, whatever the range's length, and
 * dwfl_module_getsrc() returns the nearest line record below the
 * address.  Neither says that DWARF describes the address: _start or an
 * assembly function got the line of some unrelated function.  And the
 * linker leaves the debug information of code it discarded
 * (--gc-sections, duplicate COMDAT groups) in place, relocated to
 * address 0: a function that no longer exists then covers the first
 * pages of the module, lines and ranges included.
 *
 * So a line is only given where
 *  - a range of a CU contains the address, the range starting in an
 *    executable segment of the module (the CU index of
 *    symbolize-module.c);
 *  - a DW_TAG_subprogram of that CU contains it, by a range that starts
 *    in an executable segment too, or the CU is assembler code (which
 *    has lines but no functions);
 *  - a row of the CU's line table covers it: the last row at or below
 *    the address, not an end of sequence.
 */

static uint64_t cu_key(const void *arg, size_t i)
{
	return ((const struct sym_module *)arg)->cus[i].start;
}

/*
 * The CU whose code contains module address a, or NULL; *fns its list
 * of functions, or NULL.
 */
static Dwarf_Die *cu_of(struct sym_module *sm, uint64_t a, struct sym_cu_fns **fns)
{
	size_t lo;

	*fns = NULL;
	sym_module_read_cus(sm);
	/* the last range starting at or below a; ranges may nest (rare) */
	lo = sym_count_up_to(sm->ncus, a, cu_key, sm);
	while (lo-- > 0)
		if (a < sm->cus[lo].end) {
			*fns = &sm->cufns[sm->cus[lo].fns];
			return &sm->cus[lo].cu;
		}
	if (!sm->ncus) {
		/* no CU says where its code is: libdwfl's guess, checked later */
		Dwarf_Addr bias;

		return dwfl_module_addrdie(sm->mod, a, &bias);
	}
	return NULL;
}

static uint64_t row_key(const void *arg, size_t i)
{
	Dwarf_Line *row = dwarf_onesrcline((Dwarf_Lines *)arg, i);
	Dwarf_Addr a;

	return row && dwarf_lineaddr(row, &a) == 0 ? a : UINT64_MAX;
}

/* The line of DWARF address pc in cu: 0, or -1 when no row covers it. */
static int line_of(Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line)
{
	Dwarf_Lines *lines;
	size_t n, lo;
	Dwarf_Line *row;
	bool end;

	if (dwarf_getsrclines(cu, &lines, &n) != 0 || !n)
		return -1;
	/* rows are sorted by address: the last one at or below pc */
	lo = sym_count_up_to(n, pc, row_key, lines);
	/* an end of sequence is the first address after its rows */
	if (!lo || lo == n || !(row = dwarf_onesrcline(lines, lo - 1)) ||
	    dwarf_lineendsequence(row, &end) != 0 || end)
		return -1;
	*file = dwarf_linesrc(row, NULL, NULL);
	if (!*file || dwarf_lineno(row, line) != 0)
		return -1;
	return 0;
}

static int is_assembler(Dwarf_Die *cu)
{
	Dwarf_Attribute attr;
	Dwarf_Word lang;

	return dwarf_formudata(dwarf_attr(cu, DW_AT_language, &attr), &lang) == 0 &&
	       lang == DW_LANG_Mips_Assembler;
}

/* A pc of run-time code: its name from the perf map or jitdump. */
static void resolve_jit(struct symbolizer *sz, struct sym_entry *e)
{
	uint64_t start = 0;
	const char *file, *name;
	int line;
	size_t cap = 0;

	name = jit_names_lookup(e->info.module, e->info.addr, &start, &file, &line);
	add_frame(sz, e, &cap, NULL, 0, name ? file : NULL, line, 0);
	if (name) {
		/* as the runtime wrote it: no symbol version to cut */
		e->frames[0].function = e->frames[0].system_name = intern(sz, name);
		e->frames[0].offset = e->info.addr - start;
	}
}

static void resolve(struct symbolizer *sz, struct sym_entry *e)
{
	const struct module *m = module_get(e->info.module);
	struct sym_module *sm = m ? sym_store_get(m) : NULL;
	Dwfl_Module *mod = sm ? sm->mod : NULL;
	uint64_t addr = e->info.addr;
	const char *name = NULL, *file = NULL;
	GElf_Off offset = 0;
	int line = 0;
	size_t cap = 0;

	if (jit_is_module(e->info.module)) {
		resolve_jit(sz, e);
		return;
	}
	if (m) {
		e->info.module_path = m->path;
		e->info.module_name = m->name;
	}
	if (!mod) {
		add_frame(sz, e, &cap, NULL, 0, NULL, 0, 0);
		return;
	}
	name = function_at(sm, addr, &offset);

	struct sym_cu_fns *fns;
	Dwarf_Die *cu = cu_of(sm, addr, &fns);
	Dwarf_Addr pc = addr - sm->dwbias;
	Dwarf_Die scopes[SYM_MAX_SCOPES];
	int nscopes = cu ? sym_function_scopes(sm, fns, cu, pc, scopes) : 0;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;

	if (cu && (nscopes || is_assembler(cu)) && !(sz->flags & SYMBOLIZE_NO_LINES) &&
	    line_of(cu, pc, &file, &line) != 0) {
		file = NULL;
		line = 0;
	}
	/* libdw reads (and sorts) the whole line table for the file names */
	if (cu && !(sz->flags & SYMBOLIZE_NO_LINES) && dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	if (!name && nscopes) {
		Dwarf_Addr low;

		name = die_name(&scopes[0]);
		if (dwarf_lowpc(&scopes[0], &low) == 0 && pc >= low)
			offset = pc - low;
	}
	if (!name && !nscopes) {
		uint64_t off = 0;

		name = sym_go_name(sm, addr, !(sz->flags & SYMBOLIZE_NO_LINES), &off, &file, &line);
		offset = off;
	}
	/* the inlined subroutines, innermost first */
	for (int i = nscopes - 1; i > 0 && !(sz->flags & SYMBOLIZE_NO_INLINE); i--) {
		Dwarf_Die *s = &scopes[i];

		add_frame(sz, e, &cap, die_name(s), 0, file, line, 1);

		/* The call site, in the scope around this one. */
		Dwarf_Attribute attr;
		Dwarf_Word v;

		file = NULL;
		line = 0;
		if (files && dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &v) == 0)
			file = dwarf_filesrc(files, v, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &attr), &v) == 0)
			line = (int)v;
	}
	add_frame(sz, e, &cap, name, name ? offset : 0, file, line, 0);
}

static size_t slot(uint32_t module, uint64_t addr, size_t size)
{
	uint64_t h = (addr ^ ((uint64_t)module << 40)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (size - 1);
}

const struct sym_info *symbolizer_lookup(struct symbolizer *sz, uint32_t module,
					 uint64_t addr)
{
	struct sym_entry *e;
	size_t j, mask = sz->tab_size - 1;

	sz->lookups++;
	for (j = slot(module, addr, sz->tab_size); sz->tab[j]; j = (j + 1) & mask)
		if (sz->tab[j]->info.module == module && sz->tab[j]->info.addr == addr)
			return &sz->tab[j]->info;
	if ((sz->count + 1) * 2 > sz->tab_size) {
		struct sym_entry **old = sz->tab;
		size_t old_size = sz->tab_size;

		sz->tab_size *= 2;
		sz->tab = xcalloc(sz->tab_size, sizeof(*sz->tab));
		mask = sz->tab_size - 1;
		for (size_t i = 0; i < old_size; i++)
			if (old[i]) {
				j = slot(old[i]->info.module, old[i]->info.addr, sz->tab_size);
				while (sz->tab[j])
					j = (j + 1) & mask;
				sz->tab[j] = old[i];
			}
		free(old);
		for (j = slot(module, addr, sz->tab_size); sz->tab[j]; j = (j + 1) & mask)
			;
	}
	e = xcalloc(1, sizeof(*e));
	e->info.module = module;
	e->info.addr = addr;
	resolve(sz, e);
	e->info.frames = e->frames;
	sz->tab[j] = e;
	sz->count++;
	return &e->info;
}

int symbolizer_format(const struct sym_info *si, int i, char *buf, size_t size)
{
	const struct sym_frame *f;

	if (i < 0 || i >= si->nframes)
		return snprintf(buf, size, "[unknown]");
	f = &si->frames[i];
	if (!f->function) {
		if (si->module_name)
			return snprintf(buf, size, "[unknown] (%s+0x%" PRIx64 ")",
					si->module_name, si->addr);
		return snprintf(buf, size, "[unknown] (0x%" PRIx64 ")", si->addr);
	}
	if (f->file) {
		const char *base = strrchr(f->file, '/');

		return snprintf(buf, size, "%s (%s:%d)", f->function,
				base ? base + 1 : f->file, f->line);
	}
	return snprintf(buf, size, "%s", f->function);
}

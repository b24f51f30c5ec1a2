/*
 * symbolize-module.c - a module's symbols and DWARF as the symbolizer
 * reads them, once per module for the run (symbolize-int.h's struct
 * sym_module): its Dwfl opened on the module's file, the preferred name
 * of each function address (aliases), the symbol index
 * (symbolize-index.c), the executable segments and the code ranges of
 * its CUs; and all of it freed.
 *
 * The store (symbolize-store.c) calls these on its thread for a module
 * read ahead, or on the main thread at a lookup; symbolize.c looks
 * addresses up in what they read.  Neither is called from here.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "stack/symbols/debug-cache.h"
#include "stack/symbols/symbolize-int.h"
#include "util/xmalloc.h"

static char *sym_debuginfo_path;

/* Never called: the module's ELF is reported open (no search by build-id). */
static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	*elfp = NULL;
	return -1;
}

static const Dwfl_Callbacks sym_callbacks = {
	.find_elf = sym_find_elf,
	.find_debuginfo = debug_cache_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &sym_debuginfo_path,
};

/*
 * How good a name is among the aliases of one address (lower is
 * better): exported (global or weak) before local, then fewer leading
 * underscores, then global before weak, then shorter.  So glibc's
 * malloc beats __libc_malloc, and mmap (weak) beats __mmap and mmap64.
 */
static int alias_rank(const char *name, const GElf_Sym *sym)
{
	int bind = GELF_ST_BIND(sym->st_info);
	size_t under = strspn(name, "_");
	size_t len = strcspn(name, "@");

	return (bind == STB_LOCAL) * 10000000 + (int)(under > 9 ? 9 : under) * 1000000 +
	       (bind == STB_WEAK) * 100000 + (int)(len > 99999 ? 99999 : len);
}

static int alias_cmp(const void *a, const void *b)
{
	const struct sym_alias *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank - y->rank;
}

static void read_aliases(struct sym_module *sm)
{
	int n = dwfl_module_getsymtab(sm->mod);
	size_t cap = 0, out = 0;

	sm->aliases_read = 1;
	if (dwfl_module_getsymtab_first_global(sm->mod) > 0)
		sym_index_build(sm, n);	/* else one pass over all: no index */
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(sm->mod, i, &sym, &addr,
							   NULL, NULL, NULL);

		if (!name || !*name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !addr)
			continue;
		sm->aliases = xgrowarray(sm->aliases, &cap, sm->naliases + 1,
					 sizeof(*sm->aliases));
		sm->aliases[sm->naliases].addr = addr;
		sm->aliases[sm->naliases].name = name;
		sm->aliases[sm->naliases].rank = alias_rank(name, &sym);
		sm->naliases++;
	}
	if (!sm->naliases)
		return;
	qsort(sm->aliases, sm->naliases, sizeof(*sm->aliases), alias_cmp);
	for (size_t i = 0; i < sm->naliases; i++)
		if (!out || sm->aliases[out - 1].addr != sm->aliases[i].addr)
			sm->aliases[out++] = sm->aliases[i];
	sm->naliases = out;
}

Dwfl_Module *sym_module_open(struct sym_module *sm, const char *name, const char *path,
			     pid_t pid, int fd)
{
	void **ud = NULL;

	sm->tried = 1;
	if (fd < 0)
		return NULL;
	sm->dwfl = dwfl_begin(&sym_callbacks);
	if (!sm->dwfl) {
		close(fd);
		return NULL;
	}
	dwfl_report_begin(sm->dwfl);
	/* base 0 relative to p_vaddr: bias 0, addresses as in the file */
	sm->mod = dwfl_report_elf(sm->dwfl, name, path, fd, 0, true);
	if (!sm->mod)
		close(fd);
	/* the root its debug files are looked for in (debug-cache.h) */
	else if (dwfl_module_info(sm->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud)
		*ud = (void *)(intptr_t)pid;
	dwfl_report_end(sm->dwfl, NULL, NULL);
	return sm->mod;
}

void sym_module_clear(struct sym_module *sm)
{
	if (sm->dwfl)
		dwfl_end(sm->dwfl);
	free(sm->aliases);
	sym_index_free(sm);
	free(sm->code);
	free(sm->cus);
	sym_cu_fns_free(sm);
	sym_go_free(sm);
	sm->dwfl = NULL;
	sm->mod = NULL;
	sm->aliases = NULL;
	sm->code = NULL;
	sm->cus = NULL;
}

/* Read the executable segments of the module. */
static void read_code_ranges(struct sym_module *sm)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(sm->mod, &bias);
	size_t nph = 0, cap = 0;

	if (!elf || elf_getphdrnum(elf, &nph) != 0)
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		sm->code = xgrowarray(sm->code, &cap, sm->ncode + 1, sizeof(*sm->code));
		sm->code[sm->ncode][0] = ph.p_vaddr + bias;
		sm->code[sm->ncode][1] = ph.p_vaddr + bias + ph.p_memsz;
		sm->ncode++;
	}
}

static int cu_range_cmp(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The index of the CUs' ranges that start in code: a line is given
 * only where one of them contains the address (symbolize.c, "Source
 * lines, checked").
 */
static void read_cus(struct sym_module *sm)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t cap = 0, fcap = 0;

	sm->cus_read = 1;
	if (!dwfl_module_getdwarf(sm->mod, &sm->dwbias))
		return;
	read_code_ranges(sm);
	while ((cu = dwfl_module_nextcu(sm->mod, cu, &bias)) != NULL) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;
		size_t first = sm->ncus;

		while ((off = dwarf_ranges(cu, off, &base, &start, &end)) > 0) {
			if (start >= end || !sym_in_code(sm, start + bias))
				continue;
			sm->cus = xgrowarray(sm->cus, &cap, sm->ncus + 1, sizeof(*sm->cus));
			sm->cus[sm->ncus].start = start + bias;
			sm->cus[sm->ncus].end = end + bias;
			sm->cus[sm->ncus].cu = *cu;
			sm->cus[sm->ncus].fns = sm->ncufns;
			sm->ncus++;
		}
		if (sm->ncus > first) {
			/* the CU's list of functions, read at its first address */
			sm->cufns = xgrowarray(sm->cufns, &fcap, sm->ncufns + 1,
					       sizeof(*sm->cufns));
			memset(&sm->cufns[sm->ncufns++], 0, sizeof(*sm->cufns));
		}
	}
	if (sm->ncus)
		qsort(sm->cus, sm->ncus, sizeof(*sm->cus), cu_range_cmp);
}

void sym_module_read_aliases(struct sym_module *sm)
{
	if (!sm->aliases_read)
		read_aliases(sm);
}

void sym_module_read_cus(struct sym_module *sm)
{
	if (!sm->cus_read)
		read_cus(sm);
}

void sym_module_read(struct sym_module *sm)
{
	if (!sm->mod)
		return;
	sym_module_read_aliases(sm);
	sym_module_read_cus(sm);
}

/*
 * symbolize-int.h - what the symbolizer's files share: a module's
 * symbols and DWARF as the symbolizer reads them (struct sym_module).
 *
 * symbolize.c looks addresses up.  Below it, each file calls only
 * files named after it: the store of the modules (symbolize-store.c),
 * a module read and freed (symbolize-module.c), and what that reads:
 * the symbol index (symbolize-index.c), the CUs' functions
 * (symbolize-scope.c) and Go's function table (symbolize-go.c).  The
 * binary search that symbolize.c, symbolize-index.c and
 * symbolize-scope.c share, sym_count_up_to(), is defined here.
 *
 * The modules' debug information is kept in one store for the whole run
 * (symbolize-store.c), shared by every symbolizer: a report after the
 * first reads no file again, and symbolize_prefetch() has a module read
 * ahead, on a thread of the store's own, while the target runs.  A
 * module the thread works on is the thread's alone (SM_BUSY); every
 * other is the caller's, on memtap's main thread only.
 */
#ifndef MEMTAP_SYMBOLIZE_INT_H
#define MEMTAP_SYMBOLIZE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

struct module;
struct gopcln;

/* The preferred name of each function address (aliases resolved). */
struct sym_alias {
	uint64_t addr;
	const char *name;	/* in the Dwfl's symbol table */
	int rank;		/* lower is better */
};

/* Sized symbols by start (symbolize-index.c): one entry per start. */
struct sym_cover {
	uint64_t start, end;	/* end: of the longest symbol there */
	uint64_t max_end;	/* the highest end of this entry and those before */
};

struct sym_cover_table {
	struct sym_cover *c;
	size_t n;
	uint64_t *sizeless;	/* starts of the sizeless symbols, sorted */
	size_t nsizeless;
};

/* An address range of a compilation unit's code (module addresses). */
struct sym_cu_range {
	uint64_t start, end;
	Dwarf_Die cu;
	size_t fns;		/* the CU's entry in sym_module.cufns */
};

/* A range of a function of a CU (symbolize-scope.c, DWARF addresses). */
struct sym_fn_range {
	Dwarf_Addr start, end;
	Dwarf_Addr max_end;	/* the highest end of this range and those before */
	size_t order;		/* the function's place in the CU's walk */
	Dwarf_Die die;
};

/* A CU's functions, read at the first address in it. */
struct sym_cu_fns {
	struct sym_fn_range *r;	/* sorted by start */
	size_t n;
	int read;
	int off;		/* MEMTAP_SYMBOL_INDEX=0: walk the CU */
};

enum sym_state {
	SM_IDLE,		/* the caller's: read on demand */
	SM_QUEUED,		/* to be read ahead: name, path, fd set */
	SM_BUSY,		/* the store's thread reads it */
};

struct sym_module {
	enum sym_state state;
	char *name, *path;	/* SM_QUEUED: copies of the module's */
	int fd;			/* SM_QUEUED: its file, or -1 */
	pid_t pid;		/* SM_QUEUED: the module's pid (its root) */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int tried;
	struct sym_alias *aliases;	/* sorted by addr, one per addr */
	size_t naliases;
	int aliases_read;
	/* symbolize-index.c, read with the aliases */
	int index_on;
	struct sym_cover_table globals, locals;	/* global and weak; local */
	uint64_t (*code)[2];		/* executable PT_LOAD ranges */
	size_t ncode;
	Dwarf_Addr dwbias;		/* DWARF address + dwbias = module address */
	struct sym_cu_range *cus;	/* sorted by start */
	size_t ncus;
	struct sym_cu_fns *cufns;	/* one per CU of cus */
	size_t ncufns;
	int cus_read;
	struct gopcln *go;		/* symbolize-go.c: Go's function table */
	int go_read;
};

/*
 * symbolize-module.c: open sm's file (fd, taken) once: sm->mod, or
 * NULL; its debug files are looked for in pid's root (0: memtap's).
 */
Dwfl_Module *sym_module_open(struct sym_module *sm, const char *name, const char *path,
			     pid_t pid, int fd);
/*
 * symbolize-module.c: read what lookups need of an open module (sm->mod
 * set), each once: the aliases (and the symbol index), the CUs' code
 * ranges; sym_module_read(): both, nothing when sm->mod is NULL.
 */
void sym_module_read_aliases(struct sym_module *sm);
void sym_module_read_cus(struct sym_module *sm);
void sym_module_read(struct sym_module *sm);
/* symbolize-module.c: free what sm holds (not sm). */
void sym_module_clear(struct sym_module *sm);

/*
 * Of n elements sorted by key (key_of(arg, i) for element i), the
 * number whose key is at most key: the index after the last.
 */
static inline size_t sym_count_up_to(size_t n, uint64_t key,
				     uint64_t (*key_of)(const void *, size_t), const void *arg)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (key_of(arg, mid) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* symbolize-scope.c: does module address a lie in code (or is none known)? */
int sym_in_code(const struct sym_module *sm, uint64_t a);
/*
 * symbolize-scope.c: the function of cu (found under it, through
 * namespaces and types) that contains DWARF address pc by a range
 * starting in code: scopes[0], then the inlined subroutines in it,
 * outermost first (SYM_MAX_SCOPES at most).  Returns their number, 0
 * when no function contains pc.  f: the CU's list of functions, or NULL
 * to walk the CU.
 */
#define SYM_MAX_SCOPES 64
int sym_function_scopes(const struct sym_module *sm, struct sym_cu_fns *f, Dwarf_Die *cu,
			Dwarf_Addr pc, Dwarf_Die *scopes);
void sym_cu_fns_free(struct sym_module *sm);

/* symbolize-index.c: sm's index, from its n symbols (dwfl_module_getsymtab). */
void sym_index_build(struct sym_module *sm, int n);
void sym_index_free(struct sym_module *sm);
/*
 * The start of the symbol dwfl_module_addrinfo() would find for module
 * address a: SYM_INDEX_FOUND and *start; SYM_INDEX_NONE: it would find
 * none; SYM_INDEX_ASK: ask it.
 */
enum { SYM_INDEX_ASK, SYM_INDEX_FOUND, SYM_INDEX_NONE };
int sym_index_find(const struct sym_module *sm, uint64_t a, uint64_t *start);

/*
 * symbolize-go.c: the name of module address addr from sm's Go function
 * table, where nothing else names it, and *offset from its start; with
 * lines, *file and *line where *file is still NULL.  NULL: none.
 */
const char *sym_go_name(struct sym_module *sm, uint64_t addr, int lines, uint64_t *offset,
			const char **file, int *line);
void sym_go_free(struct sym_module *sm);

/* symbolize-store.c: m's entry, for the main thread: never SM_BUSY. */
struct sym_module *sym_store_get(const struct module *m);

#endif /* MEMTAP_SYMBOLIZE_INT_H */

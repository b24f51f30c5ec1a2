/*
 * symbolize-index.c - the start of the symbol that libdwfl's
 * dwfl_module_addrinfo would name for an address, found in sorted
 * tables instead of by its walk over the whole symbol table (one walk
 * per address: most of a report's time on a program with many stacks).
 *
 * libdwfl looks at the defined, named symbols at or below the address
 * that are not sections, files or TLS: first the global and weak ones,
 * then, if none with a size covers the address and no sizeless global
 * one is exactly at it, the local ones.  A sized symbol covering the
 * address wins over any sizeless one; among sized ones the choice
 * depends on the order of the table when their starts differ (a closer
 * start wins, and so does a better binding, whatever its start).  The
 * index answers only where the order cannot matter: every sized
 * symbol of the pass that covers the address starts at one address.
 * Where none covers it, libdwfl takes the sizeless symbol (an assembly
 * label) closest below the address if no sized symbol below ends above
 * it, and finds nothing otherwise: the index says "nothing" when no
 * sizeless symbol could be taken.  Everything else (nested symbols, a
 * sizeless symbol that may be taken, a search too long) is left to
 * libdwfl: the caller falls back.
 *
 * MEMTAP_SYMBOL_INDEX=0 turns the index off (the tests compare).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "stack/symbols/symbolize-int.h"
#include "util/xmalloc.h"

#define BACK_STEPS 16	/* starts below the address tried for a cover */

static int start_cmp(const void *a, const void *b)
{
	const struct sym_cover *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort, one entry per start (the longest), and the running maximum of the ends. */
static void finish(struct sym_cover_table *t)
{
	size_t out = 0;
	uint64_t max = 0;

	if (t->nsizeless)
		qsort(t->sizeless, t->nsizeless, sizeof(*t->sizeless), u64_cmp);
	if (t->n)
		qsort(t->c, t->n, sizeof(*t->c), start_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (out && t->c[out - 1].start == t->c[i].start) {
			if (t->c[i].end > t->c[out - 1].end)
				t->c[out - 1].end = t->c[i].end;
			continue;
		}
		t->c[out++] = t->c[i];
	}
	t->n = out;
	for (size_t i = 0; i < t->n; i++) {
		if (t->c[i].end > max)
			max = t->c[i].end;
		t->c[i].max_end = max;
	}
}

static void add_sizeless(struct sym_cover_table *t, size_t *cap, uint64_t a)
{
	t->sizeless = xgrowarray(t->sizeless, cap, t->nsizeless + 1, sizeof(*t->sizeless));
	t->sizeless[t->nsizeless++] = a;
}

static void add(struct sym_cover_table *t, size_t *cap, uint64_t start, uint64_t end)
{
	t->c = xgrowarray(t->c, cap, t->n + 1, sizeof(*t->c));
	t->c[t->n].start = start;
	t->c[t->n].end = end;
	t->n++;
}

void sym_index_build(struct sym_module *sm, int n)
{
	size_t gcap = 0, lcap = 0, gscap = 0, lscap = 0;
	const char *env = getenv("MEMTAP_SYMBOL_INDEX");

	sm->index_on = !(env && strcmp(env, "0") == 0);
	if (!sm->index_on)
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(sm->mod, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind;

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		bind = GELF_ST_BIND(sym.st_info);
		if (sym.st_size && bind == STB_LOCAL)
			add(&sm->locals, &lcap, addr, addr + sym.st_size);
		else if (sym.st_size)
			add(&sm->globals, &gcap, addr, addr + sym.st_size);
		else if (bind == STB_LOCAL)
			add_sizeless(&sm->locals, &lscap, addr);
		else
			add_sizeless(&sm->globals, &gscap, addr);
	}
	finish(&sm->globals);
	finish(&sm->locals);
}

void sym_index_free(struct sym_module *sm)
{
	free(sm->globals.c);
	free(sm->globals.sizeless);
	free(sm->locals.c);
	free(sm->locals.sizeless);
	memset(&sm->globals, 0, sizeof(sm->globals));
	memset(&sm->locals, 0, sizeof(sm->locals));
}

static uint64_t start_key(const void *arg, size_t i)
{
	return ((const struct sym_cover_table *)arg)->c[i].start;
}

static uint64_t sizeless_key(const void *arg, size_t i)
{
	return ((const struct sym_cover_table *)arg)->sizeless[i];
}

/*
 * One pass: 1 and *start (one start covers a), 0 (none covers a), -1
 * (ask libdwfl).  *label: the highest end of a sized symbol, or start of
 * a sizeless one, at or below a so far (libdwfl's min_label); *closest:
 * 1 + the start of the closest sizeless symbol so far, 0: none.
 */
static int cover(const struct sym_cover_table *t, uint64_t a, uint64_t *start, uint64_t *label,
		 uint64_t *closest)
{
	size_t i = sym_count_up_to(t->n, a, start_key, t);
	size_t j = sym_count_up_to(t->nsizeless, a, sizeless_key, t), k;

	if (j && t->sizeless[j - 1] + 1 > *closest)
		*closest = t->sizeless[j - 1] + 1;
	if (*closest && *closest - 1 > *label)
		*label = *closest - 1;
	if (i && t->c[i - 1].max_end > *label)
		*label = t->c[i - 1].max_end;
	if (!i || t->c[i - 1].max_end <= a)
		return 0;
	for (k = i; k-- > 0 && i - k <= BACK_STEPS;)
		if (a < t->c[k].end) {
			if (k && t->c[k - 1].max_end > a)
				return -1;	/* nested: the table's order decides */
			*start = t->c[k].start;
			return 1;
		}
	return -1;
}

int sym_index_find(const struct sym_module *sm, uint64_t a, uint64_t *start)
{
	uint64_t label = 0, closest = 0;
	int r;

	if (!sm->index_on)
		return SYM_INDEX_ASK;
	r = cover(&sm->globals, a, start, &label, &closest);
	if (r)
		return r > 0 ? SYM_INDEX_FOUND : SYM_INDEX_ASK;
	if (closest == a + 1)
		return SYM_INDEX_ASK;	/* a sizeless global exactly there: no local pass */
	r = cover(&sm->locals, a, start, &label, &closest);
	if (r)
		return r > 0 ? SYM_INDEX_FOUND : SYM_INDEX_ASK;
	/* no sized symbol covers a: a sizeless one not below a sized end may be taken */
	return closest && closest - 1 >= label ? SYM_INDEX_ASK : SYM_INDEX_NONE;
}

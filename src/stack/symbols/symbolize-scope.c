/*
 * symbolize-scope.c - the function of a CU that contains an address,
 * and the inlined subroutines in it (libdw).
 *
 * A function is the first DW_TAG_subprogram (or entry point) in the
 * CU's order, through namespaces and types, one of whose ranges starts
 * in code and contains the address.  Walking the CU's DIEs for each
 * address costs a walk over the whole CU (about 100 us in a big one,
 * such as CPython's ceval.c); so each CU's functions are listed once,
 * at the first address in it: every such range with the function's
 * place in the walk, sorted by start.  The function of an address is
 * then the first in the walk of those whose range contains it: the same
 * one the walk finds.
 *
 * MEMTAP_SYMBOL_INDEX=0 turns the list off as it does the index of the
 * symbols (symbolize-index.c): each address walks its CU.
 */
#include "config.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "stack/symbols/symbolize-int.h"
#include "util/xmalloc.h"

#define MAX_DEPTH 16	/* namespaces and types around a function */

int sym_in_code(const struct sym_module *sm, uint64_t a)
{
	if (!sm->ncode)
		return 1;
	for (size_t i = 0; i < sm->ncode; i++)
		if (a >= sm->code[i][0] && a < sm->code[i][1])
			return 1;
	return 0;
}

/*
 * Does a range of die that starts in code contain DWARF address pc?
 * (-1 when die has no ranges at all.)
 */
static int die_covers(const struct sym_module *sm, Dwarf_Die *die, Dwarf_Addr pc)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int any = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		any = 1;
		if (pc >= start && pc < end && sym_in_code(sm, start + sm->dwbias))
			return 1;
	}
	return any ? 0 : -1;
}

/*
 * Inlined subroutines inside die that contain pc, outermost first, into
 * scopes[*n...]: through lexical blocks, never into other functions.
 */
static void inlined_scopes(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *scopes, int *n)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, pc) != 1)
			continue;
		if (tag == DW_TAG_inlined_subroutine) {
			if (*n >= SYM_MAX_SCOPES)
				return;
			scopes[(*n)++] = child;
		}
		inlined_scopes(&child, pc, scopes, n);
		return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int is_container(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* The walk: the first function under die containing pc, or 0. */
static int walk_scopes(const struct sym_module *sm, Dwarf_Die *die, Dwarf_Addr pc,
		       Dwarf_Die *scopes, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), n;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) {
			if (die_covers(sm, &child, pc) != 1)
				continue;
			scopes[0] = child;
			n = 1;
			inlined_scopes(&child, pc, scopes, &n);
			return n;
		}
		if (is_container(tag) && (n = walk_scopes(sm, &child, pc, scopes, depth + 1)))
			return n;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The walk of walk_scopes(), listing every range it would look at. */
static void list_functions(const struct sym_module *sm, Dwarf_Die *die, int depth,
			   struct sym_cu_fns *f, size_t *cap, size_t *order)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		if (is_container(tag)) {
			list_functions(sm, &child, depth + 1, f, cap, order);
			continue;
		}
		if (tag != DW_TAG_subprogram && tag != DW_TAG_entry_point)
			continue;
		while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0) {
			struct sym_fn_range *r;

			if (start >= end || !sym_in_code(sm, start + sm->dwbias))
				continue;
			f->r = xgrowarray(f->r, cap, f->n + 1, sizeof(*f->r));
			r = &f->r[f->n++];
			r->start = start;
			r->end = end;
			r->order = *order;
			r->die = child;
		}
		(*order)++;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int fn_range_cmp(const void *a, const void *b)
{
	const struct sym_fn_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void read_functions(const struct sym_module *sm, Dwarf_Die *cu, struct sym_cu_fns *f)
{
	size_t cap = 0, order = 0;
	Dwarf_Addr max_end = 0;

	list_functions(sm, cu, 0, f, &cap, &order);
	if (f->n)
		qsort(f->r, f->n, sizeof(*f->r), fn_range_cmp);
	for (size_t i = 0; i < f->n; i++) {
		if (f->r[i].end > max_end)
			max_end = f->r[i].end;
		f->r[i].max_end = max_end;
	}
}

static uint64_t fn_key(const void *arg, size_t i)
{
	return ((const struct sym_cu_fns *)arg)->r[i].start;
}

int sym_function_scopes(const struct sym_module *sm, struct sym_cu_fns *f, Dwarf_Die *cu,
			Dwarf_Addr pc, Dwarf_Die *scopes)
{
	const struct sym_fn_range *best = NULL;
	const char *env;
	size_t k;
	int n = 1;

	if (f && !f->read) {
		f->read = 1;
		env = getenv("MEMTAP_SYMBOL_INDEX");
		f->off = env && strcmp(env, "0") == 0;
		if (!f->off)
			read_functions(sm, cu, f);
	}
	if (!f || f->off)
		return walk_scopes(sm, cu, pc, scopes, 0);
	/* back from the last start at or below pc while a range may reach it */
	k = sym_count_up_to(f->n, pc, fn_key, f);
	while (k-- > 0 && f->r[k].max_end > pc)
		if (pc < f->r[k].end && (!best || f->r[k].order < best->order))
			best = &f->r[k];
	if (!best)
		return 0;
	scopes[0] = best->die;
	inlined_scopes(&scopes[0], pc, scopes, &n);
	return n;
}

void sym_cu_fns_free(struct sym_module *sm)
{
	for (size_t i = 0; i < sm->ncufns; i++)
		free(sm->cufns[i].r);
	free(sm->cufns);
	sm->cufns = NULL;
	sm->ncufns = 0;
}

/*
 * insn-walk.c - the paths of every CPU's instruction analysis followed
 * the same way (insn-walk.h): jump targets visited, the probes' code,
 * the budget, and the other arms of conditional branches.
 */
#include "config.h"

#include <string.h>

#include "arch/insn-walk.h"

void insn_walk_init(struct insn_walk *w, const struct insn_code *code, uint64_t align,
		    void *alts, size_t path_size)
{
	memset(w, 0, sizeof(*w));
	w->code = code;
	w->align = align;
	w->budget = INSN_WALK_MAX_INSNS;
	w->alts = alts;
	w->path_size = path_size;
}

/* 1 when target was not visited yet (now it is), 0 otherwise. */
static int visit(struct insn_walk *w, uint64_t target)
{
	for (int i = 0; i < w->nvisited; i++)
		if (w->visited[i] == target)
			return 0;
	if (w->nvisited == INSN_WALK_MAX_VISITED)
		return 0;
	w->visited[w->nvisited++] = target;
	return 1;
}

int insn_walk_probe_code(const struct insn_walk *w, uint64_t addr)
{
	return w->code->is_probe_entry && w->code->is_probe_entry(w->code->probes, addr);
}

int insn_walk_enterable(struct insn_walk *w, uint64_t target)
{
	return target >= 4096 && !(target & (w->align - 1)) && !insn_walk_probe_code(w, target) &&
	       visit(w, target);
}

void *insn_walk_fork(struct insn_walk *w, const void *path, uint64_t target)
{
	void *alt;

	if (w->nalts >= INSN_WALK_MAX_ALTS || !insn_walk_enterable(w, target))
		return NULL;
	alt = (char *)w->alts + (size_t)w->nalts++ * w->path_size;
	memcpy(alt, path, w->path_size);
	return alt;
}

/* Step path until the rule, a dead end or the budget's end: INSN_FOUND or INSN_DEAD. */
static int follow(struct insn_walk *w, void *path,
		  int (*step)(struct insn_walk *w, void *path, struct insn_rule *rule),
		  struct insn_rule *rule)
{
	while (w->budget-- > 0) {
		int k = step(w, path, rule);

		if (k != INSN_GO_ON)
			return k;
	}
	return INSN_DEAD;
}

int insn_walk_run(struct insn_walk *w, void *path,
		  int (*step)(struct insn_walk *w, void *path, struct insn_rule *rule),
		  struct insn_rule *rule)
{
	for (;;) {
		if (follow(w, path, step, rule) == INSN_FOUND)
			return 0;
		if (w->nalts == 0 || w->budget <= 0)
			return -1;
		w->nalts--;
		memcpy(path, (char *)w->alts + (size_t)w->nalts * w->path_size, w->path_size);
	}
}

/*
 * maptrack.c - the held-memory ranges of maptrack.h: a sorted array per
 * process; removal trims or splits the ranges it overlaps.  Each change
 * costs O(ranges) moves, which stays small next to a ptrace stop for the
 * few thousand mappings a process usually has.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "record/aggregate.h"
#include "record/maptrack.h"
#include "record/sink-proc.h"
#include "util/xmalloc.h"

struct map_table {
	struct map_seg *segs;
	size_t n, cap;
};

/* What the stack of an own range holds changes by sign * bytes. */
static void held(struct sink_proc *p, const struct map_seg *s, uint64_t bytes, int sign,
		 int objects)
{
	if (!s->inherited && s->kind < EV_NKINDS)
		aggregate_held(p, (enum event_kind)s->kind, s->stack, sign * (int64_t)bytes,
			       objects);
}

static struct map_table *table(struct sink_proc *p)
{
	if (!p->maps)
		p->maps = xcalloc(1, sizeof(*p->maps));
	return p->maps;
}

/* Index of the first range that ends after addr. */
static size_t first_after(const struct map_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->segs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void insert_at(struct map_table *t, size_t i, const struct map_seg *s)
{
	t->segs = xgrowarray(t->segs, &t->cap, t->n + 1, sizeof(*t->segs));
	memmove(&t->segs[i + 1], &t->segs[i], (t->n - i) * sizeof(*t->segs));
	t->segs[i] = *s;
	t->n++;
}

void maptrack_remove(struct sink_proc *p, uint64_t start, uint64_t end)
{
	struct map_table *t = p->maps;
	size_t i, j;

	if (!t || start >= end)
		return;
	i = first_after(t, start);
	if (i < t->n && t->segs[i].start < start && t->segs[i].end > end) {
		/* a hole in the middle of one range: split it */
		struct map_seg tail = t->segs[i];

		held(p, &tail, end - start, -1, 1);	/* one range more */
		tail.start = end;
		t->segs[i].end = start;
		insert_at(t, i + 1, &tail);
		return;
	}
	if (i < t->n && t->segs[i].start < start) {
		held(p, &t->segs[i], t->segs[i].end - start, -1, 0);
		t->segs[i].end = start;
		i++;
	}
	for (j = i; j < t->n && t->segs[j].end <= end; j++)
		held(p, &t->segs[j], t->segs[j].end - t->segs[j].start, -1, -1);
	if (j < t->n && t->segs[j].start < end) {
		held(p, &t->segs[j], end - t->segs[j].start, -1, 0);
		t->segs[j].start = end;
	}
	if (j > i) {
		memmove(&t->segs[i], &t->segs[j], (t->n - j) * sizeof(*t->segs));
		t->n -= j - i;
	}
}

void maptrack_add(struct sink_proc *p, uint64_t start, uint64_t end, uint32_t stack,
		  uint64_t time_ns, uint32_t kind)
{
	struct map_table *t = table(p);
	struct map_seg s = { start, end, time_ns, stack, (uint16_t)kind, 0 };

	if (start >= end)
		return;
	maptrack_remove(p, start, end);
	insert_at(t, first_after(t, start), &s);
	held(p, &s, end - start, 1, 1);
}

void maptrack_copy(struct sink_proc *to, const struct sink_proc *from)
{
	maptrack_clear(to);
	if (!from->maps || !from->maps->n)
		return;
	struct map_table *t = table(to);

	t->segs = xgrowarray(t->segs, &t->cap, from->maps->n, sizeof(*t->segs));
	memcpy(t->segs, from->maps->segs, from->maps->n * sizeof(*t->segs));
	t->n = from->maps->n;
	for (size_t i = 0; i < t->n; i++)
		t->segs[i].inherited = 1;
}

void maptrack_clear(struct sink_proc *p)
{
	if (!p->maps)
		return;
	for (size_t i = 0; i < p->maps->n; i++)
		held(p, &p->maps->segs[i], p->maps->segs[i].end - p->maps->segs[i].start, -1,
		     -1);
	p->maps->n = 0;
}

void maptrack_forget(struct sink_proc *p)
{
	maptrack_clear(p);
	if (p->maps)
		free(p->maps->segs);
	free(p->maps);
	p->maps = NULL;
}

void maptrack_foreach(const struct sink_proc *p, void (*fn)(const struct map_seg *, void *),
		      void *arg)
{
	for (size_t i = 0; p->maps && i < p->maps->n; i++)
		fn(&p->maps->segs[i], arg);
}

void maptrack_release_all(void)
{
	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		if (p->maps)
			free(p->maps->segs);
		free(p->maps);
		p->maps = NULL;
	}
}

const struct sink_proc_store maptrack_store = {
	.fork = maptrack_copy,
	.exec = maptrack_clear,
	.forget = maptrack_forget,
	.release = maptrack_release_all,
};

/*
 * jittable.c - the table of ranges of run-time code and their names
 * (jitnames-int.h) that the perf map and jitdump readers fill: later
 * ranges win, an index of disjoint pieces made again when ranges were
 * added, a hash of the last range at each start (code rewritten where
 * code was), and a full table's newer half kept.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stack/runtimes/jitnames.h"
#include "stack/runtimes/jitnames-int.h"
#include "util/error.h"
#include "util/xmalloc.h"


void jit_warn(struct jit_table *t, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (t->warned)
		return;
	t->warned = 1;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	warn_msg("%s: %s", t->what ? t->what : "?", buf);
}

static size_t max_entries = JIT_MAX_ENTRIES;

void jit_names_set_max_entries(size_t n)
{
	max_entries = n >= 2 && n < JIT_MAX_ENTRIES ? n : JIT_MAX_ENTRIES;
}

static void by_start_put(struct jit_table *t, uint32_t i);

/*
 * Full: keep the newer half of the ranges and their names in a new pool,
 * and *name (if any: a range's not added yet, its new offset given
 * back).  Not a table with DEBUG_INFO lines (their files are in the
 * pool too): -1.  Returns 0 when trimmed.
 */
static int table_trim(struct jit_table *t, uint32_t *name)
{
	size_t keep = t->n / 2, from = t->n - keep, len = 0;
	char *pool;

	if (t->nlines || !keep)
		return -1;
	for (size_t i = from; i < t->n; i++)
		len += strlen(t->pool + t->e[i].name) + 1;
	len += name ? strlen(t->pool + *name) + 1 : 0;
	pool = xmalloc(len ? len : 1);
	len = 0;
	if (name) {
		len = strlen(t->pool + *name) + 1;
		memcpy(pool, t->pool + *name, len);
		*name = 0;
	}
	for (size_t i = from; i < t->n; i++) {
		size_t l = strlen(t->pool + t->e[i].name) + 1;

		memcpy(pool + len, t->pool + t->e[i].name, l);
		t->e[i - from] = t->e[i];
		t->e[i - from].name = (uint32_t)len;
		len += l;
	}
	free(t->pool);
	t->pool = pool;
	t->pool_len = t->pool_cap = len;
	t->n = keep;
	free(t->by_start);
	t->by_start = NULL;
	t->by_start_size = t->by_start_count = 0;
	for (size_t i = 0; i < t->n; i++)
		by_start_put(t, (uint32_t)i);
	t->dirty = 1;
	t->trimmed += from;
	return 0;
}

uint32_t jit_pool_add(struct jit_table *t, const char *s, size_t len)
{
	uint32_t off;

	if (len > JIT_NAME_MAX)
		len = JIT_NAME_MAX;
	if (t->pool_len + len + 1 > JIT_POOL_MAX && table_trim(t, NULL) < 0) {
		jit_warn(t, "more than %u MiB of names: the rest is not read", JIT_POOL_MAX >> 20);
		return JIT_NONE;
	}
	if (t->pool_len + len + 1 > t->pool_cap) {
		t->pool_cap = t->pool_cap ? t->pool_cap : 4096;
		while (t->pool_cap < t->pool_len + len + 1)
			t->pool_cap *= 2;
		t->pool = xrealloc(t->pool, t->pool_cap);
	}
	off = (uint32_t)t->pool_len;
	memcpy(t->pool + off, s, len);
	t->pool[off + len] = '\0';	/* the writers quote the rest */
	t->pool_len += len + 1;
	return off;
}

static size_t start_slot(uint64_t start, size_t size)
{
	return (size_t)((start * 0x9e3779b97f4a7c15ULL) >> 24) & (size - 1);
}

static void by_start_put(struct jit_table *t, uint32_t i)
{
	size_t j, mask;

	if ((t->by_start_count + 1) * 2 > t->by_start_size) {
		uint32_t *old = t->by_start;
		size_t old_size = t->by_start_size;

		t->by_start_size = old_size ? 2 * old_size : 1024;
		t->by_start = xmalloc(t->by_start_size * sizeof(*t->by_start));
		memset(t->by_start, 0xff, t->by_start_size * sizeof(*t->by_start));
		t->by_start_count = 0;
		for (size_t k = 0; k < old_size; k++)
			if (old[k] != JIT_NONE)
				by_start_put(t, old[k]);
		free(old);
	}
	mask = t->by_start_size - 1;
	for (j = start_slot(t->e[i].start, t->by_start_size); t->by_start[j] != JIT_NONE;
	     j = (j + 1) & mask)
		if (t->e[t->by_start[j]].start == t->e[i].start) {
			t->by_start[j] = i;
			return;
		}
	t->by_start[j] = i;
	t->by_start_count++;
}

const struct jit_entry *jit_table_at(const struct jit_table *t, uint64_t start)
{
	size_t mask = t->by_start_size - 1;

	if (!t->by_start_size)
		return NULL;
	for (size_t j = start_slot(start, t->by_start_size); t->by_start[j] != JIT_NONE;
	     j = (j + 1) & mask)
		if (t->e[t->by_start[j]].start == start)
			return &t->e[t->by_start[j]];
	return NULL;
}

int jit_table_add(struct jit_table *t, uint64_t start, uint64_t size, uint32_t name,
		  uint32_t dbg, uint32_t unwind)
{
	struct jit_entry *e;

	if (!size || start + size < start || name == JIT_NONE)
		return -1;
	if (t->n >= max_entries && table_trim(t, &name) < 0) {
		jit_warn(t, "more than %zu ranges: the rest is not read", max_entries);
		return -1;
	}
	if (jit_table_at(t, start))
		t->rewrites++;	/* the runtime wrote other code there */
	t->e = xgrowarray(t->e, &t->cap, t->n + 1, sizeof(*t->e));
	e = &t->e[t->n++];
	e->start = start;
	e->end = start + size;
	e->name = name;
	e->dbg = dbg;
	e->unwind = unwind;
	e->pad = 0;
	t->dirty = 1;
	by_start_put(t, (uint32_t)(t->n - 1));
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const struct jit_entry *sort_base;

static int cmp_start(const void *a, const void *b)
{
	const struct jit_entry *x = &sort_base[*(const uint32_t *)a];
	const struct jit_entry *y = &sort_base[*(const uint32_t *)b];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Max-heap of entry numbers: the later entry on top. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/*
 * The index, by a sweep over the ranges' bounds: each piece between two
 * bounds belongs to the last entry that covers it.
 */
static void build_index(struct jit_table *t)
{
	size_t n = t->n, np = 0, nh = 0, next = 0, cap = 0;
	uint64_t *pts = xmalloc((2 * n + 1) * sizeof(*pts));
	uint32_t *order = xmalloc((n + 1) * sizeof(*order));
	uint32_t *heap = xmalloc((n + 1) * sizeof(*heap));

	free(t->seg);
	t->seg = NULL;
	t->nseg = 0;
	for (size_t i = 0; i < n; i++) {
		pts[np++] = t->e[i].start;
		pts[np++] = t->e[i].end;
		order[i] = (uint32_t)i;
	}
	qsort(pts, np, sizeof(*pts), cmp_u64);
	sort_base = t->e;
	qsort(order, n, sizeof(*order), cmp_start);
	for (size_t i = 0; i + 1 < np; i++) {
		uint64_t p = pts[i], q = pts[i + 1];

		if (p == q)
			continue;
		while (next < n && t->e[order[next]].start <= p)
			heap_push(heap, &nh, order[next++]);
		while (nh && t->e[heap[0]].end <= p)
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		if (t->nseg && t->seg[t->nseg - 1].entry == heap[0] &&
		    t->seg[t->nseg - 1].end == p) {
			t->seg[t->nseg - 1].end = q;
			continue;
		}
		t->seg = xgrowarray(t->seg, &cap, t->nseg + 1, sizeof(*t->seg));
		t->seg[t->nseg].start = p;
		t->seg[t->nseg].end = q;
		t->seg[t->nseg].entry = heap[0];
		t->nseg++;
	}
	free(pts);
	free(order);
	free(heap);
	t->dirty = 0;
}

const struct jit_entry *jit_table_find(struct jit_table *t, uint64_t pc)
{
	size_t lo = 0, hi;

	if (t->dirty)
		build_index(t);
	hi = t->nseg;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->seg[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nseg && t->seg[lo].start <= pc)
		return &t->e[t->seg[lo].entry];
	return NULL;
}

void jit_table_free(struct jit_table *t)
{
	free(t->e);
	free(t->pool);
	free(t->seg);
	free(t->by_start);
	free(t->dbg);
	free(t->lines);
	free(t->uw);
	free(t->uw_data);
	memset(t, 0, sizeof(*t));
}

ssize_t jit_pread_fd(void *arg, void *buf, size_t n, uint64_t off)
{
	ssize_t r;

	do
		r = pread(*(int *)arg, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	return r;
}


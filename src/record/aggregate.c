/*
 * aggregate.c - the byte-weighted aggregates of aggregate.h: an array of
 * entries in insertion order and an open-addressing index over it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "record/aggregate.h"
#include "util/xmalloc.h"

static struct agg *entries;
static size_t nentries, entries_cap;
static uint32_t *index_;	/* entry index + 1, 0 = empty */
static size_t index_size;
static struct held_peak peaks[HELD_NFAMILIES];
static uint64_t event_ns;

static size_t hash(const struct sink_proc *p, enum event_kind kind, uint32_t stack)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)kind << 32 | stack) * 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 29));
}

/* The index again, of size (a power of 2, above twice the entries). */
static void reindex_at(size_t size)
{
	free(index_);
	index_size = size;
	index_ = xcalloc(index_size, sizeof(*index_));
	for (size_t i = 0; i < nentries; i++) {
		size_t j = hash(entries[i].proc, entries[i].kind, entries[i].stack) & (index_size - 1);

		while (index_[j])
			j = (j + 1) & (index_size - 1);
		index_[j] = (uint32_t)i + 1;
	}
}

static void reindex(void)
{
	reindex_at(index_size ? index_size * 2 : 1024);
}

/*
 * The entries found last, by their key's hash (an event looks two or
 * three stacks up: what its block held, then its counts; a loop's few
 * stacks each keep a line here): their indexes + 1, 0: none.
 */
#define MEMO_BITS 6
static uint32_t memo[1u << MEMO_BITS];

static size_t memo_slot(enum event_kind kind, uint32_t stack)
{
	return (size_t)((((uint64_t)stack << 5 | (uint64_t)kind) * 0x9e3779b97f4a7c15ull) >>
			(64 - MEMO_BITS));
}

static struct agg *remember(size_t i)
{
	memo[memo_slot(entries[i].kind, entries[i].stack)] = (uint32_t)i + 1;
	return &entries[i];
}

static struct agg *lookup(struct sink_proc *p, enum event_kind kind, uint32_t stack)
{
	size_t j;

	uint32_t m = memo[memo_slot(kind, stack)];

	if (m) {
		struct agg *a = &entries[m - 1];

		if (a->stack == stack && a->kind == kind && a->proc == p)
			return a;
	}
	if ((nentries + 1) * 2 > index_size)
		reindex();
	j = hash(p, kind, stack) & (index_size - 1);
	while (index_[j]) {
		struct agg *a = &entries[index_[j] - 1];

		if (a->proc == p && a->kind == kind && a->stack == stack)
			return remember(index_[j] - 1);
		j = (j + 1) & (index_size - 1);
	}
	entries = xgrowarray(entries, &entries_cap, nentries + 1, sizeof(*entries));
	index_[j] = (uint32_t)nentries + 1;
	struct agg *a = &entries[nentries++];

	memset(a, 0, sizeof(*a));
	a->proc = p;
	a->kind = kind;
	a->stack = stack;
	/* it held nothing at the last peak */
	a->peak_seq = peaks[held_family_of(kind)].seq;
	return remember(nentries - 1);
}

void aggregate_add(struct sink_proc *p, enum event_kind kind, uint32_t stack, int failed,
		   uint64_t acquired, uint64_t released)
{
	struct agg *a = lookup(p, kind, stack);

	a->calls++;
	if (failed)
		a->failed++;
	a->acquired += acquired;
	a->released += released;
}

void aggregate_add_calls(struct sink_proc *p, enum event_kind kind, uint32_t stack,
			 uint64_t calls, uint64_t acquired)
{
	struct agg *a = lookup(p, kind, stack);

	a->calls += calls;
	a->acquired += acquired;
}

struct agg *aggregate_entries(size_t *n)
{
	*n = nentries;
	return entries;
}

size_t aggregate_index(struct sink_proc *p, enum event_kind kind, uint32_t stack)
{
	return (size_t)(lookup(p, kind, stack) - entries);
}

void aggregate_mark(void)
{
	for (size_t i = 0; i < nentries; i++) {
		struct agg *a = &entries[i];

		a->mark_calls = a->calls;
		a->mark_failed = a->failed;
		a->mark_acquired = a->acquired;
		a->mark_released = a->released;
	}
}

void aggregate_set_time(uint64_t time_ns)
{
	event_ns = time_ns;
}

void aggregate_held(struct sink_proc *p, enum event_kind kind, uint32_t stack, int64_t delta,
		    int objects)
{
	struct held_peak *pk = &peaks[held_family_of(kind)];
	struct agg *a;

	if (!delta && !objects)
		return;
	a = lookup(p, kind, stack);
	a->held_objects += (uint64_t)(int64_t)objects;
	if (a->peak_seq != pk->seq) {
		/* its first change since the peak: what it held then */
		a->peak_held = a->held;
		a->peak_seq = pk->seq;
	}
	a->held += (uint64_t)delta;
	pk->now += (uint64_t)delta;
	if (pk->now > pk->bytes) {
		/* every entry holds its peak value now: none saved yet */
		pk->bytes = pk->now;
		pk->time_ns = event_ns;
		pk->seq++;
	}
}

const struct held_peak *aggregate_peak(enum held_family f)
{
	return &peaks[f];
}

uint64_t aggregate_held_at_peak(const struct agg *a)
{
	const struct held_peak *pk = &peaks[held_family_of(a->kind)];

	return a->peak_seq == pk->seq ? a->peak_held : a->held;
}

void aggregate_forget(const struct sink_proc *p)
{
	size_t n = 0, size = 1024;

	for (size_t i = 0; i < nentries; i++)
		if (entries[i].proc != p)
			entries[n++] = entries[i];
	if (n == nentries)
		return;
	nentries = n;
	memset(memo, 0, sizeof(memo));
	while ((nentries + 1) * 2 > size)
		size *= 2;
	if (entries_cap > 2 * nentries + 1024) {
		entries_cap = nentries + 1024;
		entries = xrealloc(entries, entries_cap * sizeof(*entries));
	}
	reindex_at(size);
}

void aggregate_clear(void)
{
	nentries = 0;
	memset(memo, 0, sizeof(memo));
	memset(peaks, 0, sizeof(peaks));
	if (index_)
		memset(index_, 0, index_size * sizeof(*index_));
}

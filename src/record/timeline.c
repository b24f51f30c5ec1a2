/*
 * timeline.c - the intervals of an -i run (timeline.h): per interval,
 * the aggregates that changed, the /proc figures, the captured total.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "linux/procfs.h"
#include "record/aggregate.h"
#include "record/sink-proc.h"
#include "record/timeline.h"
#include "report/profile.h"
#include "util/xmalloc.h"

struct tl_change {
	uint32_t agg;		/* aggregate index */
	uint64_t calls, acquired, released, held;
};

struct tl_interval {
	uint64_t end_ns;
	int64_t captured;
	size_t nvm;
	struct prof_vm_point *vm;
	size_t nchanges;
	struct tl_change *changes;
};

static struct tl_interval *intervals;
static size_t nintervals, intervals_cap;
static int held_known;
/* per aggregate index: held at the end of the last interval */
static uint64_t *last_held;
static size_t nheld, held_cap;
static size_t store_bytes;
static size_t max_intervals;	/* 0: no cap */

/* last_held sized for n aggregates, the new ones 0. */
static void held_grow(size_t n)
{
	size_t old = nheld;

	if (n <= nheld)
		return;
	last_held = xgrowarray(last_held, &held_cap, n, sizeof(*last_held));
	memset(last_held + old, 0, (n - old) * sizeof(*last_held));
	nheld = n;
}

static void vm_points(struct tl_interval *t)
{
	size_t n = 0;

	for (struct sink_proc *p = sink_procs(); p; p = p->next)
		n++;
	t->vm = xcalloc(n ? n : 1, sizeof(*t->vm));
	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		struct vmstat vs = { 0 };

		if (p->exited || p->detached || procfs_read_vmstat(p->pid, &vs) < 0 || !vs.have)
			continue;
		t->vm[t->nvm++] = (struct prof_vm_point){ p->pid, vs.vm_rss, vs.vm_size,
							  vs.vm_data };
	}
	if (t->nvm < n)
		t->vm = xrealloc(t->vm, (t->nvm ? t->nvm : 1) * sizeof(*t->vm));
	store_bytes += t->nvm * sizeof(*t->vm);
}

void timeline_set_max(size_t max)
{
	max_intervals = max;
}

static void interval_free(struct tl_interval *t)
{
	store_bytes -= sizeof(*t) + t->nchanges * sizeof(*t->changes) + t->nvm * sizeof(*t->vm);
	free(t->vm);
	free(t->changes);
}

/*
 * Drop the oldest interval: what its changes say an aggregate held at
 * its end, the next interval gets as a change (no calls, no bytes) when
 * it has none of that aggregate, so that what each stack holds stays
 * known from the first interval kept.  Both lists are in index order.
 */
static void drop_oldest(void)
{
	struct tl_interval *old = &intervals[0], *next = &intervals[1];
	struct tl_change *merged;
	size_t n = 0, i = 0, j = 0;

	merged = xcalloc(old->nchanges + next->nchanges + 1, sizeof(*merged));
	while (i < old->nchanges || j < next->nchanges) {
		if (j < next->nchanges &&
		    (i == old->nchanges || next->changes[j].agg <= old->changes[i].agg)) {
			if (i < old->nchanges && old->changes[i].agg == next->changes[j].agg)
				i++;
			merged[n++] = next->changes[j++];
		} else if (old->changes[i].held) {
			merged[n] = old->changes[i++];
			merged[n].calls = merged[n].acquired = merged[n].released = 0;
			n++;
		} else {
			i++;
		}
	}
	store_bytes += (n - next->nchanges) * sizeof(*merged);
	free(next->changes);
	next->changes = merged;
	next->nchanges = n;
	interval_free(old);
	memmove(intervals, intervals + 1, --nintervals * sizeof(*intervals));
}

void timeline_forget(const struct sink_proc *p)
{
	size_t nagg, *newidx, k = 0;
	const struct agg *aggs = aggregate_entries(&nagg);

	/* the index each aggregate will have, (size_t)-1: p's */
	newidx = xcalloc(nagg ? nagg : 1, sizeof(*newidx));
	for (size_t i = 0; i < nagg; i++)
		newidx[i] = aggs[i].proc == p ? (size_t)-1 : k++;
	for (size_t t = 0; t < nintervals; t++) {
		struct tl_interval *iv = &intervals[t];
		size_t n = 0;

		for (size_t j = 0; j < iv->nchanges; j++) {
			struct tl_change c = iv->changes[j];

			if (c.agg >= nagg || newidx[c.agg] == (size_t)-1)
				continue;
			c.agg = (uint32_t)newidx[c.agg];
			iv->changes[n++] = c;
		}
		store_bytes -= (iv->nchanges - n) * sizeof(*iv->changes);
		iv->nchanges = n;
	}
	/* last_held moves down with its aggregates (newidx[i] <= i) */
	k = 0;
	for (size_t i = 0; i < nheld && i < nagg; i++)
		if (newidx[i] != (size_t)-1)
			last_held[k++] = last_held[i];
	nheld = k;
	free(newidx);
}

static void forget_proc(struct sink_proc *p)
{
	timeline_forget(p);
}

const struct sink_proc_store timeline_store = { .forget = forget_proc };

void timeline_interval_end(uint64_t end_ns, int held)
{
	struct tl_interval *t;
	struct agg *aggs;
	size_t nagg, cap = 0;

	held_known = held;
	aggs = aggregate_entries(&nagg);
	held_grow(nagg);
	intervals = xgrowarray(intervals, &intervals_cap, nintervals + 1, sizeof(*intervals));
	t = &intervals[nintervals++];
	memset(t, 0, sizeof(*t));
	t->end_ns = end_ns;
	for (size_t i = 0; i < nagg; i++) {
		const struct agg *a = &aggs[i];
		struct tl_change c = {
			.agg = (uint32_t)i,
			.calls = a->calls - a->mark_calls,
			.acquired = a->acquired - a->mark_acquired,
			.released = a->released - a->mark_released,
			.held = held ? a->held : 0,
		};

		t->captured += held ? (int64_t)a->held
				    : (int64_t)(a->acquired - a->released);
		if (!c.calls && !c.acquired && !c.released && c.held == last_held[i])
			continue;
		t->changes = xgrowarray(t->changes, &cap, t->nchanges + 1, sizeof(*t->changes));
		t->changes[t->nchanges++] = c;
		last_held[i] = c.held;
	}
	/* no slack kept: the store is the changes */
	if (t->nchanges && cap > t->nchanges)
		t->changes = xrealloc(t->changes, t->nchanges * sizeof(*t->changes));
	store_bytes += sizeof(*t) + t->nchanges * sizeof(*t->changes);
	vm_points(t);
	while (max_intervals && nintervals > max_intervals)
		drop_oldest();
}

size_t timeline_count(void)
{
	return nintervals;
}

void timeline_to_profile(struct profile *prof, const size_t *agg_sample, size_t nagg)
{
	uint64_t *agg_held, *sample_held;

	if (!nintervals)
		return;
	/* aggregates of one sample (the same frames) add up */
	agg_held = xcalloc(nagg ? nagg : 1, sizeof(*agg_held));
	sample_held = xcalloc(prof->nsamples ? prof->nsamples : 1, sizeof(*sample_held));
	prof->intervals = xcalloc(nintervals, sizeof(*prof->intervals));
	prof->nintervals = nintervals;
	prof->intervals_held = held_known;
	for (size_t i = 0; i < nintervals; i++) {
		const struct tl_interval *t = &intervals[i];
		struct prof_interval *pi = &prof->intervals[i];

		pi->end_nanos = (int64_t)t->end_ns;
		pi->captured = t->captured;
		pi->nvm = t->nvm;
		pi->vm = xcalloc(t->nvm ? t->nvm : 1, sizeof(*pi->vm));
		memcpy(pi->vm, t->vm, t->nvm * sizeof(*pi->vm));
		pi->changes = xcalloc(t->nchanges ? t->nchanges : 1, sizeof(*pi->changes));
		for (size_t j = 0; j < t->nchanges; j++) {
			const struct tl_change *c = &t->changes[j];
			struct prof_change *pc;

			if (c->agg >= nagg || agg_sample[c->agg] >= prof->nsamples)
				continue;
			sample_held[agg_sample[c->agg]] += c->held - agg_held[c->agg];
			agg_held[c->agg] = c->held;
			pc = &pi->changes[pi->nchanges++];
			pc->sample = agg_sample[c->agg];
			pc->calls = c->calls;
			pc->acquired = c->acquired;
			pc->released = c->released;
		}
		for (size_t j = 0; j < pi->nchanges; j++)
			pi->changes[j].held = sample_held[pi->changes[j].sample];
		profile_interval_merge(pi);
	}
	free(agg_held);
	free(sample_held);
}

size_t timeline_memory(void)
{
	return store_bytes + held_cap * sizeof(uint64_t);
}

void timeline_release(void)
{
	for (size_t i = 0; i < nintervals; i++) {
		free(intervals[i].vm);
		free(intervals[i].changes);
	}
	free(intervals);
	free(last_held);
	intervals = NULL;
	last_held = NULL;
	nintervals = intervals_cap = nheld = held_cap = store_bytes = 0;
}

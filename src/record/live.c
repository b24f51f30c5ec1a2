/*
 * live.c - the live-allocation tables of live.h: linear probing on the
 * block address, deletion by backward shift (no tombstones), so that a
 * malloc/free-heavy program never degrades the table.  The blocks set
 * aside (live.h: an address handed out again before the call that freed
 * it was reported) are a short array beside it, searched whole: it is
 * empty but for the calls still in flight in the target.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "record/aggregate.h"
#include "record/event.h"
#include "record/live.h"
#include "record/sink-proc.h"
#include "util/xmalloc.h"

/*
 * A slot: 24 bytes.  At most 3/4 and at least 3/8 full (the table
 * doubles), so a live block costs the tracer 32 to 64 bytes.
 */
struct live_slot {
	uint64_t addr;		/* 0 = empty */
	uint64_t size : 48;	/* bytes asked for (< 256 TiB) */
	uint64_t kind : 15;
	uint64_t inherited : 1;	/* copied from the parent at fork */
	uint32_t stack;
	uint32_t time_ms;	/* since start: 49 days */
};

/*
 * A block set aside: next, the order of the event that added a block at
 * its address.  At most GONE_MAX per process, the smallest next
 * forgotten first (a call whose report was lost never takes its own).
 */
struct live_gone {
	struct live_slot s;
	uint64_t next;
};

#define GONE_MAX 256

struct live_table {
	struct live_slot *slots;
	size_t size;		/* power of two, or 0 */
	size_t used;
	uint64_t bytes;
	size_t inherited_used;	/* of used, copied from the parent */
	uint64_t inherited_bytes;
	struct live_gone *gone;	/* GONE_MAX, once one is set aside */
	size_t ngone;
};

static size_t total_memory;

static size_t slot_of(uint64_t addr, size_t size)
{
	uint64_t h = (addr >> 4) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (size - 1);
}

static struct live_table *table(struct sink_proc *p)
{
	if (!p->live)
		p->live = xcalloc(1, sizeof(*p->live));
	return p->live;
}

static struct live_block block_of(const struct live_slot *s)
{
	return (struct live_block){ s->addr, s->size, (uint64_t)s->time_ms * 1000000u, s->stack,
				    (uint16_t)s->kind, (uint16_t)s->inherited };
}

static void grow(struct live_table *t)
{
	struct live_slot *old = t->slots;
	size_t old_size = t->size;

	t->size = old_size ? old_size * 2 : 1024;
	t->slots = xcalloc(t->size, sizeof(*t->slots));
	total_memory += (t->size - old_size) * sizeof(*t->slots);
	for (size_t i = 0; i < old_size; i++) {
		if (!old[i].addr)
			continue;
		size_t j = slot_of(old[i].addr, t->size);

		while (t->slots[j].addr)
			j = (j + 1) & (t->size - 1);
		t->slots[j] = old[i];
	}
	free(old);
}

/* What the stack of an own block holds changes by sign * its size. */
static void held(struct sink_proc *p, const struct live_slot *s, int sign)
{
	if (!s->inherited && s->kind < EV_NKINDS)
		aggregate_held(p, (enum event_kind)s->kind, s->stack, sign * (int64_t)s->size,
			       sign);
}

/* Take slot s of p out of t's counts. */
static void forget(struct sink_proc *p, struct live_table *t, const struct live_slot *s)
{
	held(p, s, -1);
	t->bytes -= s->size;
	t->used--;
	if (s->inherited) {
		t->inherited_bytes -= s->size;
		t->inherited_used--;
	}
}

/* Set slot s aside: an event of order next added a block at its address. */
static void set_aside(struct live_table *t, const struct live_slot *s, uint64_t next)
{
	size_t oldest = 0;

	if (!t->gone) {
		t->gone = xcalloc(GONE_MAX, sizeof(*t->gone));
		total_memory += GONE_MAX * sizeof(*t->gone);
	}
	if (t->ngone == GONE_MAX) {
		for (size_t i = 1; i < t->ngone; i++)
			if (t->gone[i].next < t->gone[oldest].next)
				oldest = i;
		t->gone[oldest] = t->gone[--t->ngone];
	}
	t->gone[t->ngone].s = *s;
	t->gone[t->ngone++].next = next;
}

void live_add(struct sink_proc *p, uint64_t addr, uint64_t size, uint32_t stack,
	      uint64_t time_ns, uint32_t kind, uint64_t order)
{
	struct live_table *t = table(p);
	size_t j;

	if (!addr)
		return;
	if ((t->used + 1) * 4 > t->size * 3)
		grow(t);
	j = slot_of(addr, t->size);
	while (t->slots[j].addr && t->slots[j].addr != addr)
		j = (j + 1) & (t->size - 1);
	if (t->slots[j].addr) {
		if (order)
			set_aside(t, &t->slots[j], order);
		forget(p, t, &t->slots[j]);
	}
	t->used++;
	t->slots[j] = (struct live_slot){ addr, size, kind, 0, stack, (uint32_t)(time_ns / 1000000u) };
	t->bytes += size;
	held(p, &t->slots[j], 1);
}

int live_remove(struct sink_proc *p, uint64_t addr, struct live_block *removed)
{
	struct live_table *t = p->live;
	size_t j, k;

	if (!t || !t->size || !addr)
		return -1;
	j = slot_of(addr, t->size);
	while (t->slots[j].addr != addr) {
		if (!t->slots[j].addr)
			return -1;
		j = (j + 1) & (t->size - 1);
	}
	if (removed)
		*removed = block_of(&t->slots[j]);
	forget(p, t, &t->slots[j]);
	/* backward-shift deletion keeps every probe chain unbroken */
	for (k = (j + 1) & (t->size - 1); t->slots[k].addr; k = (k + 1) & (t->size - 1)) {
		size_t home = slot_of(t->slots[k].addr, t->size);

		if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
			t->slots[j] = t->slots[k];
			j = k;
		}
	}
	t->slots[j].addr = 0;
	return 0;
}

int live_release(struct sink_proc *p, uint64_t addr, uint64_t entered,
		 struct live_block *removed)
{
	struct live_table *t = p->live;
	size_t best = SIZE_MAX;

	for (size_t i = 0; t && entered && i < t->ngone; i++)
		if (t->gone[i].s.addr == addr && t->gone[i].next >= entered &&
		    !((t->gone[i].next ^ entered) & EV_ORDER_SEQ) &&
		    (best == SIZE_MAX || t->gone[i].next < t->gone[best].next))
			best = i;
	if (best == SIZE_MAX)
		return live_remove(p, addr, removed);
	if (removed)
		*removed = block_of(&t->gone[best].s);
	t->gone[best] = t->gone[--t->ngone];
	return 0;
}

int live_find(const struct sink_proc *p, uint64_t addr, struct live_block *found)
{
	const struct live_table *t = p->live;
	size_t j;

	if (!t || !t->size || !addr)
		return -1;
	for (j = slot_of(addr, t->size); t->slots[j].addr; j = (j + 1) & (t->size - 1))
		if (t->slots[j].addr == addr) {
			*found = block_of(&t->slots[j]);
			return 0;
		}
	return -1;
}

void live_copy(struct sink_proc *to, const struct sink_proc *from)
{
	const struct live_table *f = from->live;

	live_clear(to);
	if (!f || !f->used)
		return;
	struct live_table *t = table(to);

	t->size = f->size;
	t->used = f->used;
	t->bytes = f->bytes;
	t->slots = xmalloc(t->size * sizeof(*t->slots));
	memcpy(t->slots, f->slots, t->size * sizeof(*t->slots));
	for (size_t i = 0; i < t->size; i++)
		t->slots[i].inherited = 1;
	t->inherited_used = t->used;
	t->inherited_bytes = t->bytes;
	total_memory += t->size * sizeof(*t->slots);
}

void live_clear(struct sink_proc *p)
{
	if (!p->live)
		return;
	for (size_t i = 0; i < p->live->size; i++)
		if (p->live->slots[i].addr)
			held(p, &p->live->slots[i], -1);
	total_memory -= p->live->size * sizeof(*p->live->slots);
	if (p->live->gone)
		total_memory -= GONE_MAX * sizeof(*p->live->gone);
	free(p->live->slots);
	free(p->live->gone);
	memset(p->live, 0, sizeof(*p->live));
}

void live_forget(struct sink_proc *p)
{
	live_clear(p);
	free(p->live);
	p->live = NULL;
}

void live_foreach(const struct sink_proc *p, void (*fn)(const struct live_block *, void *),
		  void *arg)
{
	const struct live_table *t = p->live;

	for (size_t i = 0; t && i < t->size; i++)
		if (t->slots[i].addr) {
			struct live_block b = block_of(&t->slots[i]);

			fn(&b, arg);
		}
}

size_t live_count(const struct sink_proc *p)
{
	return p->live ? p->live->used : 0;
}

uint64_t live_bytes(const struct sink_proc *p)
{
	return p->live ? p->live->bytes : 0;
}

size_t live_inherited_count(const struct sink_proc *p)
{
	return p->live ? p->live->inherited_used : 0;
}

uint64_t live_inherited_bytes(const struct sink_proc *p)
{
	return p->live ? p->live->inherited_bytes : 0;
}

size_t live_memory(void)
{
	return total_memory;
}

void live_release_all(void)
{
	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		live_clear(p);
		free(p->live);
		p->live = NULL;
	}
	total_memory = 0;
}

const struct sink_proc_store live_store = {
	.fork = live_copy,
	.exec = live_clear,
	.forget = live_forget,
	.release = live_release_all,
};

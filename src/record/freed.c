/*
 * freed.c - the sets of freed addresses of freed.h: linear probing on
 * the address, deletion by backward shift (no tombstones), as live.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "record/freed.h"
#include "record/sink-proc.h"
#include "util/xmalloc.h"

struct freed_set {
	uint64_t *slots;	/* addresses, 0 = empty */
	size_t size;		/* power of two, or 0 */
	size_t used;
	uint64_t forgotten;
};

static size_t total_memory;

static size_t slot_of(uint64_t addr, size_t size)
{
	uint64_t h = (addr >> 4) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (size - 1);
}

/* The slot of addr, or of the empty slot where it would go. */
static size_t find(const struct freed_set *s, uint64_t addr)
{
	size_t i = slot_of(addr, s->size);

	while (s->slots[i] && s->slots[i] != addr)
		i = (i + 1) & (s->size - 1);
	return i;
}

static void grow(struct freed_set *s)
{
	size_t old = s->size, size = old ? old * 2 : 64;
	uint64_t *slots = xcalloc(size, sizeof(*slots));
	uint64_t *prev = s->slots;

	s->slots = slots;
	s->size = size;
	for (size_t i = 0; i < old; i++)
		if (prev[i])
			slots[find(s, prev[i])] = prev[i];
	free(prev);
	total_memory += (size - old) * sizeof(*slots);
}

static void clear(struct freed_set *s)
{
	free(s->slots);
	total_memory -= s->size * sizeof(*s->slots);
	s->slots = NULL;
	s->size = s->used = 0;
}

void freed_add(struct sink_proc *p, uint64_t addr)
{
	struct freed_set *s = p->freed;
	size_t i;

	if (!addr)
		return;
	if (!s)
		s = p->freed = xcalloc(1, sizeof(*s));
	if (s->used >= FREED_MAX) {
		/* the bound: start again */
		s->forgotten += s->used;
		memset(s->slots, 0, s->size * sizeof(*s->slots));
		s->used = 0;
	}
	if ((s->used + 1) * 4 > s->size * 3)
		grow(s);
	i = find(s, addr);
	if (!s->slots[i]) {
		s->slots[i] = addr;
		s->used++;
	}
}

void freed_drop(struct sink_proc *p, uint64_t addr)
{
	struct freed_set *s = p->freed;
	size_t i, j, mask;

	if (!s || !s->used || !addr)
		return;
	mask = s->size - 1;
	i = find(s, addr);
	if (!s->slots[i])
		return;
	/* backward shift: move up each later entry whose home is at or before the hole */
	for (j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
		size_t home = slot_of(s->slots[j], s->size);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->slots[i] = s->slots[j];
			i = j;
		}
	}
	s->slots[i] = 0;
	s->used--;
}

int freed_has(const struct sink_proc *p, uint64_t addr)
{
	const struct freed_set *s = p->freed;

	return s && s->used && addr && s->slots[find(s, addr)] == addr;
}

uint64_t freed_forgotten(const struct sink_proc *p)
{
	return p->freed ? p->freed->forgotten : 0;
}

size_t freed_memory(void)
{
	return total_memory;
}

/* A fork child's copy: its allocator's caches are its parent's. */
static void freed_copy(struct sink_proc *to, const struct sink_proc *from)
{
	const struct freed_set *s = from->freed;

	if (!s || !s->used)
		return;
	for (size_t i = 0; i < s->size; i++)
		if (s->slots[i])
			freed_add(to, s->slots[i]);
}

static void freed_clear(struct sink_proc *p)
{
	if (p->freed)
		clear(p->freed);
}

static void freed_forget(struct sink_proc *p)
{
	freed_clear(p);
	free(p->freed);
	p->freed = NULL;
}

static void freed_release_all(void)
{
	for (struct sink_proc *p = sink_procs(); p; p = p->next)
		freed_forget(p);
	total_memory = 0;
}

const struct sink_proc_store freed_store = {
	.fork = freed_copy,
	.exec = freed_clear,
	.forget = freed_forget,
	.release = freed_release_all,
};

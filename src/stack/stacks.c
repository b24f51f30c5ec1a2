/*
 * stacks.c - intern stacks into ids.
 *
 * Three structures:
 *   chunks   frame storage, 1 MiB blocks filled in order; a stack never
 *            straddles two blocks, so its frames never move
 *   stacks   per id: pointer to the frames, depth, hash
 *   index    open-addressing hash of ids (linear probing, load <= 1/2),
 *            keyed by the frames' hash, compared in full on a hit
 *
 * The hash is FNV-1a-like over 64-bit words, folded: cheap for the
 * 10-60 frames of a typical stack and good enough for linear probing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "stack/runtimes/jitnames.h"
#include "stack/modules.h"
#include "stack/stacks.h"
#include "stack/symbols/symbolize.h"
#include "util/xmalloc.h"

/* Frame blocks grow from 64 KiB to 1 MiB. */
#define CHUNK_FRAMES_MIN 4096
#define CHUNK_FRAMES_MAX 65536

struct stack_entry {
	const struct stack_frame *frames;
	uint32_t depth;
	uint32_t hash;
};

struct stack_chunk {
	struct stack_chunk *next;
	size_t used, cap;		/* frames */
	struct stack_frame frames[];
};

/*
 * The ids of recent raw pc chains (stack_table_intern_pcs()) of a module
 * list at a version, chains of frames that all resolved: the same pcs in
 * the same ranges are the same frames, so a hit needs no resolve and no
 * hash of frames.  Direct-mapped; MEMTAP_STACK_CACHE=0 turns it off
 * (tests compare).
 */
#define PCS_CACHE 1024
#define PCS_CACHE_DEPTH 32

struct pcs_entry {
	uint64_t serial;		/* the list's; 0 = empty */
	unsigned version;
	uint32_t depth, id;
	uint64_t pcs[PCS_CACHE_DEPTH];
};

struct stack_table {
	size_t max_bytes;
	struct pcs_entry *pcs_cache;	/* PCS_CACHE, allocated at first use */
	int pcs_cache_off;
	size_t bytes;			/* allocated so far */
	struct stack_chunk *chunks;	/* newest first */
	struct stack_entry *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *index;		/* ids; 0 (STACK_ID_LOST) = empty slot */
	size_t index_size;
	uint64_t lost;
	uint32_t max_stacks;		/* 0: no cap */
	uint32_t other;			/* id of [other], 0 until the first fold */
	uint64_t folded;
};

static uint32_t frames_hash(const struct stack_frame *f, int depth)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)depth;

	for (int i = 0; i < depth; i++) {
		h ^= f[i].addr;
		h *= 0x100000001b3ULL;
		h ^= h >> 32;
		h ^= f[i].module;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 29;
	return (uint32_t)h ^ (uint32_t)(h >> 32);
}

/* Account for n more bytes; 0 if within the limit. */
static int charge(struct stack_table *t, size_t n)
{
	if (t->max_bytes && t->bytes + n > t->max_bytes)
		return -1;
	t->bytes += n;
	return 0;
}

struct stack_table *stack_table_new(size_t max_bytes)
{
	struct stack_table *t = xcalloc(1, sizeof(*t));

	t->max_bytes = max_bytes;
	t->index_size = 1024;
	t->index = xcalloc(t->index_size, sizeof(*t->index));
	t->stacks_cap = 1024;
	t->stacks = xcalloc(t->stacks_cap, sizeof(*t->stacks));
	t->bytes = sizeof(*t) + t->index_size * sizeof(*t->index) +
		   t->stacks_cap * sizeof(*t->stacks);
	/* id 0: the empty stack */
	t->nstacks = 1;
	return t;
}

void stack_table_set_max_stacks(struct stack_table *t, uint32_t max)
{
	t->max_stacks = max;
}

void stack_table_free(struct stack_table *t)
{
	struct stack_chunk *c, *next;

	if (!t)
		return;
	for (c = t->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(t->stacks);
	free(t->index);
	free(t->pcs_cache);
	free(t);
}

static int frames_equal(const struct stack_entry *e, const struct stack_frame *f,
			int depth, uint32_t hash)
{
	if (e->hash != hash || e->depth != (uint32_t)depth)
		return 0;
	for (int i = 0; i < depth; i++)
		if (e->frames[i].addr != f[i].addr || e->frames[i].module != f[i].module)
			return 0;
	return 1;
}

static int index_grow(struct stack_table *t)
{
	size_t size = t->index_size * 2, mask = size - 1;
	uint32_t *index;

	if (charge(t, size * sizeof(*index)) < 0)
		return -1;
	index = xcalloc(size, sizeof(*index));
	for (size_t id = 1; id < t->nstacks; id++) {
		size_t j = t->stacks[id].hash & mask;

		while (index[j])
			j = (j + 1) & mask;
		index[j] = (uint32_t)id;
	}
	t->bytes -= t->index_size * sizeof(*index);
	free(t->index);
	t->index = index;
	t->index_size = size;
	return 0;
}

/* Room for depth frames that will never move; NULL when over the limit. */
static struct stack_frame *frames_alloc(struct stack_table *t, int depth)
{
	struct stack_chunk *c = t->chunks;

	if (!c || c->cap - c->used < (size_t)depth) {
		size_t cap = c ? 2 * c->cap : CHUNK_FRAMES_MIN;

		if (cap > CHUNK_FRAMES_MAX)
			cap = CHUNK_FRAMES_MAX;
		if (cap < (size_t)depth)
			cap = (size_t)depth;
		size_t n = sizeof(*c) + cap * sizeof(struct stack_frame);

		/* Near the limit, a chunk just big enough. */
		if (t->max_bytes && t->bytes + n > t->max_bytes) {
			cap = (size_t)depth;
			n = sizeof(*c) + cap * sizeof(struct stack_frame);
		}
		if (charge(t, n) < 0)
			return NULL;
		c = xmalloc(n);
		c->used = 0;
		c->cap = cap;
		c->next = t->chunks;
		t->chunks = c;
	}
	c->used += (size_t)depth;
	return &c->frames[c->used - (size_t)depth];
}

/*
 * Store frames[0..depth) of hash as a new stack, its index slot j
 * (empty) found for the current index.  Returns its id, STACK_ID_LOST
 * over the memory limit.
 */
static uint32_t stack_add(struct stack_table *t, const struct stack_frame *frames, int depth,
			  uint32_t hash, size_t j)
{
	struct stack_frame *copy;
	size_t mask;

	if (t->nstacks >= UINT32_MAX - 1)
		goto lost;
	/* make room everywhere first, then commit */
	if ((t->nstacks + 1) * 2 > t->index_size) {
		if (index_grow(t) < 0)
			goto lost;
		mask = t->index_size - 1;
		for (j = hash & mask; t->index[j]; j = (j + 1) & mask)
			;
	}
	if (t->nstacks == t->stacks_cap) {
		size_t add = t->stacks_cap * sizeof(*t->stacks);

		if (charge(t, add) < 0)
			goto lost;
		t->stacks = xrealloc(t->stacks, 2 * add);
		t->stacks_cap *= 2;
	}
	copy = frames_alloc(t, depth);
	if (!copy)
		goto lost;
	for (int i = 0; i < depth; i++) {
		copy[i].addr = frames[i].addr;
		copy[i].module = frames[i].module;
		copy[i].reserved = 0;
	}
	for (int i = 0; i < depth; i++)
		if (copy[i].module != MODULE_NONE && !jit_is_module(copy[i].module) &&
		    (i == 0 || copy[i].module != copy[i - 1].module))
			symbolize_prefetch(copy[i].module);
	t->stacks[t->nstacks].frames = copy;
	t->stacks[t->nstacks].depth = (uint32_t)depth;
	t->stacks[t->nstacks].hash = hash;
	t->index[j] = (uint32_t)t->nstacks;
	return (uint32_t)t->nstacks++;
lost:
	t->lost++;
	return STACK_ID_LOST;
}

/* The slot of frames in the index: its id, or 0 and *slot the empty one. */
static uint32_t stack_find(const struct stack_table *t, const struct stack_frame *frames,
			   int depth, uint32_t hash, size_t *slot)
{
	size_t mask = t->index_size - 1, j;

	for (j = hash & mask; t->index[j]; j = (j + 1) & mask)
		if (frames_equal(&t->stacks[t->index[j]], frames, depth, hash))
			return t->index[j];
	*slot = j;
	return 0;
}

/* The id of [other], stored at the first fold; STACK_ID_LOST over the memory limit. */
static uint32_t stack_other(struct stack_table *t)
{
	static const struct stack_frame other = { STACK_FRAME_OTHER_ADDR, MODULE_NONE, 0 };
	uint32_t hash = frames_hash(&other, 1), id;
	size_t j;

	if (t->other)
		return t->other;
	id = stack_find(t, &other, 1, hash, &j);
	if (!id)
		id = stack_add(t, &other, 1, hash, j);
	t->other = id;
	return id;
}

uint32_t stack_table_intern(struct stack_table *t, const struct stack_frame *frames,
			    int depth)
{
	uint32_t hash, id;
	size_t j;

	if (depth <= 0)
		return STACK_ID_LOST;
	if (depth > STACK_MAX_DEPTH)
		depth = STACK_MAX_DEPTH;
	hash = frames_hash(frames, depth);
	id = stack_find(t, frames, depth, hash, &j);
	if (id)
		return id;
	/* the cap: ids 0 and [other] are not stacks of the target */
	if (stack_table_full(t)) {
		t->folded++;
		return stack_other(t);
	}
	return stack_add(t, frames, depth, hash, j);
}

/* The cache entry of pcs of pm, NULL when such a chain is not cached. */
static struct pcs_entry *pcs_slot(struct stack_table *t, const struct proc_modules *pm,
				  const uint64_t *pcs, int depth)
{
	uint64_t h = pm->serial * 0x9e3779b97f4a7c15ULL ^ (uint64_t)depth;

	if (t->pcs_cache_off || depth > PCS_CACHE_DEPTH ||
	    pm->generation != pm->read_generation)	/* a re-read is due */
		return NULL;
	if (!t->pcs_cache) {
		const char *env = getenv("MEMTAP_STACK_CACHE");

		if (env && strcmp(env, "0") == 0) {
			t->pcs_cache_off = 1;
			return NULL;
		}
		t->pcs_cache = xcalloc(PCS_CACHE, sizeof(*t->pcs_cache));
	}
	for (int i = 0; i < depth; i++) {
		h ^= pcs[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return &t->pcs_cache[h & (PCS_CACHE - 1)];
}

uint32_t stack_table_intern_pcs(struct stack_table *t, struct proc_modules *pm,
				const uint64_t *pcs, int depth)
{
	return stack_table_intern_pcs_stable(t, pm, pcs, depth, NULL);
}

uint32_t stack_table_intern_pcs_stable(struct stack_table *t, struct proc_modules *pm,
				       const uint64_t *pcs, int depth, int *stable)
{
	struct stack_frame frames[256];
	struct stack_frame *f = frames;
	struct pcs_entry *e = NULL;
	int resolved = 1;
	unsigned version = 0;
	uint32_t id;

	if (stable)
		*stable = 0;
	if (depth <= 0)
		return STACK_ID_LOST;
	if (depth > STACK_MAX_DEPTH)
		depth = STACK_MAX_DEPTH;
	if (pm && (e = pcs_slot(t, pm, pcs, depth)) && e->serial == pm->serial &&
	    e->version == modules_version(pm) && e->depth == (uint32_t)depth &&
	    memcmp(e->pcs, pcs, (size_t)depth * sizeof(*pcs)) == 0) {
		if (stable)
			*stable = 1;
		return e->id;
	}
	if (pm)
		version = modules_version(pm);
	if ((size_t)depth > sizeof(frames) / sizeof(frames[0]))
		f = xmalloc((size_t)depth * sizeof(*f));
	for (int i = 0; i < depth; i++) {
		uint64_t pc = i ? pcs[i] - 1 : pcs[i];

		f[i].reserved = 0;
		if (i && pcs[i] == STACK_PC_CUT) {
			f[i].module = MODULE_NONE;
			f[i].addr = STACK_FRAME_CUT_ADDR;
		} else if (!pm || modules_resolve(pm, pc, &f[i].module, &f[i].addr) < 0) {
			/* run-time code: named by the process's perf map or jitdump */
			f[i].module = pm ? jit_names_module(pm->pid) : MODULE_NONE;
			f[i].addr = pc;
			if (f[i].module != MODULE_NONE)
				jit_names_note(f[i].module, pc);
			resolved = 0;	/* a later re-read may place it */
		}
	}
	id = stack_table_intern(t, f, depth);
	if (f != frames)
		free(f);
	/* only what a lookup gives again, with the ranges as they are now */
	resolved = resolved && pm && id != STACK_ID_LOST && id != t->other &&
		   modules_version(pm) == version &&
		   pm->generation == pm->read_generation;
	if (stable)
		*stable = resolved;
	if (e && resolved) {
		e->serial = pm->serial;
		e->version = modules_version(pm);
		e->depth = (uint32_t)depth;
		e->id = id;
		memcpy(e->pcs, pcs, (size_t)depth * sizeof(*pcs));
	}
	return id;
}

int stack_table_get(const struct stack_table *t, uint32_t id,
		    const struct stack_frame **frames, int *depth)
{
	if (id >= t->nstacks)
		return -1;
	*frames = t->stacks[id].frames;
	*depth = (int)t->stacks[id].depth;
	return 0;
}

uint32_t stack_table_count(const struct stack_table *t)
{
	return (uint32_t)t->nstacks;
}

size_t stack_table_memory(const struct stack_table *t)
{
	return t->bytes;
}

uint64_t stack_table_lost(const struct stack_table *t)
{
	return t->lost;
}

uint64_t stack_table_folded(const struct stack_table *t)
{
	return t->folded;
}

int stack_table_full(const struct stack_table *t)
{
	return t->max_stacks && t->nstacks - 1 - (t->other != 0) >= t->max_stacks;
}

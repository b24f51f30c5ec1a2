/*
 * profile.c - building and releasing the report model (profile.h).
 *
 * The profile_add_*() helpers de-duplicate entries through hash indexes
 * that live beside the profile, in a short list keyed by the profile's
 * address (struct profile has no room for them).  memtap builds one or
 * two profiles per run, so the list stays tiny.  Each index is an open
 * addressing table of entry numbers + 1 (0 = empty), rehashed from the
 * arrays when it is 3/4 full.
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "report/output.h"
#include "report/profile.h"
#include "util/xmalloc.h"

struct hindex {
	size_t *slots;		/* entry + 1, 0 when empty */
	size_t nslots;		/* power of two */
	size_t used;
};

struct profile_index {
	struct profile_index *next;
	const struct profile *p;
	size_t cap_types, cap_mappings, cap_functions, cap_locations,
	       cap_samples;
	struct hindex mappings, functions, locations, samples;
};

static struct profile_index *indexes;

/* FNV-1a */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *s = data;

	while (len--) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	if (!s)
		return hash_bytes(h, "\xff", 1);
	return hash_bytes(h, s, strlen(s) + 1);
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return hash_bytes(h, &v, sizeof(v));
}

#define HASH_SEED 0xcbf29ce484222325ULL

static int str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static uint64_t hash_mapping(const struct prof_mapping *m)
{
	uint64_t h = HASH_SEED;

	h = hash_u64(h, m->start);
	h = hash_u64(h, m->limit);
	h = hash_u64(h, m->offset);
	h = hash_str(h, m->file);
	return hash_str(h, m->build_id);
}

static uint64_t hash_function(const struct prof_function *fn)
{
	uint64_t h = HASH_SEED;

	h = hash_str(h, fn->name);
	h = hash_str(h, fn->system_name);
	return hash_str(h, fn->file);
}

static uint64_t hash_location(const struct prof_location *l)
{
	uint64_t h = HASH_SEED;
	size_t i;

	h = hash_u64(h, l->address);
	h = hash_u64(h, l->mapping);
	for (i = 0; i < l->nlines; i++) {
		h = hash_u64(h, l->lines[i].function);
		h = hash_u64(h, (uint64_t)l->lines[i].line);
	}
	return h;
}

static uint64_t hash_sample(const size_t *locs, size_t nlocs, pid_t pid,
			    const char *comm, const char *event)
{
	uint64_t h = HASH_SEED;

	h = hash_bytes(h, locs, nlocs * sizeof(*locs));
	h = hash_u64(h, nlocs);
	h = hash_u64(h, (uint64_t)pid);
	h = hash_str(h, comm);
	return hash_str(h, event);
}

enum kind { K_MAPPING, K_FUNCTION, K_LOCATION, K_SAMPLE };

static uint64_t hash_entry(const struct profile *p, enum kind k, size_t i)
{
	const struct prof_sample *s;

	switch (k) {
	case K_MAPPING:
		return hash_mapping(&p->mappings[i]);
	case K_FUNCTION:
		return hash_function(&p->functions[i]);
	case K_LOCATION:
		return hash_location(&p->locations[i]);
	case K_SAMPLE:
		s = &p->samples[i];
		return hash_sample(s->locs, s->nlocs, s->pid, s->comm, s->event);
	}
	return 0;
}

static size_t entry_count(const struct profile *p, enum kind k)
{
	switch (k) {
	case K_MAPPING:
		return p->nmappings;
	case K_FUNCTION:
		return p->nfunctions;
	case K_LOCATION:
		return p->nlocations;
	case K_SAMPLE:
		return p->nsamples;
	}
	return 0;
}

/* Insert entry i (hash h) into the table, which has room. */
static void hindex_put(struct hindex *x, uint64_t h, size_t i)
{
	size_t mask = x->nslots - 1, j = h & mask;

	while (x->slots[j])
		j = (j + 1) & mask;
	x->slots[j] = i + 1;
	x->used++;
}

/* Make room for one more entry of kind k, rehashing from the arrays. */
static void hindex_reserve(struct hindex *x, const struct profile *p,
			   enum kind k)
{
	size_t n = entry_count(p, k), i;

	if (x->nslots && (x->used + 1) * 4 <= x->nslots * 3)
		return;
	free(x->slots);
	x->nslots = x->nslots ? x->nslots * 2 : 64;
	while ((n + 1) * 4 > x->nslots * 3)
		x->nslots *= 2;
	x->slots = xcalloc(x->nslots, sizeof(*x->slots));
	x->used = 0;
	for (i = 0; i < n; i++)
		hindex_put(x, hash_entry(p, k, i), i);
}

static struct profile_index *get_index(struct profile *p)
{
	struct profile_index *ix;

	for (ix = indexes; ix; ix = ix->next)
		if (ix->p == p)
			return ix;
	ix = xcalloc(1, sizeof(*ix));
	ix->p = p;
	ix->cap_types = p->ntypes;
	ix->cap_mappings = p->nmappings;
	ix->cap_functions = p->nfunctions;
	ix->cap_locations = p->nlocations;
	ix->cap_samples = p->nsamples;
	hindex_reserve(&ix->mappings, p, K_MAPPING);
	hindex_reserve(&ix->functions, p, K_FUNCTION);
	hindex_reserve(&ix->locations, p, K_LOCATION);
	hindex_reserve(&ix->samples, p, K_SAMPLE);
	ix->next = indexes;
	indexes = ix;
	return ix;
}

static void drop_index(const struct profile *p)
{
	struct profile_index **pp, *ix;

	for (pp = &indexes; (ix = *pp); pp = &ix->next) {
		if (ix->p != p)
			continue;
		*pp = ix->next;
		free(ix->mappings.slots);
		free(ix->functions.slots);
		free(ix->locations.slots);
		free(ix->samples.slots);
		free(ix);
		return;
	}
}

size_t profile_add_value_type(struct profile *p, const char *type,
			      const char *unit)
{
	struct profile_index *ix = get_index(p);
	size_t i;

	assert(type && unit);
	for (i = 0; i < p->ntypes; i++)
		if (!strcmp(p->types[i].type, type) &&
		    !strcmp(p->types[i].unit, unit))
			return i;
	/* Samples carry one value per type: types come first. */
	assert(p->nsamples == 0);
	p->types = xgrowarray(p->types, &ix->cap_types, p->ntypes + 1,
			      sizeof(*p->types));
	p->types[i].type = xstrdup(type);
	p->types[i].unit = xstrdup(unit);
	p->ntypes++;
	return i;
}

size_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit,
			   uint64_t offset, const char *file,
			   const char *build_id)
{
	struct profile_index *ix = get_index(p);
	struct prof_mapping key = { start, limit, offset, (char *)file,
				    (char *)build_id };
	struct hindex *x = &ix->mappings;
	uint64_t h = hash_mapping(&key);
	size_t j, i;

	for (j = h & (x->nslots - 1); x->slots[j]; j = (j + 1) & (x->nslots - 1)) {
		const struct prof_mapping *m = &p->mappings[x->slots[j] - 1];

		if (m->start == start && m->limit == limit &&
		    m->offset == offset && str_eq(m->file, file) &&
		    str_eq(m->build_id, build_id))
			return x->slots[j] - 1;
	}
	hindex_reserve(x, p, K_MAPPING);
	i = p->nmappings;
	p->mappings = xgrowarray(p->mappings, &ix->cap_mappings, i + 1,
				 sizeof(*p->mappings));
	key.file = dup_or_null(file);
	key.build_id = dup_or_null(build_id);
	p->mappings[i] = key;
	p->nmappings++;
	hindex_put(x, h, i);
	return i;
}

size_t profile_add_function(struct profile *p, const char *name,
			    const char *system_name, const char *file)
{
	struct profile_index *ix = get_index(p);
	struct prof_function key = { (char *)name, (char *)system_name,
				     (char *)file };
	struct hindex *x = &ix->functions;
	uint64_t h = hash_function(&key);
	size_t j, i;

	for (j = h & (x->nslots - 1); x->slots[j]; j = (j + 1) & (x->nslots - 1)) {
		const struct prof_function *fn = &p->functions[x->slots[j] - 1];

		if (str_eq(fn->name, name) &&
		    str_eq(fn->system_name, system_name) &&
		    str_eq(fn->file, file))
			return x->slots[j] - 1;
	}
	hindex_reserve(x, p, K_FUNCTION);
	i = p->nfunctions;
	p->functions = xgrowarray(p->functions, &ix->cap_functions, i + 1,
				  sizeof(*p->functions));
	p->functions[i].name = dup_or_null(name);
	p->functions[i].system_name = dup_or_null(system_name);
	p->functions[i].file = dup_or_null(file);
	p->nfunctions++;
	hindex_put(x, h, i);
	return i;
}

size_t profile_add_location(struct profile *p, uint64_t address,
			    size_t mapping, const struct prof_line *lines,
			    size_t nlines)
{
	struct profile_index *ix = get_index(p);
	struct prof_location key = { address, mapping, nlines,
				     (struct prof_line *)lines };
	struct hindex *x = &ix->locations;
	uint64_t h = hash_location(&key);
	size_t j, i, k;

	assert(mapping == (size_t)-1 || mapping < p->nmappings);
	for (j = h & (x->nslots - 1); x->slots[j]; j = (j + 1) & (x->nslots - 1)) {
		const struct prof_location *l = &p->locations[x->slots[j] - 1];

		if (l->address != address || l->mapping != mapping ||
		    l->nlines != nlines)
			continue;
		for (k = 0; k < nlines; k++)
			if (l->lines[k].function != lines[k].function ||
			    l->lines[k].line != lines[k].line)
				break;
		if (k == nlines)
			return x->slots[j] - 1;
	}
	hindex_reserve(x, p, K_LOCATION);
	i = p->nlocations;
	p->locations = xgrowarray(p->locations, &ix->cap_locations, i + 1,
				  sizeof(*p->locations));
	key.lines = NULL;
	if (nlines) {
		key.lines = xmalloc(nlines * sizeof(*lines));
		memcpy(key.lines, lines, nlines * sizeof(*lines));
	}
	for (k = 0; k < nlines; k++)
		assert(lines[k].function < p->nfunctions);
	p->locations[i] = key;
	p->nlocations++;
	hindex_put(x, h, i);
	return i;
}

size_t profile_add_sample(struct profile *p, const size_t *locs, size_t nlocs,
			  const int64_t *values, pid_t pid, const char *comm,
			  const char *event)
{
	struct profile_index *ix = get_index(p);
	struct hindex *x = &ix->samples;
	uint64_t h = hash_sample(locs, nlocs, pid, comm, event);
	struct prof_sample *s;
	size_t j, i, t;

	for (j = h & (x->nslots - 1); x->slots[j]; j = (j + 1) & (x->nslots - 1)) {
		s = &p->samples[x->slots[j] - 1];
		if (s->nlocs != nlocs || s->pid != pid ||
		    !str_eq(s->comm, comm) || !str_eq(s->event, event) ||
		    (nlocs && memcmp(s->locs, locs, nlocs * sizeof(*locs))))
			continue;
		for (t = 0; t < p->ntypes; t++)
			s->values[t] += values[t];
		return x->slots[j] - 1;
	}
	hindex_reserve(x, p, K_SAMPLE);
	i = p->nsamples;
	p->samples = xgrowarray(p->samples, &ix->cap_samples, i + 1,
				sizeof(*p->samples));
	s = &p->samples[i];
	s->nlocs = nlocs;
	s->locs = NULL;
	if (nlocs) {
		s->locs = xmalloc(nlocs * sizeof(*locs));
		memcpy(s->locs, locs, nlocs * sizeof(*locs));
	}
	for (t = 0; t < nlocs; t++)
		assert(locs[t] < p->nlocations);
	s->values = xcalloc(p->ntypes ? p->ntypes : 1, sizeof(*s->values));
	for (t = 0; t < p->ntypes; t++)
		s->values[t] = values[t];
	s->pid = pid;
	s->comm = dup_or_null(comm);
	s->event = dup_or_null(event);
	p->nsamples++;
	hindex_put(x, h, i);
	return i;
}

int64_t profile_total(const struct profile *p, size_t t)
{
	int64_t sum = 0;
	size_t i;

	if (t >= p->ntypes)
		return 0;
	for (i = 0; i < p->nsamples; i++)
		sum += p->samples[i].values[t];
	return sum;
}

size_t profile_find_type(const struct profile *p, const char *type)
{
	size_t i;

	for (i = 0; i < p->ntypes; i++)
		if (!strcmp(p->types[i].type, type))
			return i;
	return (size_t)-1;
}

const char *const prof_peak_names[PROF_NPEAKS] = { "alloc", "mappings" };

int weight_parse(const char *s)
{
	if (!strcmp(s, "peak"))
		return WEIGHT_PEAK;
	if (!strcmp(s, "bytes"))
		return WEIGHT_BYTES;
	if (!strcmp(s, "count"))
		return WEIGHT_COUNT;
	if (!strcmp(s, "released"))
		return WEIGHT_RELEASED;
	return -1;
}

const char *view_conflict(int weight, int net, int leaks)
{
	if (net && leaks)
		return "--net and --leaks exclude each other";
	if (net && weight == WEIGHT_COUNT)
		return "--net and --weight=count exclude each other";
	if (net && weight == WEIGHT_RELEASED)
		return "--net and --weight=released exclude each other";
	if (leaks && weight == WEIGHT_RELEASED)
		return "--leaks and --weight=released exclude each other";
	if (net && weight == WEIGHT_PEAK)
		return "--net and --weight=peak exclude each other";
	return NULL;
}

const char *view_type(int weight, int net, int leaks, int count_default)
{
	int count = weight == WEIGHT_COUNT ||
		    (weight == WEIGHT_DEFAULT && count_default && !net && !leaks);

	if (weight == WEIGHT_PEAK)
		return "peak_space";
	if (leaks)
		return count ? "inuse_objects" : "inuse_space";
	if (net)
		return "net";
	if (weight == WEIGHT_RELEASED)
		return "released";
	return count ? "count" : "bytes";
}

void profile_release(struct profile *p)
{
	size_t i;

	drop_index(p);
	for (i = 0; i < p->ntypes; i++) {
		free(p->types[i].type);
		free(p->types[i].unit);
	}
	free(p->types);
	for (i = 0; i < p->nmappings; i++) {
		free(p->mappings[i].file);
		free(p->mappings[i].build_id);
	}
	free(p->mappings);
	for (i = 0; i < p->nfunctions; i++) {
		free(p->functions[i].name);
		free(p->functions[i].system_name);
		free(p->functions[i].file);
	}
	free(p->functions);
	for (i = 0; i < p->nlocations; i++)
		free(p->locations[i].lines);
	free(p->locations);
	for (i = 0; i < p->nsamples; i++) {
		free(p->samples[i].locs);
		free(p->samples[i].values);
		free(p->samples[i].comm);
		free(p->samples[i].event);
	}
	free(p->samples);
	for (i = 0; i < p->nprocesses; i++) {
		struct prof_process *pr = &p->processes[i];

		free(pr->comm);
		free(pr->status);
		for (size_t k = 0; k < pr->nevents; k++)
			free(pr->events[k].event);
		free(pr->events);
	}
	free(p->processes);
	for (size_t j = 0; j < p->nintervals; j++) {
		free(p->intervals[j].vm);
		free(p->intervals[j].changes);
	}
	free(p->intervals);
	free(p->run.syscalls);
	free(p->run.longest_stop_kind);
	for (size_t k = 0; k < p->run.nunfound; k++)
		free(p->run.unfound[k]);
	free(p->run.unfound);
	for (size_t k = 0; k < p->run.nnotes; k++)
		free(p->run.notes[k]);
	free(p->run.notes);
	memset(p, 0, sizeof(*p));
}

static int change_cmp(const void *a, const void *b)
{
	const struct prof_change *x = a, *y = b;

	return (x->sample > y->sample) - (x->sample < y->sample);
}

void profile_interval_merge(struct prof_interval *pi)
{
	size_t n = 0;

	if (!pi->nchanges)
		return;
	qsort(pi->changes, pi->nchanges, sizeof(*pi->changes), change_cmp);
	for (size_t i = 1; i < pi->nchanges; i++) {
		struct prof_change *c = &pi->changes[n], *d = &pi->changes[i];

		if (d->sample == c->sample) {
			c->calls += d->calls;
			c->acquired += d->acquired;
			c->released += d->released;
			c->held = d->held;
		} else {
			pi->changes[++n] = *d;
		}
	}
	pi->nchanges = n + 1;
}

/*
 * out-text.c - the text report's stacks: for each event kind, the
 * heaviest stacks, leaf first, a pure function of the profile.
 *
 * A section is ranked by the value type the profile shows by default
 * (the view: --weight, --net, --leaks).  In the default byte view a
 * stack weighs the bytes it moved either way (acquired + released), so
 * that munmap stacks, which only give memory back, rank too; acquired
 * bytes are printed with "+", released ones with "-", each once, and
 * the section header gives the same totals as the ACQUIRED and RELEASED
 * columns of the summary (and as the folded, SVG, pprof and JSON
 * outputs of the "bytes" and "released" types).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "output.h"
#include "xmalloc.h"

const char *const event_kind_names[EV_NKINDS] = {
	[EV_BRK] = "brk",
	[EV_MMAP] = "mmap",
	[EV_MUNMAP] = "munmap",
	[EV_MREMAP] = "mremap",
	[EV_MALLOC] = "malloc",
	[EV_CALLOC] = "calloc",
	[EV_REALLOC] = "realloc",
	[EV_REALLOCARRAY] = "reallocarray",
	[EV_FREE] = "free",
	[EV_POSIX_MEMALIGN] = "posix_memalign",
	[EV_ALIGNED_ALLOC] = "aligned_alloc",
	[EV_MEMALIGN] = "memalign",
	[EV_VALLOC] = "valloc",
	[EV_PVALLOC] = "pvalloc",
	[EV_PROBE] = "probe",
};

/* The value types a section needs, by name ((size_t)-1: absent). */
struct text_view {
	const struct profile *p;
	size_t t;		/* the view's type */
	int moved;		/* byte view: rank by acquired + released */
	size_t bytes, count, released, inuse, objects;
};

static int64_t value(const struct prof_sample *s, size_t t)
{
	return t == (size_t)-1 ? 0 : s->values[t];
}

static int64_t weight(const struct text_view *v, const struct prof_sample *s)
{
	if (v->moved)
		return value(s, v->bytes) + value(s, v->released);
	return value(s, v->t);
}

static const struct text_view *sort_view;

/* Heaviest first; equal weights keep the profile's order. */
static int cmp_samples(const void *a, const void *b)
{
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	int64_t wa = weight(sort_view, &sort_view->p->samples[ia]);
	int64_t wb = weight(sort_view, &sort_view->p->samples[ib]);

	if (wa != wb)
		return wa < wb ? 1 : -1;
	return ia < ib ? -1 : ia > ib;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static void print_location(FILE *f, const struct profile *p, size_t loc, int mangled)
{
	const struct prof_location *l = &p->locations[loc];

	for (size_t i = 0; i < l->nlines; i++) {
		const struct prof_function *fn = &p->functions[l->lines[i].function];
		const char *name = mangled && fn->system_name ? fn->system_name : fn->name;

		fprintf(f, "        %s%s\n", name ? name : "[unknown]",
			i + 1 < l->nlines ? " (inlined)" : "");
	}
	if (l->nlines)
		return;
	if (l->mapping < p->nmappings && p->mappings[l->mapping].file)
		fprintf(f, "        [unknown] (%s+0x%" PRIx64 ")\n",
			base_name(p->mappings[l->mapping].file), l->address);
	else
		fprintf(f, "        [unknown] (0x%" PRIx64 ")\n", l->address);
}

/* "+A bytes acquired, -R bytes released" without the zero parts. */
static void print_moved(FILE *f, int64_t acquired, int64_t released, const char *sep)
{
	if (acquired)
		fprintf(f, "+%" PRId64 " bytes%s", acquired, released ? sep : "");
	if (released)
		fprintf(f, "-%" PRId64 " bytes", released);
}

static void print_header(FILE *f, const struct text_view *v, const char *event, size_t shown,
			 size_t n, int64_t total, int64_t acquired, int64_t released,
			 int64_t calls)
{
	const struct prof_value_type *ty = &v->p->types[v->t];

	fprintf(f, "\ntop %zu stacks of %s by %s (", shown, event, ty->type);
	if (v->moved) {
		if (acquired)
			fprintf(f, "+%" PRId64 " bytes acquired%s", acquired, released ? ", " : "");
		if (released)
			fprintf(f, "-%" PRId64 " bytes released", released);
	} else if (v->t == v->released) {
		fprintf(f, "-%" PRId64 " bytes released", total);
	} else if (v->t == v->inuse) {
		fprintf(f, "%" PRId64 " bytes held", total);
	} else if (v->t == v->count) {
		fprintf(f, "%" PRId64 " call%s in %zu stack%s)\n", total, total == 1 ? "" : "s", n,
			n == 1 ? "" : "s");
		return;
	} else if (v->t == v->objects) {
		fprintf(f, "%" PRId64 " blocks held", total);
	} else {
		fprintf(f, "%+" PRId64 " %s", total, ty->unit);
	}
	fprintf(f, " in %zu stack%s, %" PRId64 " call%s)\n", n, n == 1 ? "" : "s", calls,
		calls == 1 ? "" : "s");
}

static void print_stack(FILE *f, const struct text_view *v, const struct prof_sample *s,
			size_t rank, int64_t total, int mangled)
{
	int64_t w = weight(v, s), calls = value(s, v->count);

	fprintf(f, "  #%zu  ", rank);
	if (v->t == v->inuse || v->t == v->objects) {
		int64_t blocks = value(s, v->objects);

		fprintf(f, "%" PRId64 " bytes held in %" PRId64 " block%s  ", value(s, v->inuse),
			blocks, blocks == 1 ? "" : "s");
	} else if (value(s, v->bytes) || value(s, v->released)) {
		print_moved(f, value(s, v->bytes), value(s, v->released), "  ");
		fputs("  ", f);
	}
	fprintf(f, "%.1f%%  %" PRId64 " call%s  pid %d (%s)\n",
		total ? 100.0 * (double)w / (double)total : 0.0, calls, calls == 1 ? "" : "s",
		(int)s->pid, s->comm ? s->comm : "?");
	if (!s->nlocs)
		fprintf(f, "        [no stack]\n");
	for (size_t k = 0; k < s->nlocs; k++)
		if (s->locs[k] < v->p->nlocations)
			print_location(f, v->p, s->locs[k], mangled);
}

/*
 * One section: the samples of event whose weight is not 0.  The header's
 * calls are those of every sample of the event (failed calls weigh
 * nothing), as in the summary's CALLS column.
 */
static void print_event(FILE *f, const struct text_view *v, const char *event, size_t *idx,
			size_t top, int mangled)
{
	const struct profile *p = v->p;
	int64_t total = 0, acquired = 0, released = 0, calls = 0;
	size_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (strcmp(s->event ? s->event : "?", event))
			continue;
		/* calls of stacks that weigh nothing too: the CALLS column */
		calls += value(s, v->count);
		if (!weight(v, s))
			continue;
		idx[n++] = i;
		total += weight(v, s);
		acquired += value(s, v->bytes);
		released += value(s, v->released);
	}
	if (!n)
		return;
	sort_view = v;
	qsort(idx, n, sizeof(*idx), cmp_samples);
	print_header(f, v, event, n < top ? n : top, n, total, acquired, released, calls);
	for (size_t j = 0; j < n && j < top; j++)
		print_stack(f, v, &p->samples[idx[j]], j + 1, total, mangled);
}

int write_text_stacks(FILE *f, const struct profile *p, const struct output_options *o)
{
	struct text_view v = { .p = p };
	size_t *idx, top = o && o->top > 0 ? (size_t)o->top : 10;
	int mangled = o && o->no_demangle;
	const char **events;
	size_t nevents = 0;

	v.t = o && o->value_index ? o->value_index - 1 : p->default_type;
	if (v.t >= p->ntypes) {
		if (!p->nsamples)
			return 0;
		errno = EINVAL;
		return -1;
	}
	v.bytes = profile_find_type(p, "bytes");
	v.count = profile_find_type(p, "count");
	v.released = profile_find_type(p, "released");
	v.inuse = profile_find_type(p, "inuse_space");
	v.objects = profile_find_type(p, "inuse_objects");
	v.moved = v.t == v.bytes;
	/* sections in the order of the event kinds, then any other name */
	idx = xcalloc(p->nsamples + 1, sizeof(*idx));
	events = xcalloc(EV_NKINDS + p->nsamples + 1, sizeof(*events));
	for (int k = 0; k < EV_NKINDS; k++)
		events[nevents++] = event_kind_names[k];
	for (size_t i = 0; i < p->nsamples; i++) {
		const char *e = p->samples[i].event ? p->samples[i].event : "?";
		size_t j;

		for (j = 0; j < nevents && strcmp(events[j], e); j++)
			;
		if (j == nevents)
			events[nevents++] = e;
	}
	for (size_t j = 0; j < nevents; j++)
		print_event(f, &v, events[j], idx, top, mangled);
	free(events);
	free(idx);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

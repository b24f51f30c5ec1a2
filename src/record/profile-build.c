/*
 * profile-build.c - build the report model (profile.h) from the
 * aggregates, the stack table and the symbolizer, once, at report time.
 *
 * Value types: "bytes" (acquired: growth, never negative), "count"
 * (calls), "released" (bytes given back), "net" (acquired - released),
 * "inuse_space" and "inuse_objects" (held at the end, with --leaks),
 * "alloc_space" and "alloc_objects" (allocator calls, the Go heap
 * profile's names), then one "<event>_space" (acquired bytes) per event
 * kind seen that acquires memory, so that pprof users can pick a kind
 * with -sample_index, and "peak_space" (what each stack held when the
 * held bytes of its family were highest: aggregate.h) where held memory
 * is known.  Every figure has one sign: acquired and released
 * bytes are both positive numbers, as in the text report's table.  The
 * default type is what --weight, --net and --leaks select (view_type()),
 * count when a --probe has no size= and nothing else was asked for.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/aggregate.h"
#include "record/live.h"
#include "record/maptrack.h"
#include "record/report.h"
#include "record/sink-int.h"
#include "record/sink.h"
#include "record/timeline.h"
#include "report/output.h"
#include "stack/runtimes/jitnames.h"
#include "stack/modules.h"
#include "stack/stacks.h"
#include "stack/symbols/symbolize.h"
#include "util/clock.h"
#include "util/xmalloc.h"

enum {
	VT_BYTES, VT_COUNT, VT_RELEASED, VT_NET, VT_INUSE_SPACE, VT_INUSE_OBJECTS,
	VT_ALLOC_SPACE, VT_ALLOC_OBJECTS, VT_FIXED
};

const char *path_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The profile mapping of a module, added on first use. */
static size_t module_mapping(struct profile *prof, size_t *map_of, uint32_t module)
{
	const struct module *m;
	char bid[2 * MODULE_BUILD_ID_MAX + 1];

	if (module == MODULE_NONE || module >= module_count())
		return (size_t)-1;
	if (map_of[module])
		return map_of[module] - 1;
	m = module_get(module);
	if (!m)
		return (size_t)-1;
	map_of[module] = 1 + profile_add_mapping(prof, 0, 0, 0, m->path,
						 module_build_id_hex(m, bid, sizeof(bid)));
	return map_of[module] - 1;
}

static size_t frame_location(struct profile *prof, struct symbolizer *sz, size_t *map_of,
			     const struct stack_frame *f)
{
	const struct sym_info *si;
	struct prof_line lines[16];
	size_t n = 0;

	if (f->module == MODULE_NONE && f->addr == STACK_FRAME_CUT_ADDR) {
		lines[0].function = profile_add_function(prof, STACK_CUT_NAME, STACK_CUT_NAME, NULL);
		lines[0].line = 0;
		return profile_add_location(prof, 0, (size_t)-1, lines, 1);
	}
	if (f->module == MODULE_NONE && f->addr == STACK_FRAME_OTHER_ADDR) {
		lines[0].function = profile_add_function(prof, STACK_OTHER_NAME, STACK_OTHER_NAME,
							 NULL);
		lines[0].line = 0;
		return profile_add_location(prof, 0, (size_t)-1, lines, 1);
	}
	si = symbolizer_lookup(sz, f->module, f->addr);

	for (int i = 0; i < si->nframes && n < 16; i++) {
		const struct sym_frame *sf = &si->frames[i];
		char name[512];
		const char *fn = sf->function;

		if (!fn)
			break;
		if (report_config()->lines && sf->file && sf->line) {
			snprintf(name, sizeof(name), "%s (%s:%d)", fn, path_base_name(sf->file), sf->line);
			fn = name;
		}
		lines[n].function = profile_add_function(prof, fn, sf->system_name, sf->file);
		lines[n].line = sf->line;
		n++;
	}
	return profile_add_location(prof, f->addr, module_mapping(prof, map_of, f->module),
				    lines, n);
}

struct build {
	struct profile *prof;
	struct symbolizer *sz;
	size_t *map_of, nmods;
	size_t *locs;
	int64_t *values;
	size_t kind_type[EV_NKINDS];
	struct sink_proc *proc;
	uint64_t cutoff_ns;	/* --min-age: held since before this */
};

/* The profile locations of a stack into b->locs; their number. */
static size_t stack_locations(struct build *b, uint32_t stack)
{
	struct stack_table *st = sink_stack_table();
	const struct stack_frame *frames = NULL;
	int depth = 0;
	size_t n = 0;

	if (!stack || !st || stack_table_get(st, stack, &frames, &depth) < 0)
		return 0;
	if (module_count() + 1 > b->nmods) {
		b->map_of = xrealloc(b->map_of, (module_count() + 1) * sizeof(*b->map_of));
		memset(b->map_of + b->nmods, 0, (module_count() + 1 - b->nmods) * sizeof(*b->map_of));
		b->nmods = module_count() + 1;
	}
	for (int d = 0; d < depth && d < STACK_MAX_DEPTH; d++)
		b->locs[n++] = frame_location(b->prof, b->sz, b->map_of, &frames[d]);
	return n;
}

const char *held_event_name(unsigned kind, int inherited)
{
	static char names[EV_NKINDS][32];

	if (kind >= EV_NKINDS)
		return "?";
	if (!inherited)
		return event_kind_names[kind];
	if (!names[kind][0])
		snprintf(names[kind], sizeof(names[kind]), "%s" HELD_INHERITED_SUFFIX,
			 event_kind_names[kind]);
	return names[kind];
}

/* Add held memory (bytes, objects) of one stack to the profile. */
static void add_held(struct build *b, uint32_t stack, uint32_t kind, int inherited,
		     uint64_t bytes, uint64_t time_ns)
{
	size_t n;

	if (time_ns > b->cutoff_ns || kind >= EV_NKINDS || bytes < sink_config()->min_size)
		return;
	n = stack_locations(b, stack);
	memset(b->values, 0, b->prof->ntypes * sizeof(*b->values));
	b->values[VT_INUSE_SPACE] = (int64_t)bytes;
	b->values[VT_INUSE_OBJECTS] = 1;
	profile_add_sample(b->prof, b->locs, n, b->values, b->proc->pid, b->proc->comm,
			   held_event_name(kind, inherited));
}

static void held_seg(const struct map_seg *s, void *arg)
{
	add_held(arg, s->stack, s->kind, s->inherited, s->end - s->start, s->time_ns);
}

static void held_block(const struct live_block *blk, void *arg)
{
	add_held(arg, blk->stack, blk->kind, blk->inherited, blk->size, blk->time_ns);
}

/* Does an event of this kind ever acquire memory? */
static int kind_acquires(enum event_kind k)
{
	return k != EV_MUNMAP && k != EV_FREE;
}

/* Is what stacks hold kept in this report?  -i reports: with --leaks only. */
static int held_reported(void)
{
	const struct report_config *rc = report_config();

	return sink_held_known() && (rc->leaks || rc->interval <= 0);
}

/*
 * Is what p holds read from its blocks and ranges one by one?  The
 * aggregates' held counters (aggregate.h) have it at once, but for
 * --min-age and --min-size, which weigh each one, and for a fork child,
 * which holds its parent's too, apart.
 */
static int held_walked(const struct sink_proc *p)
{
	return report_config()->min_age > 0 || sink_config()->min_size || p->inherits;
}

/* The per-process figures of the report: status, /proc, event totals. */
static void add_processes(struct profile *prof)
{
	size_t n = 0;

	for (struct sink_proc *p = sink_procs(); p; p = p->next)
		n++;
	prof->processes = xcalloc(n ? n : 1, sizeof(*prof->processes));
	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		struct prof_process *pr = &prof->processes[prof->nprocesses++];
		char status[64];

		pr->pid = p->pid;
		pr->ppid = p->ppid;
		pr->comm = xstrdup(p->comm);
		proc_status_text(p, status, sizeof(status));
		pr->status = xstrdup(status);
		pr->have_vm = p->vm_start.have && p->vm_end.have;
		pr->vm_size[0] = p->vm_start.vm_size;
		pr->vm_size[1] = p->vm_end.vm_size;
		pr->vm_rss[0] = p->vm_start.vm_rss;
		pr->vm_rss[1] = p->vm_end.vm_rss;
		pr->vm_data[0] = p->vm_start.vm_data;
		pr->vm_data[1] = p->vm_end.vm_data;
		pr->left_size = p->left_size;
		pr->left_data = p->left_data;
		pr->filtered = p->filtered;
		pr->unknown_frees = p->unknown_frees;
		pr->from_start = p->from_start && sink_frees_followed();
		pr->refrees = p->refrees;
		pr->live_blocks = live_count(p);
		pr->live_bytes = live_bytes(p);
		pr->inherited_blocks = live_inherited_count(p);
		pr->inherited_bytes = live_inherited_bytes(p);
		pr->events = xcalloc(EV_NKINDS, sizeof(*pr->events));
		for (int k = 0; k < EV_NKINDS; k++) {
			const struct kind_stats *ks = &p->stats[k];
			struct prof_event_totals *e;

			if (!(sink_config()->events & EV_BIT(k)))
				continue;
			e = &pr->events[pr->nevents++];
			e->event = xstrdup(event_kind_names[k]);
			e->counted = sink_kind_totals(ks, NULL, &e->calls, &e->acquired);
			e->failed = ks->failed;
			e->released = ks->released;
			e->anon = ks->anon;
			e->file = ks->file;
			e->sampled = ev_is_fault(k);
			e->samples = ks->samples;
			e->lost = ks->lost;
			e->throttles = ks->throttles;
			e->neighbour = ks->neighbour;
			e->neighbour_bytes = ks->neighbour_bytes;
			e->data = ks->data;
			e->resident = ks->resident;
		}
	}
}

/*
 * Will a source line be shown?  Not in text, folded and SVG output
 * without --lines, when no profile is written besides (--record,
 * --at-peak): reading a module's line tables, sorted at their first
 * use, is then saved.
 */
static int lines_shown(const struct report_config *rc)
{
	return rc->lines || rc->record || rc->at_peak ||
	       (rc->format != FORMAT_TEXT && rc->format != FORMAT_FOLDED && rc->format != FORMAT_SVG);
}

_Static_assert((int)PROF_COUNTED_CALLS == (int)EV_COUNTED_CALLS &&
	       (int)PROF_COUNTED_BYTES == (int)EV_COUNTED_BYTES,
	       "sink_kind_totals() answers in profile.h's bits");

static void add_run(struct profile *prof, const struct run_info *ri)
{
	struct prof_run *r = &prof->run;
	const struct stop_counts *st = &ri->stops;

	prof->have_run = 1;
	r->syscalls = xstrdup(ri->syscall_source);
	r->fault_period = ri->fault_period;
	r->sample_lo = ri->sample_lo;
	r->sample_hi = ri->sample_hi;
	r->stops = st->total;
	r->stops_seccomp = st->seccomp;
	r->stops_syscall = st->syscall;
	r->stops_breakpoint = st->breakpoint;
	r->stops_signal = st->signal;
	r->stops_other = st->event + st->group;
	if (st->longest_kind) {
		r->longest_stop_ns = st->longest_ns;
		r->longest_stop_pid = st->longest_pid;
		r->longest_stop_tid = st->longest_tid;
		r->longest_stop_kind = xstrdup(st->longest_kind);
		memcpy(r->stops_over_ms, st->over_ms, sizeof(r->stops_over_ms));
	}
	r->stacks = sink_stacks_wanted();
	r->held = held_reported();
	r->stacks_folded = sink_stack_table() ? stack_table_folded(sink_stack_table()) : 0;
	for (size_t i = 0; i < ri->nunfound; i++) {
		r->unfound = xrealloc(r->unfound, (r->nunfound + 1) * sizeof(*r->unfound));
		r->unfound[r->nunfound++] = xstrdup(ri->unfound[i]);
	}
	for (size_t i = 0; i < ri->nnotes; i++) {
		r->notes = xrealloc(r->notes, (r->nnotes + 1) * sizeof(*r->notes));
		r->notes[r->nnotes++] = xstrdup(ri->notes[i]);
	}
}

void profile_build(struct profile *prof, const struct run_info *ri, int interval)
{
	const struct report_config *rc = report_config();
	size_t nagg, kind_type[EV_NKINDS], peak_type = (size_t)-1;
	struct agg *aggs = aggregate_entries(&nagg);
	size_t nmods = module_count() + 1;
	size_t *locs = xcalloc((size_t)STACK_MAX_DEPTH, sizeof(*locs));

	memset(prof, 0, sizeof(*prof));
	profile_add_value_type(prof, "bytes", "bytes");
	profile_add_value_type(prof, "count", "count");
	profile_add_value_type(prof, "released", "bytes");
	profile_add_value_type(prof, "net", "bytes");
	profile_add_value_type(prof, "inuse_space", "bytes");
	profile_add_value_type(prof, "inuse_objects", "count");
	profile_add_value_type(prof, "alloc_space", "bytes");
	profile_add_value_type(prof, "alloc_objects", "count");
	for (int k = 0; k < EV_NKINDS; k++)
		kind_type[k] = (size_t)-1;
	for (size_t i = 0; i < nagg; i++) {
		enum event_kind k = aggs[i].kind;

		if (kind_type[k] == (size_t)-1 && kind_acquires(k)) {
			char name[64];

			snprintf(name, sizeof(name), "%s_space", event_kind_names[k]);
			kind_type[k] = profile_add_value_type(prof, name, "bytes");
		}
	}
	if (held_reported()) {
		peak_type = profile_add_value_type(prof, "peak_space", "bytes");
		for (int f = 0; f < PROF_NPEAKS; f++) {
			const struct held_peak *pk = aggregate_peak(f == PROF_PEAK_ALLOC ? HELD_ALLOC
											 : HELD_MAPS);

			prof->peaks[f].bytes = pk->bytes;
			prof->peaks[f].nanos = (int64_t)pk->time_ns;
		}
	}
	prof->default_type = profile_find_type(prof, view_type(rc->weight, rc->net, rc->leaks,
							       rc->unsized_probes));
	prof->duration_nanos = (int64_t)(now_ns() - start_ns);
	prof->time_nanos = start_wall_ns;

	jit_names_read_all();	/* the names, whole, for the report */

	struct build b = {
		.prof = prof,
		.sz = symbolizer_new((rc->no_demangle ? SYMBOLIZE_NO_DEMANGLE : 0) |
				     (lines_shown(rc) ? 0 : SYMBOLIZE_NO_LINES)),
		.map_of = xcalloc(nmods, sizeof(size_t)),
		.nmods = nmods,
		.locs = locs,
		.values = xcalloc(prof->ntypes, sizeof(int64_t)),
	};
	uint64_t end_ns = now_ns() - start_ns;

	b.cutoff_ns = rc->min_age > 0 ? end_ns - (uint64_t)(rc->min_age * 1e9) : UINT64_MAX;
	if (rc->min_age > 0 && (uint64_t)(rc->min_age * 1e9) > end_ns)
		b.cutoff_ns = 0;
	size_t *agg_sample = interval ? NULL : xcalloc(nagg ? nagg : 1, sizeof(*agg_sample));

	for (size_t i = 0; i < nagg; i++) {
		const struct agg *a = &aggs[i];
		/* an interval's: since the mark */
		uint64_t calls = a->calls - (interval ? a->mark_calls : 0);
		uint64_t acquired = a->acquired - (interval ? a->mark_acquired : 0);
		uint64_t released = a->released - (interval ? a->mark_released : 0);
		uint64_t at_peak = peak_type != (size_t)-1 ? aggregate_held_at_peak(a) : 0;
		size_t n;

		int held = peak_type != (size_t)-1 && !held_walked(a->proc);

		if (interval && !calls && !acquired && !released && !at_peak && !(held && a->held))
			continue;
		n = stack_locations(&b, a->stack);
		memset(b.values, 0, prof->ntypes * sizeof(*b.values));
		b.values[VT_BYTES] = (int64_t)acquired;
		b.values[VT_COUNT] = (int64_t)calls;
		b.values[VT_RELEASED] = (int64_t)released;
		b.values[VT_NET] = (int64_t)acquired - (int64_t)released;
		if (peak_type != (size_t)-1)
			b.values[peak_type] = (int64_t)at_peak;
		if (held) {
			b.values[VT_INUSE_SPACE] = (int64_t)a->held;
			b.values[VT_INUSE_OBJECTS] = (int64_t)a->held_objects;
		}
		if (kind_type[a->kind] != (size_t)-1)
			b.values[kind_type[a->kind]] = b.values[VT_BYTES];
		if (ev_is_alloc(a->kind) && a->kind != EV_FREE) {
			/* the Go heap profile's names, for pprof users */
			b.values[VT_ALLOC_SPACE] = (int64_t)acquired;
			b.values[VT_ALLOC_OBJECTS] = (int64_t)calls;
		}
		n = profile_add_sample(prof, b.locs, n, b.values, a->proc->pid, a->proc->comm,
				       event_kind_names[a->kind]);
		if (agg_sample)
			agg_sample[i] = n;
	}
	add_processes(prof);
	add_run(prof, ri);
	/* held memory in every recording where it is known: --leaks is a view */
	if (prof->run.held) {
		for (struct sink_proc *p = sink_procs(); p; p = p->next) {
			if (!held_walked(p))
				continue;
			b.proc = p;
			maptrack_foreach(p, held_seg, &b);
			live_foreach(p, held_block, &b);
		}
	}
	if (agg_sample)
		timeline_to_profile(prof, agg_sample, nagg);
	free(agg_sample);
	symbolizer_free(b.sz);
	free(b.map_of);
	free(b.values);
	free(locs);
}

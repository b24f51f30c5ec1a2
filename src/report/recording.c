/*
 * recording.c - recordings: the JSON report (out-json.c) read back into
 * the report model (profile.h), and what `memtap report` (its command
 * line is cli/report.c) does: write any format and view of a recording
 * again, without the target.
 *
 * A version 2 recording carries the profile's tables (mappings,
 * functions, locations) and each sample's location indexes, so the
 * profile read back is the one written, entry for entry, and every
 * writer gives the same bytes as in the run.  A version 1 report has
 * only each sample's symbolized frames: the locations are rebuilt from
 * them (enough for folded stacks, flame graphs and `memtap diff`).
 *
 * Everything read is checked (types, indexes in range, one value per
 * value type); the first problem is one error line naming the file.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/error.h"
#include "util/json-read.h"
#include "util/outfile.h"
#include "report/output.h"
#include "util/xmalloc.h"

/* memtap writes about 20 value types; more would only cost time */
#define RECORDING_MAX_TYPES 256

struct reader {
	const char *name;
	struct profile *p;
	size_t *map_of, *fn_of, *loc_of, *sample_of;	/* recording index -> profile index */
	size_t nmap, nfn, nloc, nsample;
	char err[256];
};

static int bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* s as an error message may show it: 40 bytes, no control characters. */
static const char *shown(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < size && i < 40; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (s[i])
		buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}

static uint64_t num_or(const struct jval *obj, const char *key, uint64_t dflt)
{
	const struct jval *v = json_get(obj, key, J_NUM);

	return v ? (uint64_t)v->num : dflt;
}

/* A "0x..." member; -1 when it is missing or not hexadecimal. */
static int hex_member(const struct jval *obj, const char *key, uint64_t *v)
{
	const char *s = json_get_str(obj, key);
	char *end;

	if (!s || strncmp(s, "0x", 2) || !s[2])
		return -1;
	errno = 0;
	*v = strtoull(s + 2, &end, 16);
	return errno || *end ? -1 : 0;
}

static int flag(const struct jval *obj, const char *key)
{
	return json_get(obj, key, J_TRUE) != NULL;
}

/* An index member of an array: a number in [0, n). */
static int index_item(const struct jval *v, size_t n, size_t *i)
{
	if (v->type != J_NUM || v->num < 0 || (uint64_t)v->num >= n)
		return -1;
	*i = (size_t)v->num;
	return 0;
}

static int read_types(struct reader *r, const struct jval *root)
{
	const struct jval *types = json_get(root, "value_types", J_ARR);
	const char *def = json_get_str(root, "default_type");
	char buf[48];

	if (!types)
		return bad(r, "no value_types: not a memtap recording");
	if (types->n > RECORDING_MAX_TYPES)
		return bad(r, "more than %d value types", RECORDING_MAX_TYPES);
	for (size_t i = 0; i < types->n; i++) {
		const char *type = json_get_str(&types->items[i], "type");
		const char *unit = json_get_str(&types->items[i], "unit");

		if (!type || !unit)
			return bad(r, "value type %zu has no type or unit", i);
		if (profile_add_value_type(r->p, type, unit) != i)
			return bad(r, "value type '%s' appears twice", shown(type, buf, sizeof(buf)));
	}
	if (def) {
		r->p->default_type = profile_find_type(r->p, def);
		if (r->p->default_type == (size_t)-1)
			return bad(r, "default_type '%s' is not a value type",
				   shown(def, buf, sizeof(buf)));
	}
	return 0;
}

static char *dup_str(const struct jval *obj, const char *key)
{
	const char *s = json_get_str(obj, key);

	return s ? xstrdup(s) : NULL;
}

/* "sample_mean": [LO, HI], when allocator calls were sampled. */
static void read_sample_mean(const struct jval *root, struct prof_run *pr)
{
	const struct jval *m = json_get(root, "sample_mean", J_ARR);

	if (!m || m->n != 2 || m->items[0].type != J_NUM || m->items[1].type != J_NUM ||
	    m->items[0].num <= 0 || m->items[1].num < m->items[0].num)
		return;
	pr->sample_lo = (uint64_t)m->items[0].num;
	pr->sample_hi = (uint64_t)m->items[1].num;
}

static void read_run(struct reader *r, const struct jval *root)
{
	const struct jval *run = json_get(root, "run", J_OBJ), *st, *nf, *longest;
	struct prof_run *pr = &r->p->run;

	if (!run)
		return;
	r->p->have_run = 1;
	pr->syscalls = dup_str(run, "syscalls");
	pr->stacks = flag(run, "stacks");
	pr->held = flag(run, "held");
	pr->stacks_folded = num_or(run, "stacks_folded", 0);
	st = json_get(run, "stops", J_OBJ);
	pr->stops = num_or(st, "total", 0);
	pr->stops_seccomp = num_or(st, "seccomp", 0);
	pr->stops_syscall = num_or(st, "syscall", 0);
	pr->stops_breakpoint = num_or(st, "breakpoint", 0);
	pr->stops_signal = num_or(st, "signal", 0);
	pr->stops_other = num_or(st, "other", 0);
	longest = st ? json_get(st, "longest", J_OBJ) : NULL;
	if (longest && (pr->longest_stop_kind = dup_str(longest, "kind"))) {
		const struct jval *over = json_get(st, "over_ms", J_ARR);

		pr->longest_stop_ns = num_or(longest, "ns", 0);
		pr->longest_stop_pid = (int)num_or(longest, "pid", 0);
		pr->longest_stop_tid = (int)num_or(longest, "tid", 0);
		for (size_t i = 0; over && i < over->n && i < 3; i++)
			if (over->items[i].type == J_NUM)
				pr->stops_over_ms[i] = (uint64_t)over->items[i].num;
	}
	pr->fault_period = num_or(root, "fault_period", 0);
	read_sample_mean(root, pr);
	nf = json_get(root, "probes_not_found", J_ARR);
	for (size_t i = 0; nf && i < nf->n; i++) {
		if (nf->items[i].type != J_STR)
			continue;
		pr->unfound = xrealloc(pr->unfound, (pr->nunfound + 1) * sizeof(*pr->unfound));
		pr->unfound[pr->nunfound++] = xstrdup(nf->items[i].str);
	}
	nf = json_get(root, "not_seen", J_ARR);
	for (size_t i = 0; nf && i < nf->n; i++) {
		if (nf->items[i].type != J_STR)
			continue;
		pr->notes = xrealloc(pr->notes, (pr->nnotes + 1) * sizeof(*pr->notes));
		pr->notes[pr->nnotes++] = xstrdup(nf->items[i].str);
	}
}

/* "peaks": { "alloc": { "bytes": N, "nanos": T }, "mappings": ... } */
static void read_peaks(const struct jval *root, struct profile *p)
{
	const struct jval *peaks = json_get(root, "peaks", J_OBJ);

	for (int i = 0; peaks && i < PROF_NPEAKS; i++) {
		const struct jval *pk = json_get(peaks, prof_peak_names[i], J_OBJ);
		const struct jval *bytes = json_get(pk, "bytes", J_NUM);
		const struct jval *nanos = json_get(pk, "nanos", J_NUM);

		if (!bytes || bytes->num <= 0 || !nanos || nanos->num < 0)
			continue;
		p->peaks[i].bytes = (uint64_t)bytes->num;
		p->peaks[i].nanos = nanos->num;
	}
}

static void read_vm(struct prof_process *pr, const struct jval *vm, const char *when, int i)
{
	const struct jval *o = json_get(vm, when, J_OBJ);

	pr->vm_size[i] = num_or(o, "size", 0);
	pr->vm_rss[i] = num_or(o, "rss", 0);
	pr->vm_data[i] = num_or(o, "data", 0);
}

/* An event's "counted": which of its figures the stubs counted (profile.h). */
static int counted_of(const char *s)
{
	int c = 0;

	while (s && *s) {
		size_t n = strcspn(s, " ");

		if (n == 5 && strncmp(s, "calls", 5) == 0)
			c |= PROF_COUNTED_CALLS;
		else if (n == 8 && strncmp(s, "acquired", 8) == 0)
			c |= PROF_COUNTED_BYTES;
		s += n + (s[n] == ' ');
	}
	return c;
}

static int read_processes(struct reader *r, const struct jval *root)
{
	const struct jval *procs = json_get(root, "processes", J_ARR);
	struct profile *p = r->p;

	if (!procs)
		return 0;
	p->processes = xcalloc(procs->n ? procs->n : 1, sizeof(*p->processes));
	for (size_t i = 0; i < procs->n; i++) {
		const struct jval *o = &procs->items[i], *vm, *events;
		struct prof_process *pr = &p->processes[p->nprocesses++];

		if (o->type != J_OBJ || !json_get(o, "pid", J_NUM))
			return bad(r, "process %zu is malformed", i);
		pr->pid = (pid_t)num_or(o, "pid", 0);
		pr->ppid = (pid_t)num_or(o, "ppid", 0);
		pr->comm = dup_str(o, "comm");
		pr->status = dup_str(o, "status");
		vm = json_get(o, "vm", J_OBJ);
		pr->have_vm = vm != NULL;
		read_vm(pr, vm, "start", 0);
		read_vm(pr, vm, "end", 1);
		{
			const struct jval *left = json_get(vm, "left", J_OBJ);

			pr->left_size = num_or(left, "size", 0);
			pr->left_data = num_or(left, "data", 0);
		}
		pr->filtered = num_or(o, "filtered", 0);
		pr->unknown_frees = num_or(o, "unknown_frees", 0);
		pr->from_start = num_or(o, "from_start", 0) != 0;
		pr->refrees = num_or(o, "refrees", 0);
		pr->live_blocks = num_or(o, "live_blocks", 0);
		pr->live_bytes = num_or(o, "live_bytes", 0);
		pr->inherited_blocks = num_or(o, "inherited_blocks", 0);
		pr->inherited_bytes = num_or(o, "inherited_bytes", 0);
		events = json_get(o, "events", J_ARR);
		if (!events)
			continue;
		pr->events = xcalloc(events->n ? events->n : 1, sizeof(*pr->events));
		for (size_t k = 0; k < events->n; k++) {
			const struct jval *e = &events->items[k];
			struct prof_event_totals *t = &pr->events[pr->nevents];

			if (!json_get_str(e, "event"))
				return bad(r, "process %zu: event %zu has no name", i, k);
			pr->nevents++;
			t->event = dup_str(e, "event");
			t->calls = num_or(e, "calls", 0);
			t->failed = num_or(e, "failed", 0);
			t->acquired = num_or(e, "acquired", 0);
			t->released = num_or(e, "released", 0);
			t->anon = num_or(e, "anon", 0);
			t->file = num_or(e, "file", 0);
			t->sampled = json_get(e, "samples", J_NUM) != NULL;
			t->samples = num_or(e, "samples", 0);
			t->lost = num_or(e, "lost", 0);
			t->throttles = num_or(e, "throttles", 0);
			t->neighbour = num_or(e, "neighbour", 0);
			t->neighbour_bytes = num_or(e, "neighbour_bytes", 0);
			t->data = json_get(e, "data", J_NUM) ? json_get(e, "data", J_NUM)->num : 0;
			t->resident = num_or(e, "resident", 0);
			t->counted = counted_of(json_get_str(e, "counted"));
		}
	}
	return 0;
}

/* Version 2: the tables, in order, through index maps. */
static int read_tables(struct reader *r, const struct jval *maps, const struct jval *fns,
		       const struct jval *locs)
{
	struct prof_line *lines = NULL;
	size_t alines = 0;
	int ret = -1;

	r->nmap = maps->n;
	r->map_of = xcalloc(maps->n + 1, sizeof(size_t));
	for (size_t i = 0; i < maps->n; i++) {
		const struct jval *m = &maps->items[i];
		uint64_t start, limit, offset;

		if (hex_member(m, "start", &start) < 0 || hex_member(m, "limit", &limit) < 0 ||
		    hex_member(m, "offset", &offset) < 0)
			return bad(r, "mapping %zu is malformed", i);
		r->map_of[i] = profile_add_mapping(r->p, start, limit, offset,
						   json_get_str(m, "file"),
						   json_get_str(m, "build_id"));
	}
	r->nfn = fns->n;
	r->fn_of = xcalloc(fns->n + 1, sizeof(size_t));
	for (size_t i = 0; i < fns->n; i++) {
		const struct jval *fn = &fns->items[i];

		if (fn->type != J_OBJ)
			return bad(r, "function %zu is malformed", i);
		r->fn_of[i] = profile_add_function(r->p, json_get_str(fn, "name"),
						   json_get_str(fn, "system_name"),
						   json_get_str(fn, "file"));
	}
	r->nloc = locs->n;
	r->loc_of = xcalloc(locs->n + 1, sizeof(size_t));
	for (size_t i = 0; i < locs->n; i++) {
		const struct jval *l = &locs->items[i], *ln = json_get(l, "lines", J_ARR);
		const struct jval *mv = json_get(l, "mapping", J_NUM);
		size_t mapping = (size_t)-1, k;
		uint64_t address;

		if (hex_member(l, "address", &address) < 0 || !ln ||
		    (!mv && !json_get(l, "mapping", J_NULL)) ||
		    (mv && index_item(mv, r->nmap, &mapping) < 0))
			goto malformed;
		if (mv)
			mapping = r->map_of[mapping];
		lines = xgrowarray(lines, &alines, ln->n + 1, sizeof(*lines));
		for (k = 0; k < ln->n; k++) {
			const struct jval *pair = &ln->items[k];
			size_t fn;

			if (pair->type != J_ARR || pair->n != 2 ||
			    index_item(&pair->items[0], r->nfn, &fn) < 0 ||
			    pair->items[1].type != J_NUM)
				goto malformed;
			lines[k].function = r->fn_of[fn];
			lines[k].line = pair->items[1].num;
		}
		r->loc_of[i] = profile_add_location(r->p, address, mapping, lines, ln->n);
		continue;
malformed:
		bad(r, "location %zu is malformed", i);
		goto out;
	}
	ret = 0;
out:
	free(lines);
	return ret;
}

/*
 * Version 1: a sample's locations from its frames (leaf first, inline
 * levels innermost first, each but a location's last "inlined").
 */
static int frames_locations(struct reader *r, const struct jval *frames, size_t **locs,
			    size_t *alocs, size_t *nlocs)
{
	struct prof_line *lines = NULL;
	size_t nlines = 0, alines = 0;

	for (size_t i = 0; i < frames->n; i++) {
		const struct jval *fr = &frames->items[i];
		const char *fn = json_get_str(fr, "function");
		const char *module = json_get_str(fr, "module");
		const struct jval *line = json_get(fr, "line", J_NUM);
		size_t mapping = (size_t)-1;
		uint64_t address = 0;

		if (fr->type != J_OBJ) {
			free(lines);
			return -1;
		}
		hex_member(fr, "address", &address);
		if (fn) {
			lines = xgrowarray(lines, &alines, nlines + 1, sizeof(*lines));
			lines[nlines].function = profile_add_function(r->p, fn,
				json_get_str(fr, "system_name"), json_get_str(fr, "file"));
			lines[nlines].line = line ? line->num : 0;
			nlines++;
		}
		if (flag(fr, "inlined"))
			continue;
		if (module) {
			/* module-relative: the folded writer's offsets */
			mapping = profile_add_mapping(r->p, 0, 0, 0, module, NULL);
			address = 0;
			hex_member(fr, "module_offset", &address);
		}
		*locs = xgrowarray(*locs, alocs, *nlocs + 1, sizeof(**locs));
		(*locs)[(*nlocs)++] = profile_add_location(r->p, address, mapping, lines, nlines);
		nlines = 0;
	}
	free(lines);
	return 0;
}

static int read_samples(struct reader *r, const struct jval *root, int tables)
{
	const struct jval *samples = json_get(root, "samples", J_ARR);
	struct profile *p = r->p;
	size_t *locs = NULL, alocs = 0, nlocs, alloc_of = 0;
	int64_t *values = xcalloc(p->ntypes + 1, sizeof(*values));
	int ret = -1;

	if (!samples) {
		bad(r, "no samples: not a memtap recording");
		goto out;
	}
	for (size_t i = 0; i < samples->n; i++) {
		const struct jval *sm = &samples->items[i];
		const struct jval *vals = json_get(sm, "values", J_ARR);
		const struct jval *pid = json_get(sm, "pid", J_NUM);
		const struct jval *lv = json_get(sm, "locations", J_ARR);
		const struct jval *frames = json_get(sm, "frames", J_ARR);

		if (!vals || vals->n != p->ntypes || !pid || pid->num < 0 || pid->num > INT32_MAX)
			goto malformed;
		for (size_t t = 0; t < p->ntypes; t++) {
			if (vals->items[t].type != J_NUM)
				goto malformed;
			values[t] = vals->items[t].num;
		}
		nlocs = 0;
		if (tables) {
			if (!lv)
				goto malformed;
			locs = xgrowarray(locs, &alocs, lv->n + 1, sizeof(*locs));
			for (size_t k = 0; k < lv->n; k++) {
				if (index_item(&lv->items[k], r->nloc, &locs[k]) < 0)
					goto malformed;
				locs[k] = r->loc_of[locs[k]];
			}
			nlocs = lv->n;
		} else if (!frames || frames_locations(r, frames, &locs, &alocs, &nlocs) < 0) {
			goto malformed;
		}
		r->sample_of = xgrowarray(r->sample_of, &alloc_of, r->nsample + 1,
					  sizeof(*r->sample_of));
		r->sample_of[r->nsample++] = profile_add_sample(p, locs, nlocs, values,
			(pid_t)pid->num, json_get_str(sm, "comm"), json_get_str(sm, "event"));
		continue;
malformed:
		bad(r, "sample %zu is malformed", i);
		goto out;
	}
	ret = 0;
out:
	free(values);
	free(locs);
	return ret;
}

/* Numbers items[0 .. n) of array a, each >= 0, into v; -1 if not so. */
static int read_tuple(const struct jval *a, size_t n, uint64_t *v)
{
	if (a->type != J_ARR || a->n != n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (a->items[i].type != J_NUM || a->items[i].num < 0)
			return -1;
		v[i] = (uint64_t)a->items[i].num;
	}
	return 0;
}

/* One interval of version 3; -1 after bad(). */
static int read_interval(struct reader *r, const struct jval *iv, size_t i, int64_t after)
{
	struct prof_interval *pi = &r->p->intervals[i];
	const struct jval *end = json_get(iv, "end_nanos", J_NUM);
	const struct jval *vm = json_get(iv, "vm", J_ARR);
	const struct jval *ch = json_get(iv, "changes", J_ARR);
	const struct jval *cap = json_get(iv, "captured", J_NUM);
	uint64_t v[5];

	if (iv->type != J_OBJ || !end || !vm || !ch || !cap)
		return bad(r, "interval %zu is truncated (end_nanos, captured, vm, changes)", i + 1);
	if (end->num <= after)
		return bad(r, "interval %zu is out of order (it ends at %lld ns, not after %lld ns)",
			   i + 1, (long long)end->num, (long long)after);
	pi->end_nanos = end->num;
	pi->captured = cap->num;
	pi->vm = xcalloc(vm->n + 1, sizeof(*pi->vm));
	for (size_t k = 0; k < vm->n; k++, pi->nvm++) {
		if (read_tuple(&vm->items[k], 4, v) < 0 || v[0] > INT32_MAX)
			return bad(r, "interval %zu: vm entry %zu is malformed", i + 1, k + 1);
		pi->vm[k] = (struct prof_vm_point){ (pid_t)v[0], v[1], v[2], v[3] };
	}
	pi->changes = xcalloc(ch->n + 1, sizeof(*pi->changes));
	for (size_t k = 0; k < ch->n; k++, pi->nchanges++) {
		struct prof_change *c = &pi->changes[k];

		if (read_tuple(&ch->items[k], 5, v) < 0 || v[0] >= r->nsample ||
		    (k && v[0] <= (uint64_t)ch->items[k - 1].items[0].num))
			return bad(r, "interval %zu: change %zu is malformed (want [sample, calls, "
				   "acquired, released, held], in order of sample)", i + 1, k + 1);
		*c = (struct prof_change){ r->sample_of[v[0]], v[1], v[2], v[3], v[4] };
	}
	profile_interval_merge(pi);
	return 0;
}

/* Version 3: the intervals of an -i run, when there. */
static int read_intervals(struct reader *r, const struct jval *root)
{
	const struct jval *ivs = json_get(root, "intervals", J_ARR);
	int64_t after = 0;

	if (!ivs)
		return 0;
	r->p->intervals_held = flag(root, "intervals_held");
	r->p->intervals = xcalloc(ivs->n + 1, sizeof(*r->p->intervals));
	for (size_t i = 0; i < ivs->n; i++) {
		r->p->nintervals++;
		if (read_interval(r, &ivs->items[i], i, after) < 0)
			return -1;
		after = r->p->intervals[i].end_nanos;
	}
	return 0;
}

int recording_parse(const char *name, const char *text, size_t len, struct profile *p)
{
	static const char *const skip_frames[] = { "frames", NULL };
	struct reader r = { .name = name, .p = p };
	struct jval root;
	const struct jval *maps, *fns, *locs, *version;
	const char *format;
	int ret = -1;

	memset(p, 0, sizeof(*p));
	/* version 2: the tables make the frames redundant; version 1 needs them */
	if (json_parse_skip(text, len, &root, skip_frames, r.err, sizeof(r.err)) == 0 &&
	    !json_get(&root, "locations", J_ARR)) {
		jval_release(&root);
		json_parse(text, len, &root, r.err, sizeof(r.err));
	}
	if (r.err[0]) {
		error_msg("'%s': not a valid recording: %s", name, r.err);
		return -1;
	}
	format = json_get_str(&root, "format");
	version = json_get(&root, "version", J_NUM);
	if (!format || strcmp(format, "memtap-profile")) {
		bad(&r, "not a memtap recording (no \"format\": \"memtap-profile\")");
		goto out;
	}
	if (!version || version->num < 1 || version->num > 3) {
		bad(&r, "recording version %lld not supported (1 to 3)",
		    version ? (long long)version->num : 0LL);
		goto out;
	}
	p->time_nanos = (int64_t)num_or(&root, "time_nanos", 0);
	p->duration_nanos = (int64_t)num_or(&root, "duration_nanos", 0);
	maps = json_get(&root, "mappings", J_ARR);
	fns = json_get(&root, "functions", J_ARR);
	locs = json_get(&root, "locations", J_ARR);
	if (read_types(&r, &root) < 0 || read_processes(&r, &root) < 0)
		goto out;
	read_run(&r, &root);
	read_peaks(&root, p);
	if (maps && fns && locs && read_tables(&r, maps, fns, locs) < 0)
		goto out;
	if (read_samples(&r, &root, maps && fns && locs) < 0 || read_intervals(&r, &root) < 0)
		goto out;
	ret = 0;
out:
	if (ret < 0) {
		error_msg("'%s': %s", name, r.err);
		profile_release(p);
	}
	free(r.map_of);
	free(r.fn_of);
	free(r.loc_of);
	free(r.sample_of);
	jval_release(&root);
	return ret;
}

int recording_read(const char *name, FILE *f, struct profile *p)
{
	size_t cap = 65536, n = 0, r;
	struct stat st;
	char *buf;
	int ret = -1;

	memset(p, 0, sizeof(*p));
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size > JSON_MAX_INPUT) {
		error_msg("'%s': larger than %zu bytes: not a recording memtap reads", name,
			  JSON_MAX_INPUT);
		return -1;
	}
	buf = xmalloc(cap);
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n > JSON_MAX_INPUT) {
			error_msg("'%s': larger than %zu bytes: not a recording memtap reads",
				  name, JSON_MAX_INPUT);
			goto out;
		}
		if (n == cap)
			buf = xrealloc(buf, cap *= 2);
	}
	if (ferror(f)) {
		perror_msg("cannot read '%s'", name);
		goto out;
	}
	ret = recording_parse(name, buf, n, p);
out:
	free(buf);
	return ret;
}

int recording_load(const char *path, struct profile *p)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	int ret;

	if (!f) {
		memset(p, 0, sizeof(*p));
		perror_msg("cannot open '%s'", path);
		return -1;
	}
	ret = recording_read(path, f, p);
	if (f != stdin)
		fclose(f);
	return ret;
}

const char *const output_format_names[6] = { "text", "folded", "svg", "pprof", "json", "html" };

int output_format_parse(const char *name)
{
	for (int i = 0; i < 6; i++)
		if (!strcmp(name, output_format_names[i]))
			return i;
	return -1;
}

int output_format_from_path(const char *path)
{
	static const struct { const char *suffix; int format; } suffixes[] = {
		{ ".txt", 0 }, { ".folded", 1 }, { ".svg", 2 }, { ".pb.gz", 3 },
		{ ".pprof", 3 }, { ".json", 4 }, { ".html", 5 },
	};
	size_t len = strlen(path);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i].suffix);

		if (len > sl && !strcmp(path + len - sl, suffixes[i].suffix))
			return suffixes[i].format;
	}
	return -1;
}

/* ---- memtap report ---- */

/* Select the view's value type as the default; -1 after a message. */
static int select_view(const char *path, struct profile *p, int weight, int net, int leaks)
{
	const char *type;
	size_t t;

	if (!weight && !net && !leaks)
		return 0;
	if (leaks && p->have_run && !p->run.held) {
		/*
		 * Why not, in the order that tells the fix: sampled calls'
		 * frees are only counted, whatever -e chose, unless --leaks
		 * had the stubs follow each sampled block; an -i run keeps
		 * what is held only with --leaks; else only some of the
		 * calls that release memory were recorded.
		 */
		if (p->run.sample_lo)
			error_msg("'%s': what was held at the end is not in this recording: its "
				  "allocator calls were sampled, and the blocks were not followed "
				  "to their frees (record with --leaks, which follows each sampled "
				  "block: held bytes estimated; or with --exact --leaks)", path);
		else if (p->nintervals)
			error_msg("'%s': what was held at the end is not in this recording: an -i "
				  "run keeps it only with --leaks (record with --leaks)", path);
		else
			error_msg("'%s': what was held at the end is not in this recording (record "
				  "with --leaks, or with every call that releases memory selected)",
				  path);
		return -1;
	}
	type = view_type(weight, net, leaks, 0);
	t = profile_find_type(p, type);
	if (t == (size_t)-1) {
		error_msg("'%s': the recording has no value type '%s'", path, type);
		return -1;
	}
	p->default_type = t;
	return 0;
}

/* One writer with its profile and options, for outfile_write(). */
struct report_write {
	int (*write)(FILE *f, const struct profile *p, const struct output_options *o);
	const struct profile *p;
	const struct output_options *o;
};

static int write_view(FILE *f, const void *arg)
{
	const struct report_write *rw = arg;

	return rw->write(f, rw->p, rw->o);
}

int report_recording(const char *path, int format, int weight, int net, int leaks,
		     int suspects, const struct output_options *o, const char *output)
{
	int (*const writers[])(FILE *, const struct profile *, const struct output_options *) = {
		write_text, write_folded, write_svg, write_pprof, write_json, write_html,
	};
	struct report_write rw;
	struct profile p;
	int ret = -1;

	if (recording_load(path, &p) < 0)
		return -1;
	if (select_view(path, &p, weight, net, leaks) < 0)
		goto out;
	if (suspects && !p.nintervals) {
		error_msg("'%s': no intervals in this recording (record with -i SECONDS --record "
			  "FILE)", path);
		goto out;
	}
	rw.write = suspects ? write_suspects : writers[format];
	rw.p = &p;
	rw.o = o;
	if (outfile_write(output, write_view, &rw) < 0)
		goto out;
	ret = 0;
out:
	profile_release(&p);
	return ret;
}

/*
 * out-text.c - the text report, a pure function of the profile: the
 * summary (the run, then per process its status, a table of calls,
 * failed calls, acquired and released bytes per event kind, the /proc
 * figures and the account of the captured bytes against VmSize growth),
 * then for each event kind the heaviest stacks, leaf first.
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

#include "report/events.h"
#include "report/output.h"
#include "util/xmalloc.h"

static const struct prof_event_totals *find_event(const struct prof_process *pr,
						  const char *event)
{
	for (size_t k = 0; k < pr->nevents; k++)
		if (pr->events[k].event && !strcmp(pr->events[k].event, event))
			return &pr->events[k];
	return NULL;
}

static int is_syscall_event(const char *e)
{
	return !strcmp(e, "brk") || !strcmp(e, "mmap") || !strcmp(e, "munmap") ||
	       !strcmp(e, "mremap");
}

static int is_alloc_event(const char *e)
{
	for (int k = EV_MALLOC; k <= EV_PVALLOC; k++)
		if (!strcmp(e, event_kind_names[k]))
			return 1;
	return 0;
}

static void print_vm_row(FILE *f, const char *name, int have, uint64_t start, uint64_t end)
{
	if (!have) {
		fprintf(f, "  %-8s %16s %16s %16s\n", name, "-", "-", "-");
		return;
	}
	fprintf(f, "  %-8s %16" PRIu64 " %16" PRIu64 " %+16" PRId64 "\n", name, start, end,
		(int64_t)(end - start));
}

static void account_row(FILE *f, const char *name, int64_t bytes, const char *note)
{
	fprintf(f, "  %-24s %+16" PRId64 "%s%s\n", name, bytes, note ? "  " : "",
		note ? note : "");
}

/* The sum of e's data (VmData change) over the events named. */
static int64_t data_of(const struct prof_process *pr, const char *const *names)
{
	int64_t sum = 0;

	for (; *names; names++) {
		const struct prof_event_totals *e = find_event(pr, *names);

		if (e)
			sum += e->data;
	}
	return sum;
}

/*
 * With -e mprotect: VmData (private writable memory) from brk, mmap,
 * mremap and munmap of such memory, and mprotect.
 */
static void print_account_data(FILE *f, const struct prof_process *pr)
{
	static const char *const maps[] = { "mmap", "mremap", "munmap", NULL };
	static const char *const heap[] = { "brk", NULL };
	static const char *const prot[] = { "mprotect", NULL };
	int64_t captured, growth;

	if (!find_event(pr, "mprotect") || !pr->have_vm)
		return;
	captured = data_of(pr, heap) + data_of(pr, maps) + data_of(pr, prot);
	growth = (int64_t)(pr->vm_data[1] - pr->vm_data[0]);
	account_row(f, "VmData: heap (brk)", data_of(pr, heap), NULL);
	account_row(f, "  private writable maps", data_of(pr, maps), "(mmap, mremap, munmap)");
	account_row(f, "  mprotect", data_of(pr, prot), NULL);
	account_row(f, "  captured", captured, NULL);
	if (pr->left_data) {
		account_row(f, "  memtap's stubs, ring", (int64_t)pr->left_data,
			    "(mapped by memtap, left in the process)");
		captured += (int64_t)pr->left_data;
	}
	account_row(f, "  VmData growth", growth, NULL);
	account_row(f, "  unattributed", growth - captured, growth == captured ? NULL :
		    "(before tracing, exec, calls not traced)");
}

/*
 * With a fault kind: VmRSS from the pages faulted in, less the resident
 * pages given back (madvise, munmap).
 */
static void print_account_rss(FILE *f, const struct prof_process *pr)
{
	const struct prof_event_totals *faults = find_event(pr, "faults"),
		*madvise = find_event(pr, "madvise"), *munmap = find_event(pr, "munmap"),
		*mmap = find_event(pr, "mmap"), *mremap = find_event(pr, "mremap");
	int64_t captured, growth, over = 0;

	if (!faults)
		faults = find_event(pr, "minor-faults");
	if (!faults || !pr->have_vm)
		return;
	captured = (int64_t)faults->acquired;
	account_row(f, "VmRSS: faulted in", (int64_t)faults->acquired, NULL);
	if (madvise) {
		account_row(f, "  madvise", -(int64_t)madvise->resident, "(resident bytes)");
		captured -= (int64_t)madvise->resident;
	}
	if (munmap) {
		account_row(f, "  munmap", -(int64_t)munmap->resident, "(resident bytes)");
		captured -= (int64_t)munmap->resident;
	}
	over = (int64_t)((mmap ? mmap->resident : 0) + (mremap ? mremap->resident : 0));
	if (over) {
		account_row(f, "  mapped over", -over, "(resident bytes, MAP_FIXED, MREMAP_FIXED)");
		captured -= over;
	}
	growth = (int64_t)(pr->vm_rss[1] - pr->vm_rss[0]);
	account_row(f, "  captured", captured, NULL);
	account_row(f, "  VmRSS growth", growth, NULL);
	account_row(f, "  unattributed", growth - captured, growth == captured ? NULL :
		    "(file pages mapped around a fault, reclaim, swap, huge pages, "
		    "calls not traced)");
}

/*
 * The reconciled account: what the traced calls add up to, next to the
 * kernel's VmSize growth over the same interval, and the remainder with
 * the reasons it can have.  sampled: 0 every allocator call recorded, 1
 * sampled (blocks not followed), 2 sampled with each sampled block
 * followed to its free (--leaks).
 */
static void print_account(FILE *f, const struct prof_process *pr, int sampled)
{
	const struct prof_event_totals *brk = find_event(pr, "brk"),
		*mmap = find_event(pr, "mmap"), *munmap = find_event(pr, "munmap"),
		*mremap = find_event(pr, "mremap");
	int64_t captured = 0;
	int syscalls = brk || mmap || munmap || mremap, alloc = 0;
	int complete = brk && mmap && munmap && mremap && !pr->filtered;

	int more = find_event(pr, "mprotect") || find_event(pr, "faults") ||
		   find_event(pr, "minor-faults");

	for (size_t k = 0; k < pr->nevents; k++)
		alloc |= is_alloc_event(pr->events[k].event);
	if (!syscalls && !alloc && !more)
		return;
	fprintf(f, "  %-24s %16s\n", "ACCOUNT", "BYTES");
	if (alloc) {
		char note[96];

		snprintf(note, sizeof(note), "in %" PRIu64 " blocks not freed%s",
			 pr->live_blocks - pr->inherited_blocks,
			 sampled == 1 ? " (sampled calls are not followed)" :
			 sampled ? " (estimated from the sampled blocks)" : "");
		account_row(f, "allocator, live", (int64_t)(pr->live_bytes - pr->inherited_bytes),
			    note);
		if (pr->inherited_blocks) {
			snprintf(note, sizeof(note), "in %" PRIu64 " blocks from the parent, not freed",
				 pr->inherited_blocks);
			account_row(f, "inherited at fork", (int64_t)pr->inherited_bytes, note);
		}
		if (pr->unknown_frees && pr->from_start)
			fprintf(f, "  %-24s %16" PRIu64 "  (blocks the allocator allocated "
				"itself, such as glibc's thread cache: not among the calls)\n",
				"frees of unknown blocks", pr->unknown_frees);
		else if (pr->unknown_frees)
			fprintf(f, "  %-24s %16" PRIu64 "  (allocated before tracing, by a "
				"function not probed or by the allocator itself)\n",
				"frees of unknown blocks", pr->unknown_frees);
	}
	if (!syscalls)
		goto more;
	if (brk) {
		int64_t heap = (int64_t)brk->acquired - (int64_t)brk->released;

		account_row(f, "heap (brk)", heap, NULL);
		captured += heap;
	}
	if (mmap) {
		account_row(f, "anonymous mmap", (int64_t)mmap->anon, NULL);
		account_row(f, "file-backed mmap", (int64_t)mmap->file, NULL);
		captured += (int64_t)mmap->acquired - (int64_t)mmap->released;
		if (mmap->released)
			account_row(f, "mapped over", -(int64_t)mmap->released,
				    "(MAP_FIXED over mappings)");
	}
	if (munmap) {
		account_row(f, "munmap", -(int64_t)munmap->released, NULL);
		captured -= (int64_t)munmap->released;
	}
	if (mremap) {
		int64_t net = (int64_t)mremap->acquired - (int64_t)mremap->released;

		account_row(f, "mremap", net, NULL);
		captured += net;
	}
	account_row(f, "captured", captured, complete ? NULL :
		    "(some events not selected or filtered)");
	if (pr->left_size) {
		account_row(f, "memtap's stubs, ring", (int64_t)pr->left_size,
			    "(mapped by memtap, left in the process)");
		captured += (int64_t)pr->left_size;
	}
	if (pr->have_vm) {
		int64_t growth = (int64_t)(pr->vm_size[1] - pr->vm_size[0]);

		account_row(f, "VmSize growth", growth, NULL);
		account_row(f, "unattributed", growth - captured, growth == captured ? NULL :
			    "(mapped or unmapped before tracing or without these calls, exec, "
			    "madvise)");
	}
more:
	print_account_data(f, pr);
	print_account_rss(f, pr);
}

/*
 * A fault kind's samples: calls are its exact count (the counting
 * event), the stacks its samples scaled to it; then, when some were,
 * the faults (and bytes) that had no sample of their own and were put
 * on the stack sampled next to them.
 */
static void print_sampling(FILE *f, const struct prof_event_totals *e, uint64_t period)
{
	fprintf(f, "  %s: %" PRIu64 " counted, %" PRIu64 " sampled (one in %" PRIu64 "), %"
		PRIu64 " lost, %" PRIu64 " throttled", e->event, e->calls, e->samples,
		period ? period : 1, e->lost, e->throttles);
	if (e->samples && e->calls > e->samples && (e->throttles || period > 1))
		fprintf(f, ": stacks scaled x%.3f", (double)e->calls / (double)e->samples);
	else if (e->calls > e->samples && e->neighbour)
		fprintf(f, ": %" PRIu64 " without a sample", e->calls - e->samples);
	else if (e->calls > e->samples)
		fprintf(f, ": %" PRIu64 " without a sample, each on the stack sampled next to it "
			"(or none)", e->calls - e->samples);
	fputc('\n', f);
	if (e->neighbour)
		fprintf(f, "  %s: %" PRIu64 " faults, %" PRIu64 " bytes put on the stack sampled "
			"next to them (their samples lost)\n", e->event, e->neighbour,
			e->neighbour_bytes);
}

/* Did the stubs count some process's allocator calls (profile.h: counted)? */
static int any_counted(const struct profile *p)
{
	for (size_t i = 0; i < p->nprocesses; i++)
		for (size_t k = 0; k < p->processes[i].nevents; k++)
			if (p->processes[i].events[k].counted)
				return 1;
	return 0;
}

/* Allocator calls sampled in the target: what the numbers are. */
static void print_sampled(FILE *f, const struct profile *p)
{
	const struct prof_run *r = &p->run;
	const char *what = r->held ? "their calls, bytes and the bytes held" :
				     "their calls and bytes";

	if (!r->sample_lo)
		return;
	fprintf(f, "memtap: allocator calls sampled, one per %" PRIu64 " bytes allocated on "
		"average", r->sample_lo);
	if (r->sample_hi != r->sample_lo)
		fprintf(f, " (--overhead: up to %" PRIu64 ")", r->sample_hi);
	if (any_counted(p))
		fprintf(f, ": each function's calls and bytes acquired counted in the process, "
			"exact; the stacks' %s estimates", what + 6);
	else
		fprintf(f, ": %s are estimates", what);
	if (r->held)
		fprintf(f, ", each sampled block followed to its free (--exact: every call)\n");
	else
		fprintf(f, ", the bytes freed unknown (--exact: every call)\n");
}

static void print_process(FILE *f, const struct prof_process *pr, uint64_t period,
			  int sampled)
{
	struct prof_event_totals total = { 0 };
	int w = 8;

	/* allocator names are longer than syscall names */
	for (size_t k = 0; k < pr->nevents; k++)
		if (!is_syscall_event(pr->events[k].event))
			w = 14;
	fprintf(f, "\nprocess %d (%s), %s", (int)pr->pid, pr->comm ? pr->comm : "?",
		pr->status ? pr->status : "?");
	if (pr->ppid)
		fprintf(f, ", child of %d", (int)pr->ppid);
	fprintf(f, "\n  %-*s %8s %8s %16s %16s\n", w, "EVENT", "CALLS", "FAILED",
		"ACQUIRED", "RELEASED");
	for (size_t k = 0; k < pr->nevents; k++) {
		const struct prof_event_totals *e = &pr->events[k];

		fprintf(f, "  %-*s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n",
			w, e->event, e->calls, e->failed, e->acquired, e->released);
		if (!strcmp(e->event, "mmap") && e->acquired) {
			fprintf(f, "    %-24s %16" PRIu64 "\n", "anonymous", e->anon);
			fprintf(f, "    %-24s %16" PRIu64 "\n", "file-backed", e->file);
		}
		total.calls += e->calls;
		total.failed += e->failed;
		total.acquired += e->acquired;
		total.released += e->released;
	}
	fprintf(f, "  %-*s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n", w, "total",
		total.calls, total.failed, total.acquired, total.released);
	for (size_t k = 0; k < pr->nevents; k++)
		if (pr->events[k].sampled)
			print_sampling(f, &pr->events[k], period);
	if (pr->filtered)
		fprintf(f, "  %" PRIu64 " events under --min-size not counted\n", pr->filtered);
	fprintf(f, "  %-8s %16s %16s %16s\n", "/proc", "START", "END", "GROWTH");
	print_vm_row(f, "VmSize", pr->have_vm, pr->vm_size[0], pr->vm_size[1]);
	print_vm_row(f, "VmRSS", pr->have_vm, pr->vm_rss[0], pr->vm_rss[1]);
	print_vm_row(f, "VmData", pr->have_vm, pr->vm_data[0], pr->vm_data[1]);
	print_account(f, pr, sampled);
}

/* In the peak view: when the held bytes were highest, and how high. */
static void print_peaks(FILE *f, const struct profile *p)
{
	static const char *const what[PROF_NPEAKS] = { "allocator blocks", "mappings" };

	if (p->default_type >= p->ntypes || strcmp(p->types[p->default_type].type, "peak_space"))
		return;
	for (int i = 0; i < PROF_NPEAKS; i++)
		if (p->peaks[i].bytes)
			fprintf(f, "peak: %" PRIu64 " bytes of %s held at %" PRId64 ".%03" PRId64
				" s\n", p->peaks[i].bytes, what[i], p->peaks[i].nanos / 1000000000,
				p->peaks[i].nanos / 1000000 % 1000);
}

int write_text_summary(FILE *f, const struct profile *p)
{
	const struct prof_run *r = &p->run;
	uint64_t ns = p->duration_nanos > 0 ? (uint64_t)p->duration_nanos : 0;

	if (!p->have_run && !p->nprocesses)
		return 0;	/* a profile that is not a run's: no summary */
	fprintf(f, "memtap: %zu process%s, %" PRIu64 ".%03" PRIu64 " s, syscalls via %s, "
		"%" PRIu64 " stops (seccomp %" PRIu64 ", syscall %" PRIu64 ", breakpoint %" PRIu64
		", signal %" PRIu64 ", other %" PRIu64 ")\n",
		p->nprocesses, p->nprocesses == 1 ? "" : "es", ns / 1000000000u,
		ns / 1000000u % 1000u, r->syscalls ? r->syscalls : "none", r->stops,
		r->stops_seccomp, r->stops_syscall, r->stops_breakpoint, r->stops_signal,
		r->stops_other);
	for (size_t i = 0; i < r->nunfound; i++)
		fprintf(f, "memtap: probe '%s' was never found\n", r->unfound[i]);
	for (size_t i = 0; i < r->nnotes; i++)
		fprintf(f, "memtap: %s\n", r->notes[i]);
	if (r->stacks_folded)
		fprintf(f, "memtap: %" PRIu64 " new stack%s folded into [other]: the stack table "
			"was full (--max-stacks)\n", r->stacks_folded,
			r->stacks_folded == 1 ? "" : "s");
	print_sampled(f, p);
	for (size_t i = 0; i < p->nprocesses; i++)
		print_process(f, &p->processes[i], r->fault_period,
			      r->sample_lo ? 1 + r->held : 0);
	print_peaks(f, p);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

int write_text(FILE *f, const struct profile *p, const struct output_options *o)
{
	if (write_text_summary(f, p) < 0)
		return -1;
	if (p->have_run && !p->run.stacks)
		return 0;
	return write_text_stacks(f, p, o);
}

/* The value types a section needs, by name ((size_t)-1: absent). */
struct text_view {
	const struct profile *p;
	size_t t;		/* the view's type */
	int moved;		/* byte view: rank by acquired + released */
	size_t bytes, count, released, inuse, objects, peak;
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

void text_print_location(FILE *f, const struct profile *p, size_t loc, int mangled)
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
	} else if (v->t == v->peak) {
		fprintf(f, "%" PRId64 " bytes held at the peak", total);
	} else if (v->t == v->count) {
		fprintf(f, "%" PRId64 " call%s in %zu stack%s)\n", total, total == 1 ? "" : "s", n,
			n == 1 ? "" : "s");
		return;
	} else if (v->t == v->objects) {
		fprintf(f, "%" PRId64 " blocks held", total);
	} else {
		fprintf(f, "%+" PRId64 " %s", total, ty->unit);
	}
	fprintf(f, " in %zu stack%s", n, n == 1 ? "" : "s");
	if (v->count != (size_t)-1)
		fprintf(f, ", %" PRId64 " call%s", calls, calls == 1 ? "" : "s");
	fputs(")\n", f);
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
	} else if (v->t == v->peak) {
		/* what it held then, not what it moved over the run */
		fprintf(f, "%" PRId64 " bytes held at the peak  ", w);
	} else if (value(s, v->bytes) || value(s, v->released)) {
		print_moved(f, value(s, v->bytes), value(s, v->released), "  ");
		fputs("  ", f);
	}
	fprintf(f, "%.1f%%  ", total ? 100.0 * (double)w / (double)total : 0.0);
	if (v->count != (size_t)-1)
		fprintf(f, "%" PRId64 " call%s  ", calls, calls == 1 ? "" : "s");
	fprintf(f, "pid %d (%s)\n", (int)s->pid, s->comm ? s->comm : "?");
	if (!s->nlocs)
		fprintf(f, "        [no stack]\n");
	for (size_t k = 0; k < s->nlocs; k++)
		if (s->locs[k] < v->p->nlocations)
			text_print_location(f, v->p, s->locs[k], mangled);
}

/*
 * One section: the samples idx[0..n) of one event kind, those whose
 * weight is not 0 (by inuse_space, also those holding blocks of 0
 * bytes: malloc(0)'s blocks are blocks).  The header's calls are those of every sample of the
 * event (failed calls weigh nothing), as in the summary's CALLS column.
 */
static void print_event(FILE *f, const struct text_view *v, const size_t *idx, size_t n,
			size_t *ranked, size_t top, int mangled)
{
	const struct profile *p = v->p;
	int64_t total = 0, acquired = 0, released = 0, calls = 0;
	size_t nr = 0;

	for (size_t i = 0; i < n; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		calls += value(s, v->count);
		if (!weight(v, s) && !(v->t == v->inuse && value(s, v->objects)))
			continue;
		ranked[nr++] = idx[i];
		total += weight(v, s);
		acquired += value(s, v->bytes);
		released += value(s, v->released);
	}
	if (!nr)
		return;
	sort_view = v;
	qsort(ranked, nr, sizeof(*ranked), cmp_samples);
	print_header(f, v, p->samples[idx[0]].event ? p->samples[idx[0]].event : "?",
		     nr < top ? nr : top, nr, total, acquired, released, calls);
	for (size_t j = 0; j < nr && j < top; j++)
		print_stack(f, v, &p->samples[ranked[j]], j + 1, total, mangled);
}

/* Sections in the order of the event kinds, then other names sorted. */
static size_t event_rank(const char *e)
{
	for (size_t k = 0; k < EV_NKINDS; k++)
		if (!strcmp(e, event_kind_names[k]))
			return k;
	return EV_NKINDS;
}

static const struct profile *sort_prof;

static int cmp_events(const void *a, const void *b)
{
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const char *ea = sort_prof->samples[ia].event, *eb = sort_prof->samples[ib].event;
	size_t ra, rb;
	int c;

	ea = ea ? ea : "?";
	eb = eb ? eb : "?";
	ra = event_rank(ea);
	rb = event_rank(eb);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	c = strcmp(ea, eb);
	if (c)
		return c;
	return ia < ib ? -1 : ia > ib;
}

static int same_event(const struct prof_sample *a, const struct prof_sample *b)
{
	return !strcmp(a->event ? a->event : "?", b->event ? b->event : "?");
}

int write_text_stacks(FILE *f, const struct profile *p, const struct output_options *o)
{
	struct text_view v = { .p = p };
	size_t *idx, *ranked, top = o && o->top > 0 ? (size_t)o->top : 10;
	int mangled = o && o->no_demangle;

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
	v.peak = profile_find_type(p, "peak_space");
	v.moved = v.t == v.bytes;
	idx = xcalloc(p->nsamples + 1, sizeof(*idx));
	ranked = xcalloc(p->nsamples + 1, sizeof(*ranked));
	for (size_t i = 0; i < p->nsamples; i++)
		idx[i] = i;
	sort_prof = p;
	qsort(idx, p->nsamples, sizeof(*idx), cmp_events);
	for (size_t i = 0, j; i < p->nsamples; i = j) {
		for (j = i + 1; j < p->nsamples &&
		     same_event(&p->samples[idx[i]], &p->samples[idx[j]]); j++)
			;
		print_event(f, &v, idx + i, j - i, ranked, top, mangled);
	}
	free(ranked);
	free(idx);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

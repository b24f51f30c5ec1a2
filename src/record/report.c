/*
 * report.c - the reports of a run (report.h): one line per event
 * (--trace), and at the end (or every -i interval) the report model
 * built from the sink's state (profile_build()) written in the chosen
 * format, with
 * the text summary on standard error next to other formats, and the
 * recording (--record).  Every format is written by out-*.c from the
 * model alone, so that `memtap report` can write it again.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "record/aggregate.h"
#include "record/report.h"
#include "record/sink.h"
#include "record/timeline.h"
#include "report/output.h"
#include "report/profile.h"
#include "stack/stacks.h"
#include "stack/symbols/symbolize.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/optparse.h"
#include "util/outfile.h"
#include "util/xmalloc.h"

static struct report_config cfg;

static const char *const map_kind_names[] = {
	[MAP_KIND_NONE] = "-",
	[MAP_KIND_ANON] = "anon",
	[MAP_KIND_FILE] = "file",
};

/*
 * --trace lines go with a text report; next to folded, SVG, pprof or JSON
 * output they go to standard error, so that the file stays one format.
 */
static FILE *trace_file(void)
{
	return cfg.format == FORMAT_TEXT ? cfg.out : stderr;
}

void report_init(const struct report_config *c)
{
	cfg = *c;
	timeline_set_max(c->max_intervals);
	sink_set_trace(report_trace_event);
}

const struct report_config *report_config(void)
{
	return &cfg;
}

void report_trace_header(void)
{
	fprintf(trace_file(), "%11s %7s %7s %-15s %-6s %12s %-18s %-4s %s\n", "TIME", "PID",
		"TID", "COMM", "EVENT", "BYTES", "ADDRESS", "KIND", "CALL");
}

/*
 * An allocator function or probe: its arguments as the C ABI passed them,
 * its result, and the caller's address (fixed width, so that scripts can
 * compare addresses as strings).
 */
static void print_func_call(FILE *out, const struct event *ev)
{
	const uint64_t *a = ev->args;
	const char *name = ev->call ? ev->call : event_kind_names[ev->kind];
	int has_ret = 1;

	switch (ev->kind) {
	case EV_CALLOC:
		fprintf(out, "%s(%" PRIu64 ", %" PRIu64 ")", name, a[0], a[1]);
		break;
	case EV_REALLOC:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ")", name, a[0], a[1]);
		break;
	case EV_REALLOCARRAY:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %" PRIu64 ")", name, a[0], a[1], a[2]);
		break;
	case EV_FREE:
		fprintf(out, "%s(%#" PRIx64 ")", name, a[0]);
		has_ret = 0;
		break;
	case EV_POSIX_MEMALIGN:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %" PRIu64 ") = %d", name, a[0], a[1],
			a[2], (int)ev->ret);
		has_ret = 0;
		break;
	case EV_ALIGNED_ALLOC:
	case EV_MEMALIGN:
		fprintf(out, "%s(%" PRIu64 ", %" PRIu64 ")", name, a[0], a[1]);
		break;
	case EV_PROBE:
		fprintf(out, "%s(%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64
			", %#" PRIx64 ")", name, a[0], a[1], a[2], a[3], a[4], a[5]);
		has_ret = 0;
		break;
	default:
		fprintf(out, "%s(%" PRIu64 ")", name, a[0]);
		break;
	}
	if (has_ret)
		fprintf(out, " = %#" PRIx64, (uint64_t)ev->ret);
	fprintf(out, " from 0x%016" PRIx64 "\n", ev->caller);
}

static void print_call(FILE *out, const struct event *ev)
{
	const uint64_t *a = ev->args;

	switch (ev->kind) {
	case EV_BRK:
		fprintf(out, "%s(%#" PRIx64 ")", ev->call, a[0]);
		break;
	case EV_MMAP:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %#" PRIx64 ", %#" PRIx64 ", %d, %#" PRIx64 ")",
			ev->call, a[0], a[1], a[2], a[3], (int)a[4], a[5]);
		break;
	case EV_MUNMAP:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ")", ev->call, a[0], a[1]);
		break;
	case EV_MREMAP:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %" PRIu64 ", %#" PRIx64 ")",
			ev->call, a[0], a[1], a[2], a[3]);
		break;
	case EV_MPROTECT:
	case EV_MADVISE:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %#" PRIx64 ")", ev->call, a[0], a[1],
			a[2]);
		break;
	case EV_FAULTS:
	case EV_MINOR_FAULTS:
	case EV_MAJOR_FAULTS:
		/* a perf sample: the faulting address and where it was taken */
		fprintf(out, "fault(%#" PRIx64 ") at ip %#" PRIx64 "\n", a[0], a[1]);
		return;
	default:
		print_func_call(out, ev);
		return;
	}
	if (ev->ret < 0 && ev->ret >= -4095)
		fprintf(out, " = -1 (%s)\n", strerror((int)-ev->ret));
	else if (ev->kind == EV_MUNMAP)
		fprintf(out, " = %" PRId64 "\n", ev->ret);
	else
		fprintf(out, " = %#" PRIx64 "\n", (uint64_t)ev->ret);
}

/*
 * The frames of a stack, one per line, leaf first, for --trace; a
 * function inlined into the next line's is marked so, as in the text
 * report.
 */
/* The name of a frame that is no code: [other], [stack cut]; NULL for code. */
static const char *marker_frame(const struct stack_frame *f)
{
	if (f->module != MODULE_NONE)
		return NULL;
	if (f->addr == STACK_FRAME_OTHER_ADDR)
		return STACK_OTHER_NAME;
	if (f->addr == STACK_FRAME_CUT_ADDR)
		return STACK_CUT_NAME;
	return NULL;
}

static void print_trace_stack(FILE *out, uint32_t stack)
{
	static struct symbolizer *sz;
	const struct stack_frame *frames;
	int depth;
	char buf[512];

	if (!stack || !sink_stack_table() ||
	    stack_table_get(sink_stack_table(), stack, &frames, &depth) < 0)
		return;
	if (!sz)
		sz = symbolizer_new(cfg.no_demangle ? SYMBOLIZE_NO_DEMANGLE : 0);
	for (int d = 0; d < depth; d++) {
		const struct sym_info *si;

		if (marker_frame(&frames[d])) {
			fprintf(out, "%16s%s\n", "", marker_frame(&frames[d]));
			continue;
		}
		si = symbolizer_lookup(sz, frames[d].module, frames[d].addr);
		for (int i = 0; i < si->nframes; i++) {
			symbolizer_format(si, i, buf, sizeof(buf));
			fprintf(out, "%16s%s%s\n", "", buf, i + 1 < si->nframes ? " (inlined)" : "");
		}
	}
}

/*
 * The address column: the block or range the call handed out; for a
 * free, and a realloc that freed its block and gave none (realloc(p,
 * 0)), the block it gave back.
 */
static uint64_t trace_address(const struct event *ev)
{
	if (ev->kind == EV_FREE ||
	    ((ev->kind == EV_REALLOC || ev->kind == EV_REALLOCARRAY) && !ev->addr && !ev->failed))
		return ev->old_addr;
	return ev->addr;
}

void report_trace_event(const struct event *ev, uint32_t stack)
{
	FILE *out = trace_file();
	char bytes[32];

	if (ev->failed)
		snprintf(bytes, sizeof(bytes), "failed");
	else
		snprintf(bytes, sizeof(bytes), "%+" PRId64, ev->size);
	fprintf(out, "%4" PRIu64 ".%06" PRIu64 " %7d %7d %-15s %-6s %12s %#-18" PRIx64 " %-4s ",
		ev->time_ns / 1000000000u, ev->time_ns / 1000u % 1000000u, ev->pid, ev->tid,
		ev->comm, event_kind_names[ev->kind], bytes, trace_address(ev),
		map_kind_names[ev->map_kind]);
	print_call(out, ev);
	print_trace_stack(out, stack);
	output_check(out, NULL);
}

void proc_status_text(const struct sink_proc *p, char *buf, size_t size)
{
	if (p->exited && WIFEXITED(p->status))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(p->status));
	else if (p->exited && WIFSIGNALED(p->status))
		snprintf(buf, size, "killed by signal %d (SIG%s)", WTERMSIG(p->status),
			 sigabbrev_np(WTERMSIG(p->status)) ? sigabbrev_np(WTERMSIG(p->status)) : "?");
	else if (p->detached)
		snprintf(buf, size, "detached, still running");
	else
		snprintf(buf, size, "still running");
}

/* The writers' options from the command line. */
static void output_options_from_cfg(struct output_options *oo)
{
	memset(oo, 0, sizeof(*oo));
	oo->title = cfg.title;
	oo->inverted = cfg.inverted;
	oo->no_demangle = cfg.no_demangle;
	oo->top = cfg.top;
}

/* Write prof in format (enum out_format) to f. */
static int write_as(FILE *f, const struct profile *prof, int format)
{
	struct output_options oo;

	output_options_from_cfg(&oo);
	switch (format) {
	case FORMAT_FOLDED:
		return write_folded(f, prof, &oo);
	case FORMAT_SVG:
		return write_svg(f, prof, &oo);
	case FORMAT_PPROF:
		return write_pprof(f, prof, &oo);
	case FORMAT_JSON:
		return write_json(f, prof, &oo);
	case FORMAT_HTML:
		return write_html(f, prof, &oo);
	default:
		return write_text(f, prof, &oo);
	}
}

/* Write prof as -F says to f. */
static int write_format(FILE *f, const struct profile *prof)
{
	return write_as(f, prof, cfg.format);
}

/* The summary on standard error next to a file of another format. */
static void summary_to_stderr(const struct profile *prof)
{
	if (!quiet && cfg.format != FORMAT_TEXT)
		write_text_summary(stderr, prof);
}

static int write_recording_json(FILE *f, const void *arg)
{
	struct output_options oo;

	output_options_from_cfg(&oo);
	return write_json(f, arg, &oo);
}

/*
 * --record FILE: the recording `memtap report` reads (JSON), written
 * whole beside FILE and renamed over it: FILE is always a complete
 * recording.  A failure is the output failing (util/outfile.h).
 */
static void write_recording(const struct profile *prof)
{
	if (cfg.record)
		output_write(cfg.record, "recording file", write_recording_json, prof);
}

void report_final(const struct run_info *ri)
{
	FILE *out = cfg.out;
	struct profile prof;

	profile_build(&prof, ri, 0);
	summary_to_stderr(&prof);
	if (write_format(out, &prof) < 0 && !ferror(out))
		error_msg("cannot write the output: %s", strerror(errno));
	fflush(out);
	output_check(out, NULL);
	write_recording(&prof);
	profile_release(&prof);
}

/*
 * One -i report to out: the events since the previous one, to_ns the
 * interval's end; last: the last one, with the whole run in full.
 */
static void write_interval(FILE *out, unsigned n, int last, const struct run_info *ri,
			   uint64_t to_ns, const struct profile *full)
{
	static uint64_t from_ns;
	struct output_options oo;
	struct profile prof;

	profile_build(&prof, ri, 1);
	if (cfg.format != FORMAT_TEXT) {
		if (write_format(out, &prof) < 0 && !ferror(out))
			error_msg("cannot write interval %u: %s", n, strerror(errno));
		if (last)
			summary_to_stderr(&prof);
		from_ns = to_ns;
		profile_release(&prof);
		return;
	}
	fprintf(out, "memtap: interval %u, %" PRIu64 ".%03" PRIu64 " to %" PRIu64 ".%03" PRIu64 " s\n",
		n, from_ns / 1000000000u, from_ns / 1000000u % 1000u, to_ns / 1000000000u,
		to_ns / 1000000u % 1000u);
	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		int header = 0;

		for (int k = 0; k < EV_NKINDS; k++) {
			const struct kind_stats *a = &p->stats[k], *b = &p->prev[k];
			uint64_t calls, acquired;

			sink_kind_totals(a, b, &calls, &acquired);
			if (!(sink_config()->events & EV_BIT(k)) || !calls)
				continue;
			if (!header++)
				fprintf(out, "  process %d (%s)\n", p->pid, p->comm);
			fprintf(out, "  %-8s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n",
				event_kind_names[k], calls, a->failed - b->failed, acquired,
				a->released - b->released);
		}
	}
	output_options_from_cfg(&oo);
	if (prof.run.stacks)
		write_text_stacks(out, &prof, &oo);
	fputc('\n', out);
	if (last) {
		write_text_summary(out, &prof);
		write_suspects(out, full, &oo);
	}
	from_ns = to_ns;
	profile_release(&prof);
}

static void live_capture(unsigned n);

/* The path of interval n's output: "%n" in -o replaced by n, or NULL. */
static char *interval_path(unsigned n)
{
	const char *pct = cfg.output ? strstr(cfg.output, "%n") : NULL;

	return pct ? xasprintf("%.*s%u%s", (int)(pct - cfg.output), cfg.output, n, pct + 2) : NULL;
}

/* The output file of interval n, or NULL (none, or the output failing). */
static struct outfile *interval_file(unsigned n)
{
	char *path = interval_path(n);
	struct outfile *f;

	if (!path)
		return NULL;
	f = outfile_open(path);
	if (!f)
		output_open_failed("output file", path, errno);
	free(path);
	return f;
}

/*
 * --record with -i: the recording is rewritten whole at an interval's
 * end, so that the file holds every interval written so far should
 * memtap be killed or its disk fill up; at most RECORD_SHARE of the
 * time, measured, goes to it: after a rewrite that took T, the next
 * waits for the first interval that ends (1 / RECORD_SHARE - 1) T later.
 */
#define RECORD_SHARE 0.1
static uint64_t record_due_ns;	/* since the start */

/*
 * Rewrite the recording at interval n's end (to_ns): full, whose build
 * took build_ns.
 */
static void rewrite_recording(unsigned n, uint64_t to_ns, const struct profile *full,
			      uint64_t build_ns)
{
	uint64_t t0 = now_ns(), cost;

	if (output_write(cfg.record, "recording file", write_recording_json, full) < 0)
		return;
	cost = build_ns + (now_ns() - t0);
	record_due_ns = to_ns + (uint64_t)((double)cost * (1 / RECORD_SHARE - 1));
	debug_msg("--record: wrote '%s' at interval %u in %.1f ms", cfg.record, n,
		  (double)cost / 1e6);
}

void report_write_interval(unsigned n, int last, const struct run_info *ri)
{
	FILE *out = cfg.out;
	uint64_t to_ns = now_ns() - start_ns, build_ns = now_ns();
	int record = cfg.record && (last || to_ns >= record_due_ns);
	struct outfile *f;
	struct profile full = { 0 };

	timeline_interval_end(to_ns, sink_held_known() && cfg.leaks);
	if (last || record)
		profile_build(&full, ri, 0);
	build_ns = now_ns() - build_ns;
	if (cfg.format == FORMAT_HTML) {
		/* one page, every interval in it, at the end */
		if (last) {
			summary_to_stderr(&full);
			if (write_format(out, &full) < 0 && !ferror(out))
				error_msg("cannot write the output: %s", strerror(errno));
			fflush(out);
			output_check(out, NULL);
		}
		goto done;
	}
	f = interval_file(n);
	if (f)
		out = outfile_stream(f);
	else if (cfg.output && strstr(cfg.output, "%n"))
		goto done;
	write_interval(out, n, last, ri, to_ns, &full);
	fflush(out);
	output_check(out, NULL);
	if (f)
		output_commit(f);
done:
	if (record)
		rewrite_recording(n, to_ns, &full, build_ns);
	else if (last)
		write_recording(&full);
	if (last || record)
		profile_release(&full);
	live_capture(n);
	report_interval_done();
}

void report_interval_done(void)
{
	sink_proc_mark_interval();
}

/* --at-peak: per held family, the peak last written */
static uint64_t peak_written[HELD_NFAMILIES];
static int at_peak_failed;	/* a write failed: the output failing, no more */

/* Is peak past the step above what was written? */
static int past_step(uint64_t peak, uint64_t written)
{
	uint64_t step = cfg.at_peak_step;

	if (!cfg.at_peak_step)
		step = (uint64_t)((double)written * cfg.at_peak_pct / 100.0);
	return peak > written && peak - written > step;
}

int report_at_peak_pending(void)
{
	if (!cfg.at_peak || at_peak_failed)
		return 0;
	for (int f = 0; f < HELD_NFAMILIES; f++)
		if (past_step(aggregate_peak(f)->bytes, peak_written[f]))
			return 1;
	return 0;
}

/* The format of FILE's suffix, folded for any other. */
static int write_at_peak(FILE *f, const void *arg)
{
	int format = output_format_from_path(cfg.at_peak);

	return write_as(f, arg, format < 0 ? FORMAT_FOLDED : format);
}

void report_at_peak_write(const struct run_info *ri)
{
	struct profile prof;
	size_t t;

	profile_build(&prof, ri, 0);
	t = profile_find_type(&prof, "peak_space");
	if (t != (size_t)-1)
		prof.default_type = t;
	for (int f = 0; f < HELD_NFAMILIES; f++)
		peak_written[f] = aggregate_peak(f)->bytes;
	if (output_write(cfg.at_peak, "peak file", write_at_peak, &prof) < 0)
		at_peak_failed = 1;
	else
		debug_msg("--at-peak: wrote '%s', peaks %" PRIu64 " bytes of blocks, %" PRIu64
			  " of mappings", cfg.at_peak, peak_written[HELD_ALLOC],
			  peak_written[HELD_MAPS]);
	profile_release(&prof);
}

/* The stack's functions, leaf first, as "leaf < caller < ..." in buf. */
static void stack_text(uint32_t stack, char *buf, size_t size)
{
	static struct symbolizer *sz;
	const struct stack_frame *frames;
	size_t len = 0;
	int depth;

	buf[0] = '\0';
	if (!stack || !sink_stack_table() ||
	    stack_table_get(sink_stack_table(), stack, &frames, &depth) < 0)
		return;
	if (!sz)
		sz = symbolizer_new(SYMBOLIZE_NO_LINES | (cfg.no_demangle ? SYMBOLIZE_NO_DEMANGLE : 0));
	for (int d = 0; d < depth && len + 4 < size; d++) {
		const struct sym_info *si = NULL;
		const char *name = marker_frame(&frames[d]);
		int n;

		if (!name) {
			si = symbolizer_lookup(sz, frames[d].module, frames[d].addr);
			name = si->nframes ? si->frames[si->nframes - 1].function : NULL;
		}
		n = snprintf(buf + len, size - len, "%s%s", len ? " < " : "", name ? name : "?");

		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

void report_top_stack(char *buf, size_t size)
{
	size_t nagg;
	const struct agg *aggs = aggregate_entries(&nagg), *a = NULL;

	buf[0] = '\0';
	for (size_t i = 0; i < nagg; i++)
		if (!a || aggs[i].acquired > a->acquired)
			a = &aggs[i];
	if (a && a->acquired)
		stack_text(a->stack, buf, size);
}

static char live_lines[REPORT_LIVE_TOP][REPORT_LIVE_WIDTH];
static size_t nlive;
static unsigned live_interval;

/* An interval's growth of an aggregate: acquired less released since the mark. */
static int64_t interval_growth(const struct agg *a)
{
	return (int64_t)(a->acquired - a->mark_acquired) - (int64_t)(a->released - a->mark_released);
}

/*
 * Interval n's stacks that grew most, ranked, before the mark moves; an
 * interval in which nothing grew leaves the last one's.
 */
static void live_capture(unsigned n)
{
	const struct agg *top[REPORT_LIVE_TOP];
	size_t nagg, ntop = 0;
	const struct agg *aggs = aggregate_entries(&nagg);

	for (size_t i = 0; i < nagg; i++) {
		const struct agg *a = &aggs[i];
		size_t j;

		if (interval_growth(a) <= 0 || !a->stack)
			continue;
		for (j = ntop; j > 0 && interval_growth(top[j - 1]) < interval_growth(a); j--)
			if (j < REPORT_LIVE_TOP)
				top[j] = top[j - 1];
		if (j < REPORT_LIVE_TOP) {
			top[j] = a;
			if (ntop < REPORT_LIVE_TOP)
				ntop++;
		}
	}
	if (!ntop)
		return;
	live_interval = n;
	for (nlive = 0; nlive < ntop; nlive++) {
		const struct agg *a = top[nlive];
		char bytes[16], stack[160];

		format_size(bytes, sizeof(bytes), (uint64_t)interval_growth(a));
		stack_text(a->stack, stack, sizeof(stack));
		snprintf(live_lines[nlive], sizeof(live_lines[nlive]), "%10s  %-7s %s", bytes,
			 event_kind_names[a->kind], stack);
	}
}

size_t report_live_top(const char *lines[REPORT_LIVE_TOP], unsigned *interval)
{
	*interval = live_interval;
	for (size_t i = 0; i < nlive; i++)
		lines[i] = live_lines[i];
	return nlive;
}

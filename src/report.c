/*
 * report.c - the text outputs: one line per event (--trace) and the
 * end-of-run summary (counts and bytes per process and event kind, next
 * to the memory figures /proc/PID/status gave at start and at end).
 * Byte counts are exact integers, so that scripts and tests can use them.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "aggregate.h"
#include "alloc.h"
#include "error.h"
#include "live.h"
#include "memtap.h"
#include "output.h"
#include "profile.h"
#include "stacks.h"
#include "symbolize.h"

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
	return opt.format == FORMAT_TEXT ? out : stderr;
}

void report_trace_header(void)
{
	FILE *saved = out;

	out = trace_file();
	fprintf(out, "%11s %7s %7s %-15s %-6s %12s %-18s %-4s %s\n", "TIME", "PID", "TID",
		"COMM", "EVENT", "BYTES", "ADDRESS", "KIND", "CALL");
	out = saved;
}

/*
 * An allocator function or probe: its arguments as the C ABI passed them,
 * its result, and the caller's address (fixed width, so that scripts can
 * compare addresses as strings).
 */
static void print_func_call(const struct event *ev)
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

static void print_call(const struct event *ev)
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
	default:
		print_func_call(ev);
		return;
	}
	if (ev->ret < 0 && ev->ret >= -4095)
		fprintf(out, " = -1 (%s)\n", strerror((int)-ev->ret));
	else if (ev->kind == EV_MUNMAP)
		fprintf(out, " = %" PRId64 "\n", ev->ret);
	else
		fprintf(out, " = %#" PRIx64 "\n", (uint64_t)ev->ret);
}

/* The frames of a stack, one per line, leaf first, for --trace. */
static void print_trace_stack(uint32_t stack)
{
	static struct symbolizer *sz;
	const struct stack_frame *frames;
	int depth;
	char buf[512];

	if (!stack || !stack_table() || stack_table_get(stack_table(), stack, &frames, &depth) < 0)
		return;
	if (!sz)
		sz = symbolizer_new(opt.no_demangle ? SYMBOLIZE_NO_DEMANGLE : 0);
	for (int d = 0; d < depth; d++) {
		const struct sym_info *si = symbolizer_lookup(sz, frames[d].module, frames[d].addr);

		for (int i = 0; i < si->nframes; i++) {
			symbolizer_format(si, i, buf, sizeof(buf));
			fprintf(out, "%16s%s\n", "", buf);
		}
	}
}

void report_trace_event(const struct event *ev, uint32_t stack)
{
	FILE *saved = out;
	char bytes[32];

	out = trace_file();
	if (ev->failed)
		snprintf(bytes, sizeof(bytes), "failed");
	else
		snprintf(bytes, sizeof(bytes), "%+" PRId64, ev->size);
	fprintf(out, "%4" PRIu64 ".%06" PRIu64 " %7d %7d %-15s %-6s %12s %#-18" PRIx64 " %-4s ",
		ev->time_ns / 1000000000u, ev->time_ns / 1000u % 1000000u, ev->pid, ev->tid,
		ev->comm, event_kind_names[ev->kind], bytes, ev->addr,
		map_kind_names[ev->map_kind]);
	print_call(ev);
	print_trace_stack(stack);
	out = saved;
}

void proc_status_text(const struct proc *p, char *buf, size_t size)
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

static void print_status(const struct proc *p)
{
	char buf[64];

	proc_status_text(p, buf, sizeof(buf));
	fputs(buf, out);
}

static void print_vm_row(const char *name, int have, uint64_t start, uint64_t end)
{
	if (!have) {
		fprintf(out, "  %-8s %16s %16s %16s\n", name, "-", "-", "-");
		return;
	}
	fprintf(out, "  %-8s %16" PRIu64 " %16" PRIu64 " %+16" PRId64 "\n", name, start, end,
		(int64_t)(end - start));
}

static void account_row(const char *name, int64_t bytes, const char *note)
{
	fprintf(out, "  %-24s %+16" PRId64 "%s%s\n", name, bytes, note ? "  " : "", note ? note : "");
}

/*
 * The reconciled account: what the traced calls add up to, next to the
 * kernel's VmSize growth over the same interval, and the remainder with
 * the reasons it can have.
 */
static void report_account(const struct proc *p, int have_vm)
{
	const struct kind_stats *st = p->stats;
	int64_t captured = 0;
	int complete = (opt.events & EV_SYSCALLS) == EV_SYSCALLS && !p->filtered;

	if (!(opt.events & (EV_SYSCALLS | EV_ALLOC)))
		return;
	fprintf(out, "  %-24s %16s\n", "ACCOUNT", "BYTES");
	if (opt.events & EV_ALLOC) {
		char note[96];

		snprintf(note, sizeof(note), "in %zu blocks not freed", live_count(p));
		account_row("allocator, live", (int64_t)live_bytes(p), note);
		if (p->unknown_frees)
			fprintf(out, "  %-24s %16" PRIu64 "  (allocated before tracing or by a "
				"function not probed; glibc's tcache at thread exit)\n",
				"frees of unknown blocks", p->unknown_frees);
	}
	if (!(opt.events & EV_SYSCALLS))
		return;
	if (opt.events & EV_BIT(EV_BRK)) {
		int64_t heap = (int64_t)st[EV_BRK].acquired - (int64_t)st[EV_BRK].released;

		account_row("heap (brk)", heap, NULL);
		captured += heap;
	}
	if (opt.events & EV_BIT(EV_MMAP)) {
		account_row("anonymous mmap", (int64_t)st[EV_MMAP].anon, NULL);
		account_row("file-backed mmap", (int64_t)st[EV_MMAP].file, NULL);
		captured += (int64_t)st[EV_MMAP].acquired;
	}
	if (opt.events & EV_BIT(EV_MUNMAP)) {
		account_row("munmap", -(int64_t)st[EV_MUNMAP].released, NULL);
		captured -= (int64_t)st[EV_MUNMAP].released;
	}
	if (opt.events & EV_BIT(EV_MREMAP)) {
		int64_t net = (int64_t)st[EV_MREMAP].acquired - (int64_t)st[EV_MREMAP].released;

		account_row("mremap", net, NULL);
		captured += net;
	}
	account_row("captured", captured, complete ? NULL : "(some events not selected or filtered)");
	if (!have_vm)
		return;
	int64_t growth = (int64_t)(p->vm_end.vm_size - p->vm_start.vm_size);

	account_row("VmSize growth", growth, NULL);
	account_row("unattributed", growth - captured,
		    growth == captured ? NULL :
		    "(mapped or unmapped before tracing or without these calls, exec, madvise)");
}

static void report_proc(const struct proc *p)
{
	struct kind_stats total;
	int have_vm = p->vm_start.have && p->vm_end.have;
	/* allocator names are longer than syscall names */
	int w = (opt.events & EV_BREAKPOINT) ? 14 : 8;

	memset(&total, 0, sizeof(total));
	fprintf(out, "\nprocess %d (%s), ", p->pid, p->comm);
	print_status(p);
	if (p->ppid)
		fprintf(out, ", child of %d", p->ppid);
	fprintf(out, "\n  %-*s %8s %8s %16s %16s\n", w, "EVENT", "CALLS", "FAILED",
		"ACQUIRED", "RELEASED");
	for (int k = 0; k < EV_NKINDS; k++) {
		const struct kind_stats *ks = &p->stats[k];

		if (!(opt.events & EV_BIT(k)))
			continue;
		fprintf(out, "  %-*s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n",
			w, event_kind_names[k], ks->calls, ks->failed, ks->acquired, ks->released);
		if (k == EV_MMAP && ks->acquired) {
			fprintf(out, "    %-24s %16" PRIu64 "\n", "anonymous", ks->anon);
			fprintf(out, "    %-24s %16" PRIu64 "\n", "file-backed", ks->file);
		}
		total.calls += ks->calls;
		total.failed += ks->failed;
		total.acquired += ks->acquired;
		total.released += ks->released;
	}
	fprintf(out, "  %-*s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n", w, "total",
		total.calls, total.failed, total.acquired, total.released);
	if (p->filtered)
		fprintf(out, "  %" PRIu64 " events under --min-size not counted\n", p->filtered);
	fprintf(out, "  %-8s %16s %16s %16s\n", "/proc", "START", "END", "GROWTH");
	print_vm_row("VmSize", have_vm, p->vm_start.vm_size, p->vm_end.vm_size);
	print_vm_row("VmRSS", have_vm, p->vm_start.vm_rss, p->vm_end.vm_rss);
	print_vm_row("VmData", have_vm, p->vm_start.vm_data, p->vm_end.vm_data);
	report_account(p, have_vm);
}

void report_summary(void)
{
	size_t nprocs = 0;
	uint64_t elapsed = now_ns() - start_ns;

	for (struct proc *p = proc_list(); p; p = p->next)
		nprocs++;
	fprintf(out, "memtap: %zu process%s, %" PRIu64 ".%03" PRIu64 " s, syscalls via %s, "
		"%" PRIu64 " stops (seccomp %" PRIu64 ", syscall %" PRIu64 ", breakpoint %" PRIu64
		", signal %" PRIu64 ", other %" PRIu64 ")\n",
		nprocs, nprocs == 1 ? "" : "es", elapsed / 1000000000u, elapsed / 1000000u % 1000u,
		syscall_source, stops.total, stops.seccomp, stops.syscall, stops.breakpoint,
		stops.signal, stops.event + stops.group);
	alloc_report_unfound(out);
	for (struct proc *p = proc_list(); p; p = p->next)
		report_proc(p);
}

/* ---- top stacks (text) ---- */

static void print_location(const struct profile *prof, size_t loc)
{
	const struct prof_location *l = &prof->locations[loc];

	for (size_t i = 0; i < l->nlines; i++) {
		const struct prof_function *fn = &prof->functions[l->lines[i].function];

		fprintf(out, "        %s%s\n", opt.no_demangle && fn->system_name ?
			fn->system_name : fn->name, i + 1 < l->nlines ? " (inlined)" : "");
	}
	if (l->nlines)
		return;
	if (l->mapping < prof->nmappings)
		fprintf(out, "        [unknown] (%s+0x%" PRIx64 ")\n",
			path_base_name(prof->mappings[l->mapping].file), l->address);
	else
		fprintf(out, "        [unknown] (0x%" PRIx64 ")\n", l->address);
}

static const struct profile *sort_prof;

/*
 * What the text report ranks a stack by: the profile's default type, but
 * for bytes the bytes moved either way, so that munmap stacks rank too.
 */
static int64_t sample_weight(const struct profile *prof, const struct prof_sample *s)
{
	if (prof->default_type == 0)
		return s->values[0] + (strcmp(s->event, "munmap") ? s->values[2] : 0);
	return s->values[prof->default_type];
}

/* Order samples by bytes moved (or calls), largest first. */
static int cmp_samples(const void *a, const void *b)
{
	const struct prof_sample *x = &sort_prof->samples[*(const size_t *)a];
	const struct prof_sample *y = &sort_prof->samples[*(const size_t *)b];
	int64_t vx = sample_weight(sort_prof, x), vy = sample_weight(sort_prof, y);

	return vx < vy ? 1 : vx > vy ? -1 : 0;
}

static void report_top_stacks(const struct profile *prof)
{
	size_t *idx = calloc(prof->nsamples ? prof->nsamples : 1, sizeof(*idx));

	if (!idx)
		return;
	for (int k = 0; k < EV_NKINDS; k++) {
		size_t n = 0;
		int64_t total = 0, calls = 0;

		for (size_t i = 0; i < prof->nsamples; i++) {
			const struct prof_sample *s = &prof->samples[i];

			if (strcmp(s->event, event_kind_names[k]))
				continue;
			idx[n++] = i;
			total += sample_weight(prof, s);
			calls += s->values[1];
		}
		if (!n || !total)
			continue;
		sort_prof = prof;
		qsort(idx, n, sizeof(*idx), cmp_samples);
		fprintf(out, "\ntop %d stacks of %s by %s (%" PRId64 " %s in %zu stacks, %" PRId64 " calls)\n",
			opt.top < (int)n ? opt.top : (int)n, event_kind_names[k],
			prof->types[prof->default_type].type, total,
			prof->types[prof->default_type].unit, n, calls);
		for (size_t j = 0; j < n && (int)j < opt.top; j++) {
			const struct prof_sample *s = &prof->samples[idx[j]];
			int64_t v = sample_weight(prof, s);

			if (v <= 0)
				break;

			fprintf(out, "  #%zu  ", j + 1);
			if (opt.leaks)
				fprintf(out, "%" PRId64 " bytes held in %" PRId64 " block%s  ", s->values[4],
					s->values[5], s->values[5] == 1 ? "" : "s");
			else if (s->values[0])
				fprintf(out, "+%" PRId64 " bytes  ", s->values[0]);
			if (s->values[2])
				fprintf(out, "-%" PRId64 " bytes  ", s->values[2]);
			fprintf(out, "%.1f%%  %" PRId64 " call%s  pid %d (%s)\n", 100.0 * (double)v / (double)total,
				s->values[1], s->values[1] == 1 ? "" : "s", s->pid, s->comm);
			if (!s->nlocs)
				fprintf(out, "        [no stack]\n");
			for (size_t f = 0; f < s->nlocs; f++)
				print_location(prof, s->locs[f]);
		}
	}
	free(idx);
}

/* Write the aggregates as opt.format (not text) to out. */
static int write_formatted(void)
{
	struct profile prof;
	struct output_options oo;
	int r = 0;

	profile_build(&prof);
	memset(&oo, 0, sizeof(oo));
	oo.title = opt.title;
	oo.inverted = opt.inverted;
	oo.no_demangle = opt.no_demangle;
	switch (opt.format) {
	case FORMAT_FOLDED:
		r = write_folded(out, &prof, &oo);
		break;
	case FORMAT_SVG:
		r = write_svg(out, &prof, &oo);
		break;
	case FORMAT_PPROF:
		r = write_pprof(out, &prof, &oo);
		break;
	case FORMAT_JSON:
		r = write_json(out, &prof, &oo);
		break;
	default:
		break;
	}
	profile_release(&prof);
	return r;
}

static void text_top_stacks(void)
{
	struct profile prof;

	if (opt.unwind == 0 /* UNWIND_NONE */)
		return;
	profile_build(&prof);
	report_top_stacks(&prof);
	profile_release(&prof);
}

static int report_write(void)
{
	if (opt.format == FORMAT_TEXT) {
		report_summary();
		text_top_stacks();
		return 0;
	}
	if (!quiet) {
		FILE *saved = out;

		out = stderr;
		report_summary();
		out = saved;
	}
	return write_formatted();
}

void report_final(void)
{
	status_clear();
	alloc_report_unfound(stderr);
	if (opt.interval > 0) {
		interval_report(1);
		return;
	}
	if (report_write() < 0)
		error_msg("cannot write the output: %s", strerror(errno));
}

/* One -i report: the events since the previous one. */
void report_write_interval(unsigned n, int last)
{
	static uint64_t from_ns;
	uint64_t to_ns = now_ns() - start_ns;

	if (opt.format != FORMAT_TEXT) {
		if (write_formatted() < 0)
			error_msg("cannot write interval %u: %s", n, strerror(errno));
		if (last && !quiet) {
			FILE *saved = out;

			out = stderr;
			report_summary();
			out = saved;
		}
		from_ns = to_ns;
		return;
	}
	fprintf(out, "memtap: interval %u, %" PRIu64 ".%03" PRIu64 " to %" PRIu64 ".%03" PRIu64 " s\n",
		n, from_ns / 1000000000u, from_ns / 1000000u % 1000u, to_ns / 1000000000u,
		to_ns / 1000000u % 1000u);
	for (struct proc *p = proc_list(); p; p = p->next) {
		int header = 0;

		for (int k = 0; k < EV_NKINDS; k++) {
			const struct kind_stats *a = &p->stats[k], *b = &p->prev[k];

			if (!(opt.events & EV_BIT(k)) || a->calls == b->calls)
				continue;
			if (!header++)
				fprintf(out, "  process %d (%s)\n", p->pid, p->comm);
			fprintf(out, "  %-8s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n",
				event_kind_names[k], a->calls - b->calls, a->failed - b->failed,
				a->acquired - b->acquired, a->released - b->released);
		}
	}
	text_top_stacks();
	fputc('\n', out);
	if (last)
		report_summary();
	from_ns = to_ns;
}

void report_stack_brief(const struct agg *a, char *buf, size_t size)
{
	static struct symbolizer *sz;
	const struct stack_frame *frames;
	int depth;
	size_t len = 0;

	buf[0] = '\0';
	if (!a->stack || !stack_table() || stack_table_get(stack_table(), a->stack, &frames, &depth) < 0)
		return;
	if (!sz)
		sz = symbolizer_new(SYMBOLIZE_NO_LINES | (opt.no_demangle ? SYMBOLIZE_NO_DEMANGLE : 0));
	for (int d = 0; d < depth && len + 4 < size; d++) {
		const struct sym_info *si = symbolizer_lookup(sz, frames[d].module, frames[d].addr);
		const char *name = si->nframes ? si->frames[si->nframes - 1].function : NULL;
		int n = snprintf(buf + len, size - len, "%s%s", len ? " < " : "", name ? name : "?");

		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

/*
 * timers.c - what happens on the clock while tracing: the -d deadline,
 * -i interval reports, --at-peak's file and the live status line on a
 * terminal.
 *
 * The tracer loop blocks with a timeout of timers_next_ns() - now and
 * calls timers_serve() whenever that time has come, between batches of
 * stops: a busy loop serves its timers as promptly as an idle one.
 *
 * -d and -i count recording time: from timers_armed(), which the tracer
 * calls once every probe is in (attach: every thread stopped and the
 * breakpoints inserted; launch: the command exec'd and, with allocator
 * probes, its entry point reached).  Attaching to many threads or
 * inserting many breakpoints on a loaded machine takes time that is not
 * part of the window asked for.  The status line runs from the start.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "record/report.h"
#include "util/error.h"
#include "util/optparse.h"
#include "trace/memtap.h"
#include "trace/ring.h"
#include "trace/source.h"
#include "trace/tracer.h"
#include "util/xmalloc.h"

static uint64_t deadline_ns, next_interval_ns, next_status_ns;
static uint64_t at_peak_ns;	/* --at-peak: the last write, 0: none yet */
static int at_peak_on;		/* --at-peak, until timers_stop() */
static int status_on, status_shown, armed;
static int status_lines;	/* lines shown: the status line, then -i's top */
static unsigned interval_no;
static const struct trace_config *cfg;

void timers_start(const struct trace_config *config)
{
	cfg = config;
	/* no status line between trace lines on the same terminal */
	status_on = !quiet && isatty(STDERR_FILENO) && !cfg->trace && !cfg->agent;
	if (status_on)
		next_status_ns = now_ns() + 1000000000u;
	at_peak_on = report_config()->at_peak != NULL;
}

/* When a pending --at-peak write is due, 0: none pending. */
static uint64_t at_peak_due(void)
{
	if (!at_peak_on || !sink_recording() || !report_at_peak_pending())
		return 0;
	return at_peak_ns ? at_peak_ns + 1000000000u : 1;
}

void timers_armed(void)
{
	uint64_t now = now_ns();

	if (armed)
		return;
	armed = 1;
	if (cfg->duration > 0)
		deadline_ns = now + (uint64_t)(cfg->duration * 1e9);
	if (cfg->interval > 0)
		next_interval_ns = now + (uint64_t)(cfg->interval * 1e9);
}

uint64_t timers_next_ns(void)
{
	uint64_t next = 0;
	const uint64_t t[] = { deadline_ns, next_interval_ns, next_status_ns, at_peak_due() };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i] && (!next || t[i] < next))
			next = t[i];
	return next;
}

void timers_stop(void)
{
	deadline_ns = next_interval_ns = next_status_ns = 0;
	at_peak_on = 0;
	status_clear();
}

/* Erase the status lines, so that other output starts on a clean line. */
void status_clear(void)
{
	if (status_shown) {
		if (status_lines > 1)
			fprintf(stderr, "\r\033[%dA\033[J", status_lines - 1);
		else
			fputs("\r\033[K", stderr);
		fflush(stderr);
		status_shown = 0;
		status_lines = 0;
	}
}

/* line cut to the terminal's width, as a line of its own */
static void status_put(const char *prefix, const char *line, size_t width)
{
	fprintf(stderr, "%s\033[K%.*s", prefix, (int)(width - 1), line);
	status_lines++;
}

static void status_print(uint64_t now)
{
	static uint64_t last_stops, last_ns;
	uint64_t events = 0, acquired = 0;
	char bytes[32], line[512], top[256] = "";
	const char *live[REPORT_LIVE_TOP];
	struct winsize ws;
	size_t width = 80, rows = 24, nlive = 0;
	unsigned grew = 0;

	for (struct sink_proc *p = sink_procs(); p; p = p->next)
		for (int k = 0; k < EV_NKINDS; k++) {
			events += p->stats[k].calls;
			acquired += p->stats[k].acquired;
		}
	report_top_stack(top, sizeof(top));
	format_size(bytes, sizeof(bytes), acquired);
	double secs = (double)(now - start_ns) / 1e9;
	double rate = last_ns ? (double)(stops.total - last_stops) * 1e9 / (double)(now - last_ns) : 0;

	last_stops = stops.total;
	last_ns = now;
	snprintf(line, sizeof(line), "memtap: %.0f s, %" PRIu64 " events, +%s, %.0f stops/s%s%s",
		 secs, events, bytes, rate, *top ? ", top: " : "", top);
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) {
		width = ws.ws_col;
		rows = ws.ws_row;
	}
	/* -i: the stacks that grew most in the last interval, under it, like top */
	if (cfg->interval > 0)
		nlive = report_live_top(live, &grew);
	if (nlive + 2 > rows)
		nlive = rows > 2 ? rows - 2 : 0;
	status_clear();
	status_put("\r", line, width);
	if (nlive) {
		snprintf(line, sizeof(line), "  grew most in interval %u:", grew);
		status_put("\n", line, width);
	}
	for (size_t i = 0; i < nlive; i++)
		status_put("\n", live[i], width);
	fflush(stderr);
	status_shown = 1;
}

/* What the reports need of the run (record/report.h). */
static void run_info_get(struct run_info *ri)
{
	ri->stops = stops;
	ri->syscall_source = syscall_source;
	ri->fault_period = (cfg->events & EV_FAULT_KINDS) ? cfg->fault_period : 0;
	ring_sample_means(&ri->sample_lo, &ri->sample_hi);
	ri->unfound = NULL;
	ri->nunfound = 0;
	ri->notes = NULL;
	ri->nnotes = 0;
	sources_run_info(ri);
}

void interval_report(int last)
{
	struct run_info ri;

	interval_no++;
	sources_settle();
	sink_flush();
	status_clear();
	run_info_get(&ri);
	if (cfg->on_interval)
		cfg->on_interval(last, &ri);
	else
		report_write_interval(interval_no, last, &ri);
	/* back at once, with the interval's top */
	if (!last && next_status_ns)
		status_print(now_ns());
}

/* --at-peak: the profile at the peak, into its file. */
static void at_peak_write(uint64_t now)
{
	struct run_info ri;

	at_peak_ns = now;
	run_info_get(&ri);
	report_at_peak_write(&ri);
}

void timers_final_report(void)
{
	struct run_info ri;

	sources_final();
	status_clear();
	if (cfg->interval > 0) {
		interval_report(1);
	} else {
		sources_settle();
		run_info_get(&ri);
		report_final(&ri);
	}
	/* the last peak, when not written yet (with --at-peak) */
	if (report_at_peak_pending())
		at_peak_write(now_ns());
}

int timers_serve(void)
{
	uint64_t now = now_ns();

	/* a stop is asked for: detach first, the last report tells all */
	if (tracer_stop_pending())
		return 0;
	if (!sink_recording())
		next_interval_ns = next_status_ns = 0;
	if (next_interval_ns && now >= next_interval_ns) {
		next_interval_ns += (uint64_t)(cfg->interval * 1e9);
		if (next_interval_ns <= now)
			next_interval_ns = now + (uint64_t)(cfg->interval * 1e9);
		interval_report(0);
	}
	if (next_status_ns && now >= next_status_ns) {
		next_status_ns = now + 1000000000u;
		status_print(now);
	}
	if (at_peak_due() && now >= at_peak_due())
		at_peak_write(now);
	if (deadline_ns && now >= deadline_ns) {
		deadline_ns = 0;	/* once */
		return 1;
	}
	return 0;
}

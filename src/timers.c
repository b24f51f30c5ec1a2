/*
 * timers.c - what happens on the clock while tracing: the -d deadline,
 * -i interval reports, and the live status line on a terminal.
 *
 * One periodic ITIMER_REAL tick (100 ms) interrupts waitpid(); the
 * SIGALRM handler only sets timer_tick, and the tracer loop calls
 * timers_serve() when it sees it.  A tick that arrives just before the
 * loop blocks is served at the next one, 100 ms later at most.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include "aggregate.h"
#include "error.h"
#include "memtap.h"
#include "outfile.h"
#include "xmalloc.h"

#define TICK_US 100000

volatile sig_atomic_t timer_tick;

static uint64_t deadline_ns, next_interval_ns, next_status_ns;
static int status_on, status_shown;
static unsigned interval_no;

void timers_start(void)
{
	struct itimerval it;
	uint64_t now = now_ns();

	/* no status line between trace lines on the same terminal */
	status_on = !quiet && isatty(STDERR_FILENO) && !opt.trace;
	if (opt.duration > 0)
		deadline_ns = now + (uint64_t)(opt.duration * 1e9);
	if (opt.interval > 0)
		next_interval_ns = now + (uint64_t)(opt.interval * 1e9);
	next_status_ns = now + 1000000000u;
	if (!deadline_ns && !next_interval_ns && !status_on)
		return;
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = TICK_US;
	it.it_value.tv_usec = TICK_US;
	setitimer(ITIMER_REAL, &it, NULL);
}

void timers_stop(void)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	status_clear();
}

/* Erase the status line, so that other output starts on a clean line. */
void status_clear(void)
{
	if (status_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		status_shown = 0;
	}
}

static void human(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void status_print(uint64_t now)
{
	static uint64_t last_stops, last_ns;
	uint64_t events = 0, acquired = 0;
	char bytes[32], line[512], top[256] = "";
	struct winsize ws;
	size_t width = 80, nagg;
	const struct agg *aggs = aggregate_entries(&nagg), *best = NULL;

	for (struct proc *p = proc_list(); p; p = p->next)
		for (int k = 0; k < EV_NKINDS; k++) {
			events += p->stats[k].calls;
			acquired += p->stats[k].acquired;
		}
	for (size_t i = 0; i < nagg; i++)
		if (!best || aggs[i].acquired > best->acquired)
			best = &aggs[i];
	if (best && best->acquired)
		report_stack_brief(best, top, sizeof(top));
	human(bytes, sizeof(bytes), acquired);
	double secs = (double)(now - start_ns) / 1e9;
	double rate = last_ns ? (double)(stops.total - last_stops) * 1e9 / (double)(now - last_ns) : 0;

	last_stops = stops.total;
	last_ns = now;
	snprintf(line, sizeof(line), "memtap: %.0f s, %" PRIu64 " events, +%s, %.0f stops/s%s%s",
		 secs, events, bytes, rate, *top ? ", top: " : "", top);
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	if (strlen(line) >= width)
		line[width - 1] = '\0';
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	status_shown = 1;
}

/* The output file of interval n: "%n" in -o replaced by n. */
static struct outfile *interval_file(unsigned n)
{
	const char *pct = opt.output ? strstr(opt.output, "%n") : NULL;
	struct outfile *f;

	if (!pct)
		return NULL;
	char *path = xasprintf("%.*s%u%s", (int)(pct - opt.output), opt.output, n, pct + 2);

	f = outfile_open(path);
	if (!f)
		error_msg("cannot open output file '%s': %s", path, strerror(errno));
	free(path);
	return f;
}

void interval_report(int last)
{
	FILE *saved = out;
	struct outfile *f;

	interval_no++;
	events_flush();
	status_clear();
	f = interval_file(interval_no);
	if (f)
		out = outfile_stream(f);
	else if (opt.output && strstr(opt.output, "%n"))
		return;
	report_write_interval(interval_no, last);
	if (f) {
		if (outfile_commit(f) < 0)
			error_msg("cannot write interval %u: %s", interval_no, strerror(errno));
		out = saved;
	} else {
		fflush(out);
	}
	aggregate_clear();
	for (struct proc *p = proc_list(); p; p = p->next)
		memcpy(p->prev, p->stats, sizeof(p->prev));
}

int timers_serve(void)
{
	uint64_t now = now_ns();

	if (next_interval_ns && now >= next_interval_ns && recording) {
		next_interval_ns += (uint64_t)(opt.interval * 1e9);
		if (next_interval_ns <= now)
			next_interval_ns = now + (uint64_t)(opt.interval * 1e9);
		interval_report(0);
	}
	if (status_on && now >= next_status_ns && recording) {
		next_status_ns = now + 1000000000u;
		status_print(now);
	}
	return deadline_ns && now >= deadline_ns;
}

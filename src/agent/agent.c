/*
 * agent.c - memtap agent (agent.h): the loop's source that looks for
 * processes every --poll seconds, refreshes the metrics every second,
 * and at each -i interval's end keeps the stacks' history (growth,
 * leak suspects) and pushes the interval's profile.  At the end, once
 * every target is detached, the interval cut short is closed as a full
 * one (its profile from its start to then), and the sender has
 * --push-drain seconds to send what waits; a second stop signal ends
 * that at once.
 *
 * Everything here runs on the tracer thread between stops, and none of
 * it waits on anything outside memtap: the HTTP server and the push
 * sender are threads of their own that get copies (util/http-server.h,
 * agent/push.h).
 *
 * A stack's series is keyed by (selector, stable stack key, event
 * kind) (record/stackkey.h): the same across restarts of the service,
 * summed over its processes.  At most --top series per selector are
 * served, the ones that hold most, so the labels stay bounded whatever
 * the targets do.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "agent/agent.h"
#include "agent/push.h"
#include "linux/procfs.h"
#include "record/aggregate.h"
#include "record/report.h"
#include "record/sink.h"
#include "record/stackkey.h"
#include "report/out-prom.h"
#include "report/output.h"
#include "report/profile.h"
#include "stack/stacks.h"
#include "trace/memtap.h"
#include "trace/ring.h"
#include "trace/source.h"
#include "trace/tracer.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/http-server.h"
#include "util/xmalloc.h"

#define METRICS_PERIOD_NS 1000000000ull
#define NHIST 32		/* interval ends kept per series, for the suspect rule */

struct series {
	uint64_t key;
	int sel;
	int kind;
	const char *frame;	/* stackkey.c's, kept */
	uint64_t held;		/* summed over the selector's processes, now */
	unsigned seen;		/* the refresh that last found it */
	uint64_t mark_held[2];	/* held at the ends of the last two intervals */
	uint64_t mark_ns[2];
	double hist[NHIST];	/* held at the last interval ends, oldest first */
	size_t nhist;
	double growth, slope;
};

static const struct agent_config *cfg;
static struct http_server *srv;
static volatile sig_atomic_t reload_asked;
static uint64_t next_scan_ns, next_metrics_ns;
static unsigned generation;
static struct series *series;
static size_t nseries, capseries;
static size_t *index_of;	/* open addressing into series, nindex slots */
static size_t nindex;
static uint64_t stops_total;
static int64_t interval_from;	/* Unix seconds */
static char hostname[256];
static int ending;		/* every target detached: the last interval */
static volatile sig_atomic_t stops_asked, exiting;
static const int stop_sigs[] = { SIGTERM, SIGINT, SIGQUIT };
static struct sigaction cli_stop[3];	/* cli's handlers, which on_stop() calls */

void agent_request_reload(void)
{
	reload_asked = 1;
}

static size_t slot_hash(uint64_t key, int sel, int kind)
{
	uint64_t h = key ^ ((uint64_t)(unsigned)sel << 32) ^ (uint64_t)(unsigned)kind;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return (size_t)h;
}

static void reindex(void)
{
	nindex = 64;
	while (nindex < nseries * 2)
		nindex *= 2;
	free(index_of);
	index_of = xcalloc(nindex, sizeof(*index_of));
	for (size_t i = 0; i < nseries; i++) {
		size_t h = slot_hash(series[i].key, series[i].sel, series[i].kind) & (nindex - 1);

		while (index_of[h])
			h = (h + 1) & (nindex - 1);
		index_of[h] = i + 1;
	}
}

static struct series *series_get(uint64_t key, int sel, int kind, const char *frame)
{
	size_t h;
	struct series *s;

	if (nseries * 2 >= nindex)
		reindex();
	h = slot_hash(key, sel, kind) & (nindex - 1);
	for (; index_of[h]; h = (h + 1) & (nindex - 1)) {
		s = &series[index_of[h] - 1];
		if (s->key == key && s->sel == sel && s->kind == kind)
			return s;
	}
	series = xgrowarray(series, &capseries, nseries + 1, sizeof(*series));
	s = &series[nseries];
	memset(s, 0, sizeof(*s));
	s->key = key;
	s->sel = sel;
	s->kind = kind;
	s->frame = frame;
	s->mark_ns[0] = s->mark_ns[1] = now_ns();
	s->slope = NAN;
	index_of[h] = ++nseries;
	return s;
}

/* A process followed now; in the last interval, also one just detached. */
static int proc_live(const struct sink_proc *p)
{
	return !p->exited && (!p->detached || ending);
}

static pid_t parent_of(pid_t pid)
{
	for (const struct sink_proc *p = sink_procs(); p; p = p->next)
		if (p->pid == pid && proc_live(p))
			return p->ppid;
	return 0;
}

/* For a push: the parent of a process of the interval, gone or not. */
static pid_t parent_in_interval(pid_t pid)
{
	for (const struct sink_proc *p = sink_procs(); p; p = p->next)
		if (p->pid == pid)
			return p->ppid;
	return 0;
}

/* What each followed process holds, and every stack's series, now. */
static void gather(void)
{
	size_t nagg;
	const struct agg *aggs = aggregate_entries(&nagg);

	generation++;
	for (size_t i = 0; i < nagg; i++) {
		const struct agg *a = &aggs[i];
		const char *frame;
		struct series *s;
		uint64_t key;
		int sel;

		if (!a->held || !proc_live(a->proc))
			continue;
		sel = follow_selector_of(a->proc->pid, parent_of);
		if (sel < 0)
			continue;
		key = stack_key(a->stack, &frame);
		s = series_get(key, sel, (int)a->kind, frame);
		if (s->seen != generation) {
			s->seen = generation;
			s->held = 0;
		}
		s->held += a->held;
	}
	for (size_t i = 0; i < nseries; i++) {
		struct series *s = &series[i];
		uint64_t dt;

		if (s->seen != generation)
			s->held = 0;
		dt = now_ns() - s->mark_ns[0];
		s->growth = dt ? ((double)s->held - (double)s->mark_held[0]) * 1e9 / (double)dt : 0;
	}
}

static int cmp_held(const void *a, const void *b)
{
	const struct series *x = *(const struct series *const *)a;
	const struct series *y = *(const struct series *const *)b;

	if (x->sel != y->sel)
		return x->sel - y->sel;
	if (x->held != y->held)
		return x->held < y->held ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* At most --top series per selector, the heaviest, into out; how many. */
static size_t top_series(struct prom_stack *out)
{
	struct series **order = xcalloc(nseries ? nseries : 1, sizeof(*order));
	size_t n = 0, k = 0;

	for (size_t i = 0; i < nseries; i++)
		if (series[i].held)
			order[n++] = &series[i];
	qsort(order, n, sizeof(*order), cmp_held);
	for (size_t i = 0, run = 0; i < n; i++) {
		const struct series *s = order[i];

		run = i && order[i - 1]->sel == s->sel ? run + 1 : 0;
		if (run >= cfg->top)
			continue;
		out[k++] = (struct prom_stack){
			.target = cfg->sels[s->sel].name,
			.id = s->key,
			.frame = s->frame,
			.event = event_kind_names[s->kind],
			.held = s->held,
			.growth = s->growth,
			.slope = s->slope,
		};
	}
	free(order);
	return k;
}

static void my_usage(struct prom_health *h)
{
	struct rusage ru;
	struct vmstat vs;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		h->cpu_seconds = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
				 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (procfs_read_vmstat(getpid(), &vs) == 0 && vs.have)
		h->rss = vs.vm_rss;
}

/* The figures of one followed process. */
static void proc_figures(const struct sink_proc *p, int sel, struct prom_proc *pp,
			 struct prom_kind_bytes *kinds)
{
	static const struct kind_stats zero;
	struct vmstat vs = { 0 };
	size_t nagg;
	const struct agg *aggs = aggregate_entries(&nagg);

	procfs_read_vmstat(p->pid, &vs);
	*pp = (struct prom_proc){
		.target = cfg->sels[sel].name,
		.pid = p->pid,
		.comm = p->comm,
		.rss = vs.have ? vs.vm_rss : 0,
		.vmsize = vs.have ? vs.vm_size : 0,
		.kinds = kinds,
	};
	/* the allocator's blocks where its calls are seen, else the mappings:
	   not both, which would count the heap twice */
	uint64_t held[2] = { 0, 0 };
	int alloc = 0;

	for (size_t i = 0; i < nagg; i++)
		if (aggs[i].proc == p) {
			held[ev_is_alloc(aggs[i].kind)] += aggs[i].held;
			alloc |= ev_is_alloc(aggs[i].kind) && aggs[i].calls;
		}
	pp->held = held[alloc];
	for (int k = 0; k < EV_NKINDS; k++) {
		uint64_t calls, acquired;

		if (!(sink_config()->events & EV_BIT(k)))
			continue;
		sink_kind_totals(&p->stats[k], &zero, &calls, &acquired);
		kinds[pp->nkinds++] = (struct prom_kind_bytes){ event_kind_names[k], acquired };
	}
}

/* The metrics page, from what gather() found. */
static void publish_metrics(void)
{
	size_t np = 0, ns, nprocs = 0;
	struct prom_proc *procs;
	struct prom_kind_bytes *kinds;
	struct prom_stack *stacks;
	struct prom_health h = { 0 };
	struct push_stats ps = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!srv)
		return;
	for (const struct sink_proc *p = sink_procs(); p; p = p->next)
		nprocs++;
	procs = xcalloc(nprocs + 1, sizeof(*procs));
	kinds = xcalloc((nprocs + 1) * EV_NKINDS, sizeof(*kinds));
	for (const struct sink_proc *p = sink_procs(); p; p = p->next) {
		int sel = proc_live(p) ? follow_selector_of(p->pid, parent_of) : -1;

		if (sel >= 0) {
			proc_figures(p, sel, &procs[np], kinds + np * EV_NKINDS);
			np++;
		}
	}
	stacks = xcalloc(nseries + 1, sizeof(*stacks));
	ns = top_series(stacks);
	ring_totals(&h.records, &h.lost);
	h.stops = stops_total;
	my_usage(&h);
	h.targets = follow_count();
	h.max_targets = cfg->max_targets;
	h.stacks = sink_stack_table() ? stack_table_count(sink_stack_table()) : 0;
	h.stacks_folded = sink_stack_table() ? stack_table_folded(sink_stack_table()) : 0;
	if (cfg->push_url) {
		push_get_stats(&ps);
		h.push = 1;
		h.pushed = ps.pushed;
		h.push_failed = ps.failures;
		h.push_dropped = ps.dropped;
		h.push_spooled = ps.spooled;
	}
	f = open_memstream(&buf, &len);
	if (f) {
		int r = prom_write(f, procs, np, stacks, ns, &h);

		if (fclose(f) == 0 && r == 0)
			http_server_publish(srv, "/metrics", PROM_CONTENT_TYPE,
					    buf, len);
	}
	free(buf);
	free(stacks);
	free(kinds);
	free(procs);
}

/* Is this sample's event an allocator call ("malloc", "free (inherited)"...)? */
static int alloc_event(const char *name)
{
	for (int k = 0; k < EV_NKINDS && name; k++) {
		size_t n = strlen(event_kind_names[k]);

		if (ev_is_alloc(k) && !strncmp(name, event_kind_names[k], n) &&
		    (!name[n] || name[n] == ' '))
			return 1;
	}
	return 0;
}

/*
 * Of prof, the samples of selector sel (and of pid, unless 0), for a
 * push: the allocator's where its calls are recorded, else the
 * mappings' (brk, mmap): not both, which would count the heap twice.
 */
static size_t select_samples(const struct profile *prof, int sel, pid_t pid,
			     struct prof_sample *out)
{
	size_t n = 0;
	int alloc = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < prof->nsamples; i++) {
			const struct prof_sample *s = &prof->samples[i];

			if ((pid && s->pid != pid) ||
			    follow_selector_of(s->pid, parent_in_interval) != sel)
				continue;
			if (!pass)
				alloc |= alloc_event(s->event);
			else if (alloc_event(s->event) == alloc)
				out[n++] = *s;
		}
	}
	return n;
}

/* One profile to Pyroscope: prof's samples of sel (pid: of it alone). */
static void push_one(const struct profile *prof, struct prof_sample *buf, int sel, pid_t pid,
		     int64_t until)
{
	const char *labels[64];
	char pidtext[16];
	size_t nl = 0, len = 0;
	struct profile view = *prof;
	char *body = NULL;
	FILE *f;

	view.samples = buf;
	view.nsamples = select_samples(prof, sel, pid, buf);
	view.nprocesses = 0;
	view.nintervals = 0;
	if (!view.nsamples)
		return;
	labels[nl++] = "hostname";
	labels[nl++] = hostname;
	for (size_t i = 0; cfg->push_labels && cfg->push_labels[i] && nl < 60; i += 2) {
		labels[nl++] = cfg->push_labels[i];
		labels[nl++] = cfg->push_labels[i + 1];
	}
	if (pid) {
		snprintf(pidtext, sizeof(pidtext), "%d", (int)pid);
		labels[nl++] = "pid";
		labels[nl++] = pidtext;
	}
	labels[nl] = NULL;
	f = open_memstream(&body, &len);
	if (!f)
		return;
	if (pprof_write_pyroscope(f, &view) == 0 && fclose(f) == 0)
		push_submit(body, len, cfg->service_name ? cfg->service_name :
			    cfg->sels[sel].service, labels, interval_from, until);
	else
		warn_msg("cannot encode the profile of %s for --push", cfg->sels[sel].name);
	free(body);
}

static void push_interval(const struct run_info *ri)
{
	struct profile prof;
	struct prof_sample *buf;
	int64_t until = (int64_t)time(NULL);

	profile_build(&prof, ri, 1);
	buf = xcalloc(prof.nsamples + 1, sizeof(*buf));
	for (size_t sel = 0; sel < cfg->nsels; sel++) {
		if (!cfg->push_pid) {
			push_one(&prof, buf, (int)sel, 0, until);
			continue;
		}
		for (const struct sink_proc *p = sink_procs(); p; p = p->next)
			if (follow_selector_of(p->pid, parent_in_interval) == (int)sel)
				push_one(&prof, buf, (int)sel, p->pid, until);
	}
	free(buf);
	profile_release(&prof);
	interval_from = until;
}

/* -i: an interval ends (trace/timers.c, instead of a report). */
static void on_interval(int last, const struct run_info *ri)
{
	size_t j = 0;

	stops_total = ri->stops.total;
	gather();
	for (size_t i = 0; i < nseries; i++) {
		struct series *s = &series[i];
		struct suspect r;

		s->mark_held[0] = s->mark_held[1];
		s->mark_ns[0] = s->mark_ns[1];
		s->mark_held[1] = s->held;
		s->mark_ns[1] = now_ns();
		if (s->nhist == NHIST)
			memmove(s->hist, s->hist + 1, (NHIST - 1) * sizeof(*s->hist));
		else
			s->nhist++;
		s->hist[s->nhist - 1] = (double)s->held;
		s->slope = s->nhist >= 4 && series_suspect(s->hist, s->nhist, &r) ?
			r.slope / cfg->interval : NAN;
		/* a series that holds nothing any more is forgotten */
		if (s->seen == generation)
			series[j++] = *s;
	}
	if (j != nseries) {
		nseries = j;
		reindex();
	}
	if (cfg->push_url)
		push_interval(ri);
	report_interval_done();
	/* what was recorded of the processes gone is served and pushed: it goes */
	tracer_forget_gone(sink_proc_forget);
	follow_forget_ended();
	publish_metrics();
	(void)last;
}

static uint64_t agent_next_ns(void *self)
{
	(void)self;
	if (reload_asked)
		return now_ns();
	return next_scan_ns < next_metrics_ns ? next_scan_ns : next_metrics_ns;
}

static void agent_drain(void *self)
{
	uint64_t now = now_ns();

	(void)self;
	if (reload_asked) {
		reload_asked = 0;
		info_msg("SIGHUP: looking for processes now");
		next_scan_ns = now;
	}
	if (now >= next_scan_ns) {
		follow_scan();
		next_scan_ns = now_ns() + (uint64_t)(cfg->poll * 1e9);
	}
	if (now >= next_metrics_ns) {
		if (srv) {
			gather();
			publish_metrics();
		}
		next_metrics_ns = now + METRICS_PERIOD_NS;
	}
}

static const struct source_ops agent_ops = {
	.name = "agent",
	.next_drain_ns = agent_next_ns,
	.drain = agent_drain,
};

void agent_setup(const struct agent_config *c, struct trace_config *tc)
{
	char err[512];

	cfg = c;
	if (gethostname(hostname, sizeof(hostname) - 1) < 0)
		snprintf(hostname, sizeof(hostname), "unknown");
	if (c->metrics) {
		srv = http_server_start(c->metrics, err, sizeof(err));
		if (!srv)
			error_msg_and_die("%s", err);
		info_msg("serving metrics on http://%s/metrics", http_server_address(srv));
	}
	if (c->push_url) {
		struct push_config pc = {
			.url = c->push_url,
			.spool_dir = c->spool_dir,
			.spool_max = c->spool_max,
			.tenant = c->tenant,
		};

		if (push_start(&pc, err, sizeof(err)) < 0)
			error_msg_and_die("%s", err);
	}
	tc->agent = 1;
	tc->interval = c->interval;
	tc->on_interval = on_interval;
	follow_init(c->sels, c->nsels, c->max_targets, c->poll);
}

/*
 * SIGTERM, SIGINT, SIGQUIT on their way to cli's handler (a stop): the
 * second, or any once the targets are detached, ends the sender's time
 * at exit (async-signal-safe).
 */
static void on_stop(int sig)
{
	for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++) {
		if (stop_sigs[i] != sig)
			continue;
		if (stops_asked++ || exiting)
			push_cut_short();
		cli_stop[i].sa_handler(sig);
	}
}

/* on_stop() in front of cli's handlers (on), or cli's alone again. */
static void wrap_stop_signals(int on)
{
	for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++) {
		struct sigaction sa;

		if (!on) {
			if (cli_stop[i].sa_handler == SIG_DFL)
				continue;
			sigaction(stop_sigs[i], &cli_stop[i], NULL);
			continue;
		}
		if (sigaction(stop_sigs[i], NULL, &cli_stop[i]) < 0 ||
		    (cli_stop[i].sa_flags & SA_SIGINFO) || cli_stop[i].sa_handler == SIG_DFL ||
		    cli_stop[i].sa_handler == SIG_IGN) {
			cli_stop[i].sa_handler = SIG_DFL;	/* not ours to wrap */
			continue;
		}
		sa = cli_stop[i];
		sa.sa_handler = on_stop;
		sigaction(stop_sigs[i], &sa, NULL);
	}
}

int agent_run(void)
{
	int status;

	interval_from = (int64_t)time(NULL);
	source_register(&agent_ops, NULL);
	next_scan_ns = next_metrics_ns = now_ns();
	wrap_stop_signals(1);
	status = tracer_run();
	/*
	 * Every target is detached and runs on: the interval cut short is
	 * closed like a full one (the series, the metrics, a profile from
	 * its start to now), then the sender has its time, the network no
	 * longer in any target's way.
	 */
	exiting = 1;
	ending = 1;
	if (sink_recording())
		timers_final_report();
	if (cfg->push_url)
		push_stop(cfg->push_drain);
	wrap_stop_signals(0);
	if (srv)
		http_server_stop(srv);
	stack_key_release();
	return status;
}

/*
 * out-prom.c - the Prometheus text exposition format, version 0.0.4
 * (out-prom.h): what `memtap agent` serves at /metrics.
 *
 * The strings in labels come from the targets (comm, function names)
 * and are hostile: prom_label_value() makes each one a bounded, valid
 * UTF-8 value that no byte of it can end early, so that one line is one
 * series whatever a target calls its functions.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/out-prom.h"

/*
 * The length of the UTF-8 character at s (n bytes left), or 0 when the
 * bytes there are not one (a stray continuation byte, an overlong form,
 * a surrogate, a code point past U+10FFFF, a sequence cut short).
 * *ctl is set for a control character (C0, DEL, C1).
 */
static size_t utf8_char(const unsigned char *s, size_t n, int *ctl)
{
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	*ctl = 0;
	if (s[0] < 0x80) {
		*ctl = s[0] < 0x20 || s[0] == 0x7f;
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;	/* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;	/* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;	/* past U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	*ctl = s[0] == 0xc2 && s[1] < 0xa0;	/* U+0080 to U+009F */
	return len;
}

char *prom_label_value(const char *str, char buf[PROM_LABEL_BUF])
{
	const unsigned char *s = (const unsigned char *)(str != NULL ? str : "");
	size_t n = strlen((const char *)s);
	char clean[PROM_LABEL_MAX];
	size_t len = 0, fit = 0, o = 0;

	/* clean: valid UTF-8 without control characters but newline, at
	 * most PROM_LABEL_MAX bytes; fit: the last character boundary
	 * that leaves room for "..." */
	while (n > 0) {
		int ctl;
		size_t cl = utf8_char(s, n, &ctl);
		const unsigned char *from = s;
		size_t take = cl;

		if (cl == 0 || (ctl && *s != '\n')) {
			from = (const unsigned char *)"?";
			take = 1;
			cl = cl ? cl : 1;
		}
		if (len + take > PROM_LABEL_MAX) {
			len = fit;
			memcpy(clean + len, "...", 3);
			len += 3;
			break;
		}
		memcpy(clean + len, from, take);
		len += take;
		if (len <= PROM_LABEL_MAX - 3)
			fit = len;
		s += cl;
		n -= cl;
	}
	for (size_t i = 0; i < len; i++) {
		if (clean[i] == '\\' || clean[i] == '"') {
			buf[o++] = '\\';
			buf[o++] = clean[i];
		} else if (clean[i] == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = clean[i];
		}
	}
	buf[o] = '\0';
	return buf;
}

struct writer {
	FILE *f;
	int err;		/* errno of the first write that failed */
};

static void out(struct writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(struct writer *w, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return;
	errno = 0;
	va_start(ap, fmt);
	if (vfprintf(w->f, fmt, ap) < 0)
		w->err = errno ? errno : EIO;
	va_end(ap);
}

static void family(struct writer *w, const char *name, const char *type, const char *help)
{
	out(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample value of the format: %.17g, NaN, +Inf, -Inf. */
static const char *fmt_double(double v, char buf[32])
{
	if (isnan(v))
		return "NaN";
	if (isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	snprintf(buf, 32, "%.17g", v);
	return buf;
}

/* name{target=...,pid=...,comm=...} of process p, without the brace. */
static void proc_series(struct writer *w, const char *name, const struct prom_proc *p)
{
	char t[PROM_LABEL_BUF], c[PROM_LABEL_BUF];

	out(w, "%s{target=\"%s\",pid=\"%ld\",comm=\"%s\"", name, prom_label_value(p->target, t),
	    (long)p->pid, prom_label_value(p->comm, c));
}

enum proc_field { PROC_RSS, PROC_VMSIZE, PROC_HELD };

static void proc_family(struct writer *w, const struct prom_proc *p, size_t np, const char *name,
			const char *help, enum proc_field field)
{
	family(w, name, "gauge", help);
	for (size_t i = 0; i < np; i++) {
		uint64_t v = field == PROC_RSS ? p[i].rss : field == PROC_VMSIZE ? p[i].vmsize : p[i].held;

		proc_series(w, name, &p[i]);
		out(w, "} %" PRIu64 "\n", v);
	}
}

static void stack_series(struct writer *w, const char *name, const struct prom_stack *s)
{
	char t[PROM_LABEL_BUF], fr[PROM_LABEL_BUF], e[PROM_LABEL_BUF];

	out(w, "%s{target=\"%s\",stack_id=\"%016" PRIx64 "\",frame=\"%s\",event=\"%s\"} ", name,
	    prom_label_value(s->target, t), s->id, prom_label_value(s->frame, fr),
	    prom_label_value(s->event, e));
}

static void scalar(struct writer *w, const char *name, const char *type, const char *help, uint64_t v)
{
	family(w, name, type, help);
	out(w, "%s %" PRIu64 "\n", name, v);
}

static void write_health(struct writer *w, const struct prom_health *h)
{
	char d[32];

	scalar(w, "memtap_records_total", "counter", "Event records memtap has read.", h->records);
	scalar(w, "memtap_lost_records_total", "counter",
	       "Event records lost before memtap could read them.", h->lost);
	scalar(w, "memtap_stops_total", "counter", "Times memtap stopped a thread of a target.",
	       h->stops);
	family(w, "memtap_cpu_seconds_total", "counter",
	       "CPU time memtap itself has used, user and system, in seconds.");
	out(w, "memtap_cpu_seconds_total %s\n", fmt_double(h->cpu_seconds, d));
	scalar(w, "memtap_resident_memory_bytes", "gauge", "Resident set size of memtap itself, in bytes.",
	       h->rss);
	scalar(w, "memtap_targets", "gauge", "Processes memtap follows now.", h->targets);
	scalar(w, "memtap_max_targets", "gauge", "Most processes memtap follows at once.",
	       h->max_targets);
	scalar(w, "memtap_stacks", "gauge", "Stacks memtap knows.", h->stacks);
	scalar(w, "memtap_stacks_folded_total", "counter",
	       "Stacks folded into [other] to bound the series.", h->stacks_folded);
	if (!h->push)
		return;
	scalar(w, "memtap_push_profiles_total", "counter", "Profiles pushed to the profile store.",
	       h->pushed);
	scalar(w, "memtap_push_failures_total", "counter", "Pushes to the profile store that failed.",
	       h->push_failed);
	scalar(w, "memtap_push_dropped_total", "counter", "Profiles dropped without being pushed.",
	       h->push_dropped);
	scalar(w, "memtap_push_spooled", "gauge", "Profiles spooled on disk, waiting to be pushed.",
	       h->push_spooled);
}

int prom_write(FILE *f, const struct prom_proc *p, size_t np, const struct prom_stack *s, size_t ns,
	       const struct prom_health *h)
{
	struct writer w = { .f = f };
	char d[32];

	proc_family(&w, p, np, "memtap_process_rss_bytes",
		    "Resident set size of a followed process (VmRSS), in bytes.",
		    PROC_RSS);
	proc_family(&w, p, np, "memtap_process_virtual_memory_bytes",
		    "Virtual memory size of a followed process (VmSize), in bytes.",
		    PROC_VMSIZE);
	proc_family(&w, p, np, "memtap_process_held_bytes",
		    "Bytes a followed process holds now as memtap sees them.",
		    PROC_HELD);
	family(&w, "memtap_process_captured_bytes_total", "counter",
	       "Bytes a followed process acquired, by event kind, as memtap captured them.");
	for (size_t i = 0; i < np; i++) {
		for (size_t k = 0; k < p[i].nkinds; k++) {
			char e[PROM_LABEL_BUF];

			proc_series(&w, "memtap_process_captured_bytes_total", &p[i]);
			out(&w, ",event=\"%s\"} %" PRIu64 "\n", prom_label_value(p[i].kinds[k].event, e),
			    p[i].kinds[k].bytes);
		}
	}
	family(&w, "memtap_stack_held_bytes", "gauge", "Bytes held now by the allocations of a stack.");
	for (size_t i = 0; i < ns; i++) {
		stack_series(&w, "memtap_stack_held_bytes", &s[i]);
		out(&w, "%" PRIu64 "\n", s[i].held);
	}
	family(&w, "memtap_stack_growth_bytes_per_second", "gauge",
	       "Growth of the bytes a stack holds over the last interval, in bytes per second.");
	for (size_t i = 0; i < ns; i++) {
		stack_series(&w, "memtap_stack_growth_bytes_per_second", &s[i]);
		out(&w, "%s\n", fmt_double(s[i].growth, d));
	}
	family(&w, "memtap_leak_suspect_slope_bytes_per_second", "gauge",
	       "Slope of the bytes a leak-suspect stack holds, in bytes per second.");
	for (size_t i = 0; i < ns; i++) {
		if (isnan(s[i].slope))
			continue;
		stack_series(&w, "memtap_leak_suspect_slope_bytes_per_second", &s[i]);
		out(&w, "%s\n", fmt_double(s[i].slope, d));
	}
	if (h != NULL)
		write_health(&w, h);
	if (!w.err && fflush(f) != 0)
		w.err = errno ? errno : EIO;
	if (w.err) {
		errno = w.err;
		return -1;
	}
	return 0;
}

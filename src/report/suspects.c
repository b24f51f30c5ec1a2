/*
 * suspects.c - leak suspects by trend (output.h): the held bytes of
 * each stack at the end of every -i interval, their least-squares slope
 * over the interval index, and the rule that keeps caches that plateau
 * and batches that rise and fall out.
 *
 * The rule reads the running maximum of the series (the most held so
 * far), not the series: a leak that grows in large steps (an allocator
 * that takes memory a chunk at a time: flat stretches, then a jump) is
 * as steady there as one that grows in every interval, while a cache
 * that fills then plateaus flattens it in the last half, a single jump
 * fits no line, and what a batch gives back is measured apart.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/output.h"
#include "util/xmalloc.h"

/* The least share of its running maximum's variance a line must explain. */
#define SUSPECT_MIN_R2 0.7
/* The fewest intervals a suspect grew in: one or two jumps are no trend. */
#define SUSPECT_MIN_RISES 3

/*
 * Least-squares slope of y[from .. n) over the index; 0 under two
 * points.  With r2, also the share of y's variance the line explains
 * (0 when y is flat).
 */
static double ls_fit(const double *y, size_t from, size_t n, double *r2)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
	size_t m = n - from;

	if (r2)
		*r2 = 0;
	if (n < from + 2)
		return 0;
	for (size_t i = from; i < n; i++) {
		mx += (double)i;
		my += y[i];
	}
	mx /= (double)m;
	my /= (double)m;
	for (size_t i = from; i < n; i++) {
		sxy += ((double)i - mx) * (y[i] - my);
		sxx += ((double)i - mx) * ((double)i - mx);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (r2 && sxx > 0 && syy > 0)
		*r2 = sxy * sxy / (sxx * syy);
	return sxx > 0 ? sxy / sxx : 0;
}

/*
 * The relative uncertainty of a sampled stack's held bytes h: its
 * blocks of mean size s each kept with p = 1 - exp(-s / M) and weighed
 * s / p, the estimate of N = h / s of them has variance N s^2 (1 - p) / p.
 */
static double sampled_err(const struct profile *p, const struct prof_sample *s, double h)
{
	size_t tb = profile_find_type(p, "bytes"), tc = profile_find_type(p, "count");
	double mean = (double)p->run.sample_hi, size, keep;

	if (!p->run.sample_lo || !mean || h <= 0 || tb >= p->ntypes || tc >= p->ntypes ||
	    s->values[tc] <= 0)
		return 0;
	size = (double)s->values[tb] / (double)s->values[tc];
	keep = 1 - exp(-size / mean);
	if (!(keep > 0))
		return 1;
	return sqrt(h * size * (1 - keep) / keep) / h;
}

/*
 * The rule on one series y[0 .. n): r filled but for sample, per_hour
 * and err; -1 when y never rose (r not a candidate).  most: room for n.
 */
static int series_rule(const double *y, size_t n, double *most, struct suspect *r)
{
	double high = 0, prev = 0, most_slope, r2;

	memset(r, 0, sizeof(*r));
	r->slope = ls_fit(y, 0, n, NULL);
	for (size_t i = 0; i < n; i++) {
		if (y[i] > prev)
			r->grew++;
		if (y[i] > high)
			high = y[i];
		if (high - y[i] > (double)r->gave_back)
			r->gave_back = (uint64_t)(high - y[i]);
		prev = y[i];
		most[i] = high;
	}
	if (!(r->slope > 0) || !r->grew)
		return -1;
	most_slope = ls_fit(most, 0, n, &r2);
	r->late_slope = ls_fit(most, n / 2, n, NULL);
	r->high = high > 0 ? (uint64_t)high : 0;
	r->end = y[n - 1] > 0 ? (uint64_t)y[n - 1] : 0;
	/*
	 * Rising all along (a line fits the most held so far), still
	 * rising in the last half as fast as half the whole run's
	 * pace, and giving little back.
	 */
	r->suspect = n >= 4 && r->grew >= SUSPECT_MIN_RISES && r2 >= SUSPECT_MIN_R2 &&
		     most_slope > 0 && r->late_slope * 2 >= most_slope &&
		     r->gave_back * 4 <= r->high;
	return 0;
}

int series_suspect(const double *y, size_t n, struct suspect *r)
{
	double *most = xcalloc(n ? n : 1, sizeof(*most));
	int rose = series_rule(y, n, most, r) == 0;

	free(most);
	return rose && r->suspect;
}

static int cmp_suspects(const void *a, const void *b)
{
	const struct suspect *x = a, *y = b;

	if (x->suspect != y->suspect)
		return y->suspect - x->suspect;
	if (x->slope != y->slope)
		return x->slope < y->slope ? 1 : -1;
	return (x->sample > y->sample) - (x->sample < y->sample);
}

size_t profile_suspects(const struct profile *p, struct suspect **out)
{
	size_t n = p->nintervals, ns = p->nsamples, count = 0;
	double *series, *level, *most;
	struct suspect *res;
	double span;

	*out = NULL;
	if (!n || !ns)
		return 0;
	/* series[sample * n + i]: held (or net) at the end of interval i */
	series = xcalloc(ns * n, sizeof(*series));
	level = xcalloc(ns, sizeof(*level));
	most = xcalloc(n, sizeof(*most));
	for (size_t i = 0; i < n; i++) {
		const struct prof_interval *pi = &p->intervals[i];

		for (size_t j = 0; j < pi->nchanges; j++) {
			const struct prof_change *c = &pi->changes[j];

			if (c->sample >= ns)
				continue;
			if (p->intervals_held)
				level[c->sample] = (double)c->held;
			else
				level[c->sample] += (double)c->acquired - (double)c->released;
		}
		for (size_t s = 0; s < ns; s++)
			series[s * n + i] = level[s];
	}
	span = n > 1 ? (double)(p->intervals[n - 1].end_nanos - p->intervals[0].end_nanos) /
		(double)(n - 1) : (double)p->intervals[0].end_nanos;
	res = xcalloc(ns, sizeof(*res));
	for (size_t s = 0; s < ns; s++) {
		const double *y = series + s * n;
		struct suspect *r = &res[count];

		if (series_rule(y, n, most, r) < 0)
			continue;
		r->sample = s;
		r->per_hour = span > 0 ? r->slope * 3600e9 / span : 0;
		r->err = sampled_err(p, &p->samples[s], y[n - 1]);
		count++;
	}
	free(series);
	free(level);
	free(most);
	if (!count) {
		free(res);
		return 0;
	}
	qsort(res, count, sizeof(*res), cmp_suspects);
	*out = res;
	return count;
}

int write_suspects(FILE *f, const struct profile *p, const struct output_options *o)
{
	struct suspect *sus;
	size_t n = profile_suspects(p, &sus), nsus = 0, shown, top = o && o->top ? (size_t)o->top : 10;
	double secs;
	char a[32], b[32];

	if (!p->nintervals)
		return 0;
	secs = (double)p->intervals[p->nintervals - 1].end_nanos / 1e9 / (double)p->nintervals;
	while (nsus < n && sus[nsus].suspect)
		nsus++;
	fprintf(f, "Leak suspects: %zu stack%s whose %s rose steadily over %zu intervals of %.2f s\n",
		nsus, nsus == 1 ? "" : "s", p->intervals_held ? "held bytes" : "net bytes",
		p->nintervals, secs);
	shown = nsus < top ? nsus : top;
	for (size_t i = 0; i < shown; i++) {
		const struct suspect *r = &sus[i];
		const struct prof_sample *s = &p->samples[r->sample];

		out_human_bytes(a, sizeof(a), (int64_t)r->per_hour);
		fprintf(f, "  #%zu  %+.0f bytes/interval  %s/hour", i + 1, r->slope, a);
		if (r->err > 0)
			fprintf(f, " (+-%.0f%%, sampled)", 100 * r->err);
		out_human_bytes(a, sizeof(a), (int64_t)r->end);
		out_human_bytes(b, sizeof(b), (int64_t)r->gave_back);
		fprintf(f, "  grew in %zu of %zu  holds %s  gave back %s  pid %d (%s %s)\n",
			r->grew, p->nintervals, a, b, (int)s->pid, s->comm ? s->comm : "?",
			s->event ? s->event : "?");
		if (!s->nlocs)
			fprintf(f, "        [no stack]\n");
		for (size_t k = 0; k < s->nlocs; k++)
			if (s->locs[k] < p->nlocations)
				text_print_location(f, p, s->locs[k], o && o->no_demangle);
	}
	if (n > nsus)
		fprintf(f, "  (%zu other stack%s rose but stopped rising or gave back: not suspects)\n",
			n - nsus, n - nsus == 1 ? "" : "s");
	free(sus);
	return ferror(f) ? -1 : 0;
}

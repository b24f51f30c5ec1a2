/*
 * sample-unit - byte sampling (record/sample.c) against what it must
 * estimate: intervals of the right mean and shape, unbiased totals and
 * call-site shares on a simulated target allocating over 1 GiB in mixed
 * sizes (the same estimate for many seeds), and an --overhead budget
 * that converges.  Deterministic: fixed seeds.  Prints "ok" or what
 * failed.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "record/sample.h"

static int failures;

static void check(int cond, const char *what, double got, double want)
{
	if (!cond && failures++ < 20)
		printf("FAIL %s: got %.6g, want %.6g\n", what, got, want);
}

static void test_intervals(void)
{
	static const uint64_t means[] = { 4096, 65536, SAMPLE_MEAN_DEFAULT, 1 << 20 };
	struct sample_rng r;

	for (size_t m = 0; m < sizeof(means) / sizeof(means[0]); m++) {
		double sum = 0, over = 0, n = 1000000;

		sample_rng_init(&r, 42 + m);
		for (int i = 0; i < (int)n; i++) {
			uint64_t k = sample_interval(&r, means[m]);

			sum += (double)k;
			over += k > means[m];
		}
		check(fabs(sum / n / (double)means[m] - 1) < 0.01, "interval mean / M",
		      sum / n / (double)means[m], 1);
		/* geometric: P(k > M) = (1 - 1/M)^M ~ 1/e */
		check(fabs(over / n - exp(-1)) < 0.005, "P(interval > M)", over / n, exp(-1));
	}
	sample_rng_init(&r, 1);
	check(sample_interval(&r, 0) == 1, "interval, mean 0", 0, 1);
	check(sample_interval(&r, 1) == 1, "interval, mean 1", 0, 1);
}

static void test_weights(void)
{
	uint64_t m = SAMPLE_MEAN_DEFAULT;

	check(sample_keep_probability(0, m) == 0, "p(0)", sample_keep_probability(0, m), 0);
	check(fabs(sample_keep_probability(m, m) - (1 - exp(-1))) < 1e-5, "p(M)",
	      sample_keep_probability(m, m), 1 - exp(-1));
	check(sample_keep_probability(5, 1) == 1, "p(5), mean 1", sample_keep_probability(5, 1), 1);
	check(fabs(sample_weight_bytes(64 * m, m) / (64.0 * (double)m) - 1) < 1e-9,
	      "weight of a call of 64 M", sample_weight_bytes(64 * m, m), 64.0 * (double)m);
	check(fabs(sample_weight_bytes(16, m) / ((double)m + 8) - 1) < 1e-3,
	      "weight of a 16-byte call ~ M", sample_weight_bytes(16, m), (double)m);
	check(sample_weight_calls(0, m) == 0, "weight of a call of 0", sample_weight_calls(0, m), 0);
}

/*
 * Three call sites: many small calls, middling ones, a few large ones;
 * their sizes from a generator of their own, so the workload is the
 * same for every seed of the sampler.
 */
#define SITES 3

static uint64_t site_size(struct sample_rng *w, int site)
{
	switch (site) {
	case 0: return 16 + sample_rng_next(w) % 1009;			/* 16 B - 1 KiB */
	case 1: return 4096 + sample_rng_next(w) % (252 << 10);		/* 4 - 256 KiB */
	default: return (1 << 20) + sample_rng_next(w) % (7 << 20);	/* 1 - 8 MiB */
	}
}

static void test_estimates(uint64_t mean, int seeds)
{
	/* bytes per site: 45%, 35%, 20% of ~1.15 GiB */
	static const uint64_t quota[SITES] = { 540u << 20, 420u << 20, 240u << 20 };
	int worst_seed = -1;
	double worst = 0;

	for (int seed = 0; seed < seeds; seed++) {
		double est[SITES] = { 0 }, est_calls = 0, est_all = 0, all = 0;
		uint64_t truth[SITES] = { 0 }, calls = 0, kept = 0;
		struct sample_countdown c;
		struct sample_rng r, w;
		int site = 0;

		sample_rng_init(&r, 1000 + seed);
		sample_rng_init(&w, 7);
		c.left = (int64_t)sample_interval(&r, mean);
		/* interleave the sites, as a program does */
		for (;;) {
			int left = 0;

			for (int s = 0; s < SITES; s++)
				left |= truth[s] < quota[s];
			if (!left)
				break;
			site = (site + 1) % SITES;
			if (truth[site] >= quota[site])
				continue;
			uint64_t size = site_size(&w, site);

			truth[site] += size;
			calls++;
			if (sample_countdown_take(&c, size, &r, mean)) {
				kept++;
				est[site] += sample_weight_bytes(size, mean);
				est_calls += sample_weight_calls(size, mean);
			}
		}
		for (int s = 0; s < SITES; s++) {
			all += (double)truth[s];
			est_all += est[s];
		}
		check(all >= 1073741824.0, "bytes of the workload", all, 1073741824.0);
		check(fabs(est_all / all - 1) < 0.05, "estimated total / true total", est_all / all, 1);
		/*
		 * Calls are estimated with more noise than bytes (a small call
		 * weighs M / size calls); exact call totals come from the
		 * stubs' counters, the estimate only splits them by stack.
		 */
		check(fabs(est_calls / (double)calls - 1) < 0.10, "estimated calls / true calls",
		      est_calls / (double)calls, 1);
		for (int s = 0; s < SITES; s++) {
			double share = (double)truth[s] / all, got = est[s] / est_all;
			double e = fabs(got / share - 1);

			check(e < 0.10, "estimated share / true share of a site", got / share, 1);
			if (e > worst) {
				worst = e;
				worst_seed = seed;
			}
		}
		if (seed == 0)
			printf("mean %llu: %llu calls, %llu kept, total %.4f, calls %.4f\n",
			       (unsigned long long)mean, (unsigned long long)calls,
			       (unsigned long long)kept, est_all / all, est_calls / (double)calls);
	}
	printf("mean %llu: worst share error %.2f%% (seed %d of %d)\n",
	       (unsigned long long)mean, worst * 100, worst_seed, seeds);
}

/*
 * --overhead: a target that allocates small calls at a steady rate;
 * the kept calls of each period follow the mean in force.  The mean
 * must settle where the kept calls cost the budget, within the bounds.
 */
static void test_budget(void)
{
	const double cpu_ns = 10e6, cost_ns = 2000, percent = 5;
	const uint64_t bytes = 400u << 20;	/* per 10 ms of CPU */
	struct sample_budget b = {
		.percent = percent, .min_mean = 4096, .max_mean = 1u << 30, .mean = 4096,
	};
	double want = (double)bytes / (percent / 100 * cpu_ns / cost_ns);

	for (int i = 0; i < 40; i++) {
		uint64_t kept = bytes / b.mean;

		sample_budget_update(&b, bytes, cpu_ns, kept, cost_ns);
	}
	check(fabs((double)b.mean / want - 1) < 0.05, "mean under a 5% budget", (double)b.mean, want);
	/* a cheap target: the bound holds */
	b.max_mean = 1u << 20;
	for (int i = 0; i < 40; i++)
		sample_budget_update(&b, bytes, cpu_ns, bytes / b.mean, cost_ns);
	check(b.mean == 1u << 20, "mean at its upper bound", (double)b.mean, 1u << 20);
	/* one odd period moves the mean by 4 at most */
	uint64_t before = b.mean;

	sample_budget_update(&b, bytes, cpu_ns, bytes, cost_ns);
	check(b.mean * 4 >= before, "one period's change", (double)b.mean, (double)before / 4);
	/* nothing measured: nothing changes */
	before = b.mean;
	sample_budget_update(&b, 0, cpu_ns, 0, 0);
	sample_budget_update(&b, bytes, 0, 5, cost_ns);
	check(b.mean == before, "a period without bytes or CPU", (double)b.mean, (double)before);
}

int main(void)
{
	test_intervals();
	test_weights();
	test_estimates(SAMPLE_MEAN_DEFAULT, 20);
	test_estimates(64 << 10, 5);
	test_budget();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

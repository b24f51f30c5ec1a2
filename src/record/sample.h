/*
 * sample.h - byte sampling of allocator calls (sample.c): the intervals
 * that in-target stubs count down, the weight of each kept call, and
 * the mean interval that keeps the cost of tracing within a budget
 * (--sample, --overhead).
 *
 * Sampling is a Poisson process over the bytes a thread allocates, as
 * in jemalloc's prof_sample and tcmalloc's sampler: the gaps between
 * sample points are independent exponential variables of mean M bytes.
 * A call of size s is kept when its bytes hold at least one point,
 * which happens with probability
 *
 *	p(s) = 1 - exp(-s / M)
 *
 * whatever came before (the process has no memory).  Weighing a kept
 * call as 1 / p(s) calls and s / p(s) bytes makes every sum of kept
 * calls - per stack, per function, in all - an unbiased estimate of
 * the true sum.  Large calls are kept almost always and weigh almost
 * their size; a call of M / 100 bytes is kept once in ~100 and weighs
 * ~M bytes.  A call of size 0 holds no byte and is never kept.
 *
 * Bytes are whole, so the process is the discrete one: each byte is a
 * sample point with probability 1 / M, gaps are geometric of mean M,
 * and p(s) = 1 - (1 - 1/M)^s, which is 1 - exp(-s / M) to within
 * s / M^2.
 *
 * In the target a countdown per thread does it: each call subtracts
 * its size, and the call that takes the countdown to zero or below is
 * kept.  The distance from the end of a kept call to the next point is
 * again a fresh interval (the process has no memory), so the countdown
 * restarts at the next interval, however far past zero the call went:
 * all the points inside one call make one sample.  A stub takes that
 * interval from a table memtap fills and refills as they are used.
 * sample_countdown_take() is the algorithm, for memtap and the tests.
 *
 * Nothing here allocates; every function is safe for any input.
 */
#ifndef MEMTAP_SAMPLE_H
#define MEMTAP_SAMPLE_H

#include <stdint.h>

/*
 * The default mean interval: 128 KiB.  A target allocating 1 GiB keeps
 * ~8,200 calls, enough for its total within 5% and the share of any
 * call site of a tenth of the bytes or more within 10% (tests/unit/
 * sample-unit.c); a loop of small calls keeps about one in 500.
 * jemalloc (512 KiB) and tcmalloc (2 MiB) sample more sparsely, as
 * they run all the time, not for a diagnosis.
 */
#define SAMPLE_MEAN_DEFAULT (UINT64_C(128) << 10)

/* A small, fast generator (xoshiro128+ family); never all zero. */
struct sample_rng {
	uint64_t s[2];
};

/* Seed r from seed (any value, 0 included). */
void sample_rng_init(struct sample_rng *r, uint64_t seed);

/* The next 64 random bits. */
uint64_t sample_rng_next(struct sample_rng *r);

/*
 * One exponential interval of mean `mean` bytes, rounded to a whole
 * number of bytes, at least 1 and at most 2^62 (mean 0 counts as 1).
 */
uint64_t sample_interval(struct sample_rng *r, uint64_t mean);

/* p(size): the probability that a call of size bytes is kept. */
double sample_keep_probability(uint64_t size, uint64_t mean);

/* What one kept call of size bytes stands for: 1 / p calls, size / p bytes. */
double sample_weight_calls(uint64_t size, uint64_t mean);
double sample_weight_bytes(uint64_t size, uint64_t mean);

/* A thread's countdown, as the stub keeps it; start it at an interval. */
struct sample_countdown {
	int64_t left;		/* bytes to the next sample point */
};

/*
 * A call of size bytes: subtract it; returns 1 when the call is kept
 * (the countdown reached zero or below), and then restarts the
 * countdown at an interval of mean `mean` drawn from r.
 */
int sample_countdown_take(struct sample_countdown *c, uint64_t size,
			  struct sample_rng *r, uint64_t mean);

/*
 * --overhead: the mean interval that keeps the cost of the kept calls
 * near `percent` of the target's CPU time.
 *
 * Each period (a drain interval, some ms) memtap gives what it saw:
 * bytes allocated (exact, from the stubs' counters), the target's CPU
 * time, how many calls were kept, and the cost per kept call measured
 * in that period (ns: in the stub, and what memtap's own work on it
 * costs the target).  The update aims at the mean M for which the
 * expected number of kept calls, bytes / M, costs the budget; it moves
 * at most by a factor of 4 per period, so that one odd period cannot
 * swing sampling, and stays within [min_mean, max_mean].
 */
struct sample_budget {
	double percent;		/* budget, % of the target's CPU time (> 0) */
	uint64_t min_mean;	/* bounds of the mean interval, bytes */
	uint64_t max_mean;
	uint64_t mean;		/* the mean in force: start value, then each update's */
	double cost_ns;		/* smoothed cost per kept call, ns (0 = none yet) */
};

/*
 * One period's figures; returns the new mean (also b->mean).  A period
 * with no CPU time or no bytes changes nothing; kept == 0 keeps the
 * last cost (none measured: the mean is left as it is).
 */
uint64_t sample_budget_update(struct sample_budget *b, uint64_t bytes, double cpu_ns,
			      uint64_t kept, double cost_ns);

#endif /* MEMTAP_SAMPLE_H */

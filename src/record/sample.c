/*
 * sample.c - byte sampling of allocator calls: intervals, weights, and
 * the adaptive mean of --overhead.  See sample.h for the model.
 */
#include "config.h"

#include <math.h>

#include "record/sample.h"

#define INTERVAL_MAX (UINT64_C(1) << 62)

/* splitmix64: spreads any seed over the generator's state */
static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void sample_rng_init(struct sample_rng *r, uint64_t seed)
{
	r->s[0] = splitmix(&seed);
	r->s[1] = splitmix(&seed);
	if (!r->s[0] && !r->s[1])
		r->s[1] = 1;
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoroshiro128+ */
uint64_t sample_rng_next(struct sample_rng *r)
{
	uint64_t s0 = r->s[0], s1 = r->s[1], result = s0 + s1;

	s1 ^= s0;
	r->s[0] = rotl(s0, 24) ^ s1 ^ (s1 << 16);
	r->s[1] = rotl(s1, 37);
	return result;
}

/* log(1 - 1/mean): the log of the chance that a byte is no point */
static double log_miss(uint64_t mean)
{
	return mean <= 1 ? -INFINITY : log1p(-1.0 / (double)mean);
}

uint64_t sample_interval(struct sample_rng *r, uint64_t mean)
{
	/* u uniform in (0, 1]: the high 53 bits, plus one */
	double u = (double)((sample_rng_next(r) >> 11) + 1) * 0x1p-53;
	double lm = log_miss(mean), k;

	if (lm == -INFINITY)
		return 1;
	/* geometric: the first k with (1 - 1/M)^k <= u */
	k = ceil(log(u) / lm);
	if (!(k >= 1))
		return 1;
	if (k >= (double)INTERVAL_MAX)
		return INTERVAL_MAX;
	return (uint64_t)k;
}

double sample_keep_probability(uint64_t size, uint64_t mean)
{
	double lm = log_miss(mean);

	if (!size)
		return 0;
	if (lm == -INFINITY)
		return 1;
	return -expm1((double)size * lm);
}

double sample_weight_calls(uint64_t size, uint64_t mean)
{
	double p = sample_keep_probability(size, mean);

	return p > 0 ? 1 / p : 0;
}

double sample_weight_bytes(uint64_t size, uint64_t mean)
{
	return (double)size * sample_weight_calls(size, mean);
}

int sample_countdown_take(struct sample_countdown *c, uint64_t size,
			  struct sample_rng *r, uint64_t mean)
{
	if (!size)
		return 0;
	if (size > INTERVAL_MAX)
		size = INTERVAL_MAX;
	if (c->left > 0 && (uint64_t)c->left > size) {
		c->left -= (int64_t)size;
		return 0;
	}
	c->left = (int64_t)sample_interval(r, mean);
	return 1;
}

uint64_t sample_budget_update(struct sample_budget *b, uint64_t bytes, double cpu_ns,
			      uint64_t kept, double cost_ns)
{
	double allowed, target, lo, hi;

	if (!(cpu_ns > 0) || !bytes || !(b->percent > 0))
		return b->mean;
	if (kept && cost_ns > 0)
		b->cost_ns = b->cost_ns > 0 ? (b->cost_ns + cost_ns) / 2 : cost_ns;
	if (!(b->cost_ns > 0))
		return b->mean;
	/* the kept calls the budget pays for in such a period */
	allowed = b->percent / 100 * cpu_ns / b->cost_ns;
	if (allowed < 1)
		allowed = 1;
	/*
	 * Kept calls go as 1 / M (exactly so for calls much smaller than M,
	 * fewer for large ones): scale what this period kept; with nothing
	 * kept, take bytes / M as the expected count.
	 */
	if (kept)
		target = (double)(b->mean ? b->mean : 1) * (double)kept / allowed;
	else
		target = (double)bytes / allowed;
	lo = (double)(b->mean ? b->mean : 1) / 4;
	hi = (double)(b->mean ? b->mean : 1) * 4;
	if (target < lo)
		target = lo;
	if (target > hi)
		target = hi;
	if (target < (double)b->min_mean)
		target = (double)b->min_mean;
	if (b->max_mean && target > (double)b->max_mean)
		target = (double)b->max_mean;
	if (target < 1)
		target = 1;
	b->mean = (uint64_t)target;
	return b->mean;
}

/*
 * stub-clock.c - the in-target stubs' times (stub-abi.h R_TIME) as
 * CLOCK_MONOTONIC nanoseconds (arch.h): the CPU's counter
 * (arch_counter_read()) against clock_gettime, the same on every CPU.
 *
 * A pair is the counter read on each side of a clock_gettime, the
 * narrowest of a few tries, its middle taken.  A raw value is converted
 * from the last pair (read at each batch, a moment after the records it
 * converts: the rate's error counts over that moment only), with the
 * rate from the first pair to the last; a pair read over more than
 * PAIR_WIDE_NS (memtap preempted between the reads) is not taken.
 */
#include "config.h"

#include <time.h>

#include "arch/arch.h"

#define PAIR_TRIES	8
#define PAIR_WIDE_NS	20000u	/* a pair read over longer (preempted): not used */
#define START_NS	2000000u	/* the first rate: over 2 ms at least */

static struct {
	int on, off;
	uint64_t c0, m0;	/* the first pair */
	uint64_t c, m;		/* the last one */
	double rate;		/* ns per tick, from the first pair to the last */
} clk;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A pair; the ticks it was read over. */
static uint64_t pair(uint64_t *c, uint64_t *m)
{
	uint64_t best = ~(uint64_t)0;

	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t a = arch_counter_read(), t = mono_ns(), b = arch_counter_read();

		if (b >= a && b - a < best) {
			best = b - a;
			*c = a + (b - a) / 2;
			*m = t;
		}
	}
	if (best == ~(uint64_t)0) {	/* never forward: the check says so */
		*c = arch_counter_read();
		*m = mono_ns();
	}
	return best;
}

int arch_stub_clock_start(const char **why)
{
	uint64_t c, m;

	if (clk.on)
		return 0;
	if (clk.off) {
		*why = "the CPU's counter strayed from CLOCK_MONOTONIC";
		return -1;
	}
	if (!(arch_cpu_features() & ARCH_CPU_COUNTER)) {
		*why = "the CPU has no counter of a constant rate read alike by every CPU";
		return -1;
	}
	pair(&clk.c0, &clk.m0);
	do {
		struct timespec ts = { 0, START_NS };

		nanosleep(&ts, NULL);
		pair(&c, &m);
	} while (m - clk.m0 < START_NS);
	if (c <= clk.c0) {
		*why = "the CPU's counter does not advance";
		return -1;
	}
	clk.rate = (double)(m - clk.m0) / (double)(c - clk.c0);
	/* 10 MHz to 100 GHz: the counters of CPUs */
	if (clk.rate < 0.01 || clk.rate > 100.0) {
		*why = "the CPU's counter runs at a rate no CPU has";
		return -1;
	}
	clk.c = c;
	clk.m = m;
	clk.on = 1;
	return 0;
}

int arch_stub_clock_sync(const char **why)
{
	uint64_t c, m, w;
	double expect, err;

	if (!clk.on) {
		*why = "the CPU's counter is not in use";
		return -1;
	}
	/* a pair read over too long (memtap preempted) keeps the last one */
	w = pair(&c, &m);
	if (w != ~(uint64_t)0 && (double)w * clk.rate > PAIR_WIDE_NS)
		return 0;
	/* the rate so far: a counter that jumps or stops leaves it */
	expect = (double)clk.m0 + (double)(int64_t)(c - clk.c0) * clk.rate;
	err = expect - (double)m;
	if (c < clk.c || m < clk.m || err > (double)(m - clk.m0) / 100 + 1e6 ||
	    -err > (double)(m - clk.m0) / 100 + 1e6) {
		clk.on = 0;
		clk.off = 1;
		*why = "the CPU's counter strayed from CLOCK_MONOTONIC";
		return -1;
	}
	clk.c = c;
	clk.m = m;
	if (c > clk.c0 && m - clk.m0 >= START_NS)
		clk.rate = (double)(m - clk.m0) / (double)(c - clk.c0);
	return 0;
}

int arch_stub_clock_ns(uint64_t raw, uint64_t *ns)
{
	double d;

	if (!clk.on)
		return -1;
	d = (double)(int64_t)(raw - clk.c) * clk.rate + (double)clk.m;
	/* any raw value (the target's word): no conversion out of range */
	*ns = d <= 0 ? 0 : d >= 1.8e19 ? UINT64_MAX : (uint64_t)d;
	return 0;
}

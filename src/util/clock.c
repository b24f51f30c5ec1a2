/*
 * clock.c - memtap's clock (clock.h).
 */
#include "config.h"

#include <time.h>

#include "util/clock.h"

uint64_t start_ns;
int64_t start_wall_ns;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void clock_start(void)
{
	struct timespec ts;

	start_ns = now_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	start_wall_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

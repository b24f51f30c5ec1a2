/*
 * leak-rate.c - a service that leaks at a known rate, for memtap agent:
 *
 *   leak-rate BYTES_PER_SECOND [BLOCK]
 *
 * Prints "ready PID" and runs until killed.  Every 100 ms of wall
 * time (caught up after a stall, so that the rate holds on a loaded
 * machine) leak_here() mallocs BLOCK bytes (default 64 KiB) as many
 * times as the rate asks, and keeps them; churn_here() mallocs and
 * frees a block, which holds nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static __attribute__((noinline)) void *leak_here(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 0x5a, n);
	return p;
}

static __attribute__((noinline)) void churn_here(size_t n)
{
	char *volatile p = malloc(n);

	if (p)
		p[0] = 1;
	free(p);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	unsigned long rate = argc > 1 ? strtoul(argv[1], NULL, 10) : 1048576;
	unsigned long block = argc > 2 ? strtoul(argv[2], NULL, 10) : 65536;
	uint64_t t0 = now_ms(), leaked = 0;
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		uint64_t due = (now_ms() - t0) / 100 * (rate / 10);

		while (leaked + block <= due) {
			if (!leak_here(block))
				return 1;
			leaked += block;
		}
		churn_here(block);
		nanosleep(&tick, NULL);
	}
}

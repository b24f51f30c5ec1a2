/*
 * leak-rate.c - a service that leaks from a known function, for memtap
 * agent:
 *
 *   leak-rate BYTES_PER_SECOND [BLOCK]
 *     prints "ready PID" and runs until killed: every 100 ms of wall
 *     time (caught up after a stall, so that the rate holds on a loaded
 *     machine) leak_here() mallocs BLOCK bytes (default 64 KiB) as many
 *     times as the rate asks, and keeps them;
 *   leak-rate -n COUNT [BLOCK]
 *     prints "ready PID", and at each SIGUSR1 leak_here() mallocs COUNT
 *     blocks and keeps them, then "leaked BYTES" (the total so far);
 *     runs until killed;
 *   leak-rate -N COUNT [BLOCK]
 *     as -n, without churn_here(): the process allocates nothing but
 *     leak_here()'s blocks once it is ready.
 * Otherwise churn_here() mallocs and frees a block every 10 ms, which
 * holds nothing.  stdout is unbuffered: no stdio buffer is malloc'd, so
 * a process holds exactly what it leaked however early memtap attaches.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t go;

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

static void on_usr1(int sig)
{
	(void)sig;
	go++;
}

int main(int argc, char **argv)
{
	int gated = argc > 2 && (!strcmp(argv[1], "-n") || !strcmp(argv[1], "-N"));
	int churn = !gated || strcmp(argv[1], "-N");
	unsigned long n = argc > 1 ? strtoul(argv[1 + gated], NULL, 10) : 1048576;
	unsigned long block = argc > 2 + gated ? strtoul(argv[2 + gated], NULL, 10) : 65536;
	uint64_t t0 = now_ms(), leaked = 0;
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	/* unbuffered: no stdio buffer malloc'd, whenever memtap attaches */
	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGUSR1, on_usr1);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (!gated) {
			uint64_t due = (now_ms() - t0) / 100 * (n / 10);

			while (leaked + block <= due) {
				if (!leak_here(block))
					return 1;
				leaked += block;
			}
		}
		while (gated && go) {
			go--;
			for (unsigned long i = 0; i < n; i++)
				if (!leak_here(block))
					return 1;
			leaked += (uint64_t)n * block;
			printf("leaked %llu\n", (unsigned long long)leaked);
			fflush(stdout);
		}
		if (churn)
			churn_here(block);
		nanosleep(&tick, NULL);
	}
}

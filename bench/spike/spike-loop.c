/*
 * spike-loop.c - the workload of the detour spike: T threads, each N
 * iterations of p = malloc(size); write it; check it; free(p), with
 * sizes 16..520 (multiples of 8) cycling, so that glibc's tcache serves
 * every call and the loop is as cheap as malloc gets.
 *
 *   spike-loop [-t THREADS] [-n ITERS] [-d DEPTH]
 *
 * DEPTH (default 40, ~5 KiB): the calls are made DEPTH frames deep, so
 * that 8 KiB of stack above malloc's entry are there to be copied.
 * Prints, after the loop:
 *   WALL_NS <ns of the timed loop, all threads, wall clock>
 *   NS_PER_ITER <WALL_NS * THREADS / (THREADS * ITERS)>   (one thread's view)
 *   CPU_NS <CPU time of the process during the loop, all threads>
 *   EXPECT malloc <calls> <bytes>
 *   EXPECT free <calls>
 *   MINFLT <minor page faults of the process>
 * then OK (exit 0) or CORRUPT (exit 1).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

static unsigned long iters = 1000000;
static int depth = 40;
static pthread_barrier_t start;

struct result {
	unsigned long calls, bytes;
	int bad;
};

static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void loop(struct result *r, int d, unsigned char pat)
{
	char pad[64];

	if (d > 0) {
		memset(pad, d, sizeof(pad));
		escape(pad);
		loop(r, d - 1, pat);
		escape(pad);
		return;
	}
	for (unsigned long i = 0; i < iters; i++) {
		size_t sz = 16 + ((i * 7) % 64) * 8;
		unsigned char *p = malloc(sz);

		escape(p);
		if (!p) {
			r->bad = 1;
			return;
		}
		p[0] = pat;
		p[sz - 1] = pat;
		escape(p);
		if (p[0] != pat || p[sz - 1] != pat)
			r->bad = 1;
		free(p);
		__asm__ volatile("" : : : "memory");
		r->calls++;
		r->bytes += sz;
	}
}

static void *worker(void *arg)
{
	struct result *r = arg;

	pthread_barrier_wait(&start);
	loop(r, depth, (unsigned char)(0x11 + ((uintptr_t)arg >> 4)));
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, opt, bad = 0;
	unsigned long calls = 0, bytes = 0;
	struct result *r;
	pthread_t *tids;
	uint64_t t0, t1, c0, c1;

	while ((opt = getopt(argc, argv, "t:n:d:")) != -1) {
		switch (opt) {
		case 't': threads = atoi(optarg); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'd': depth = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: spike-loop [-t THREADS] [-n ITERS] [-d DEPTH]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 256 || depth < 0 || depth > 1000) {
		fprintf(stderr, "spike-loop: bad -t or -d\n");
		return 2;
	}
	r = calloc(threads, sizeof(*r) + 64);
	tids = calloc(threads, sizeof(*tids));
	if (!r || !tids)
		return 99;
	pthread_barrier_init(&start, NULL, threads + 1);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, (char *)r + i * (sizeof(*r) + 64)) != 0)
			return 99;
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	pthread_barrier_wait(&start);
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < threads; i++) {
		struct result *x = (struct result *)((char *)r + i * (sizeof(*r) + 64));

		calls += x->calls;
		bytes += x->bytes;
		bad |= x->bad;
	}
	printf("WALL_NS %llu\n", (unsigned long long)(t1 - t0));
	printf("NS_PER_ITER %.2f\n", (double)(t1 - t0) / (double)iters);
	printf("CPU_NS %llu\n", (unsigned long long)(c1 - c0));
	printf("EXPECT malloc %lu %lu\n", calls, bytes);
	printf("EXPECT free %lu\n", calls);
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("MINFLT %ld\n", ru.ru_minflt);
	}
	printf(bad ? "CORRUPT\n" : "OK\n");
	return bad;
}

/*
 * alloc-loop.c - known malloc/calloc/realloc/free calls from T threads.
 *
 *   alloc-loop [-t THREADS] [-n ITERS] [-s SECONDS] [-l LEAK [-k BLOCKS]] [-e]
 *
 * Each thread runs ITERS iterations (or as many as fit in SECONDS) of
 * malloc, calloc, realloc, free, free, checking the memory's contents,
 * and the main thread leaks LEAK bytes (BLOCKS blocks of LEAK bytes)
 * first.  At the end it prints what a
 * tracer must have seen from the calls of this executable:
 *
 *   EXPECT <function> <calls> <bytes>
 *   EXPECT live <bytes>
 *
 * then "OK" (exit 0), or "CORRUPT" (exit 1) if memory was wrong.  With
 * -e, it calls empty_fn() ITERS times instead (the int3 round trip).
 * SIGUSR2 ends a -s run early.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct counts {
	unsigned long n;
	unsigned long mbytes, cbytes, rbytes;
	int bad;
};

static unsigned long iters = 1000;
static double seconds;
static volatile sig_atomic_t stop;

static void on_usr2(int sig)
{
	(void)sig;
	stop = 1;
}

/* keep the compiler from eliding or merging the calls */
static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* no tail call: the caller of free stays this executable */
static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

__attribute__((noinline)) void empty_fn(unsigned long i)
{
	__asm__ volatile("" : : "r"(i) : "memory");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void one(struct counts *c, unsigned long i, unsigned char pat)
{
	size_t sz1 = 16 + (i % 64) * 8, sz2 = 1 + i % 7, sz3 = sz1 * 2;
	unsigned char *p, *q;

	p = malloc(sz1);
	escape(p);
	memset(p, pat, sz1);
	q = calloc(sz2, 24);
	escape(q);
	for (size_t k = 0; k < sz2 * 24; k++)
		if (q[k])
			c->bad = 1;
	p = realloc(p, sz3);
	escape(p);
	for (size_t k = 0; k < sz1; k++)
		if (p[k] != pat)
			c->bad = 1;
	free(q);
	barrier();
	free(p);
	barrier();
	c->n++;
	c->mbytes += sz1;
	c->cbytes += sz2 * 24;
	c->rbytes += sz3;
}

static void *worker(void *arg)
{
	struct counts *c = arg;
	unsigned char pat = (unsigned char)(0x11 + ((uintptr_t)arg >> 4));
	double end = seconds > 0 ? now() + seconds : 0;

	for (unsigned long i = 0; end ? now() < end && !stop : i < iters; i++)
		one(c, i, pat);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, opt, empty = 0;
	unsigned long leak = 0, nleak = 1;
	struct counts *c, total = { 0 };
	pthread_t *tids;
	void *leaked = NULL;

	while ((opt = getopt(argc, argv, "t:n:s:l:k:e")) != -1) {
		switch (opt) {
		case 't': threads = atoi(optarg); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 's': seconds = atof(optarg); break;
		case 'l': leak = strtoul(optarg, NULL, 0); break;
		case 'k': nleak = strtoul(optarg, NULL, 0); break;
		case 'e': empty = 1; break;
		default:
			fprintf(stderr, "usage: alloc-loop [-t N] [-n ITERS] [-s SECS] [-l LEAK [-k N]] [-e]\n");
			return 2;
		}
	}
	signal(SIGUSR2, on_usr2);
	if (empty) {
		for (unsigned long i = 0; i < iters; i++)
			empty_fn(i);
		printf("EXPECT empty_fn %lu 0\nOK\n", iters);
		return 0;
	}
	for (unsigned long i = 0; leak && i < nleak; i++) {
		leaked = malloc(leak);
		escape(leaked);
		memset(leaked, 0x5a, leak);
	}
	if (!leak)
		nleak = 0;
	c = calloc(threads, sizeof(*c));
	tids = calloc(threads, sizeof(*tids));
	if (!c || !tids)
		return 99;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, &c[i]) != 0)
			return 99;
	for (int i = 0; i < threads; i++) {
		pthread_join(tids[i], NULL);
		total.n += c[i].n;
		total.mbytes += c[i].mbytes;
		total.cbytes += c[i].cbytes;
		total.rbytes += c[i].rbytes;
		total.bad |= c[i].bad;
	}
	/* the two bookkeeping callocs above are this executable's too */
	printf("EXPECT malloc %lu %lu\n", total.n + nleak, total.mbytes + nleak * leak);
	printf("EXPECT calloc %lu %lu\n", total.n + 2,
	       total.cbytes + threads * (unsigned long)(sizeof(*c) + sizeof(*tids)));
	printf("EXPECT realloc %lu %lu\n", total.n, total.rbytes);
	free(c);
	free(tids);
	printf("EXPECT free %lu 0\n", 2 * total.n + 2);
	printf("EXPECT live %lu\n", nleak * leak);
	if (total.bad) {
		printf("CORRUPT\n");
		return 1;
	}
	printf("OK\n");
	fflush(stdout);
	escape(leaked);
	return 0;
}

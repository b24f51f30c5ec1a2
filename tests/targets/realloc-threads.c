/*
 * realloc-threads.c - threads that malloc, realloc and free in a tight
 * loop, so that a block one thread's realloc frees is handed to another
 * thread at once (musl's allocator does so; glibc's per-thread caches
 * seldom), with known totals.  Plain C for any libc: the tests build it
 * with musl-gcc too (tests/realloc-threads.test).
 *
 *   realloc-threads [-t THREADS] [-n ITERS]
 *
 * Each iteration of a thread: p = malloc(a), p = realloc(p, b) (larger:
 * most often moved), p = realloc(p, c) (smaller; every other time
 * reallocarray(p, c / 8, 8)), every 16th time a realloc(p, huge) that
 * fails and leaves p as it was, then free(p).
 * Sizes vary with the iteration, so that the block a free or a realloc
 * gives back is told apart by its size.  Once every thread is done,
 * main() prints, for the process,
 *
 *   EXPECT <pid> <kind> <calls> <acquired> <released> <failed>
 *
 * for malloc, realloc, reallocarray and free (a realloc releases the
 * block it was given, a free the block it frees, as memtap weighs
 * them), then "OK",
 * and exits with the threads still in their last wait: none of them
 * ends, so that no C library frees what a thread caches at its end
 * (glibc's tcache), and stdout has a buffer of its own (no malloc).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64

enum kind { K_MALLOC, K_REALLOC, K_REALLOCARRAY, K_FREE, K_N };

static const char *const names[K_N] = { "malloc", "realloc", "reallocarray", "free" };

struct counts {
	unsigned long calls[K_N], acquired[K_N], released[K_N], failed[K_N];
	int bad;
};

static struct counts counts[MAX_THREADS];
static unsigned long iters = 20000;
static int nthreads = 4, done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
/* the functions through volatile pointers: no call is elided or merged */
static void *(*volatile f_malloc)(size_t) = malloc;
static void *(*volatile f_realloc)(void *, size_t) = realloc;
static void *(*volatile f_reallocarray)(void *, size_t, size_t) = reallocarray;
static void (*volatile f_free)(void *) = free;
static volatile size_t huge = SIZE_MAX - 4096;	/* refused at once */
static char outbuf[4096];

static void add(struct counts *c, enum kind k, unsigned long acq, unsigned long rel)
{
	c->calls[k]++;
	c->acquired[k] += acq;
	c->released[k] += rel;
}

static void fill(struct counts *c, unsigned char *p, size_t n, unsigned char v, size_t keep,
		 unsigned char was)
{
	for (size_t k = 0; k < keep; k++)
		if (p[k] != was)
			c->bad = 1;
	memset(p, v, n);
}

static void *worker(void *arg)
{
	struct counts *c = arg;
	unsigned long seed = (unsigned long)(c - counts);

	for (unsigned long i = 0; i < iters; i++) {
		unsigned long j = i + seed * 7;
		size_t a = 16 + (j % 13) * 8, b = 200 + (j % 7) * 24, s = 40 + (j % 5) * 16;
		unsigned char *p, *q;

		if (!(p = f_malloc(a)))
			exit(99);
		add(c, K_MALLOC, a, 0);
		fill(c, p, a, 1, 0, 0);
		if (!(p = f_realloc(p, b)))
			exit(99);
		add(c, K_REALLOC, b, a);
		fill(c, p, b, 2, a, 1);
		if (i % 2) {
			if (!(p = f_reallocarray(p, s / 8, 8)))
				exit(99);
			add(c, K_REALLOCARRAY, s, b);
		} else {
			if (!(p = f_realloc(p, s)))
				exit(99);
			add(c, K_REALLOC, s, b);
		}
		fill(c, p, s, 3, s, 2);
		if (i % 16 == 0) {
			errno = 0;
			if ((q = f_realloc(p, huge)))
				exit(99);
			c->calls[K_REALLOC]++;
			c->failed[K_REALLOC]++;
			fill(c, p, s, 4, s, 3);
		}
		f_free(p);
		add(c, K_FREE, 0, s);
	}
	pthread_mutex_lock(&lock);
	done++;
	pthread_cond_broadcast(&cond);
	/* never ends: exit() takes it */
	for (;;)
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	struct counts total = { 0 };
	int opt, bad = 0;

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	while ((opt = getopt(argc, argv, "t:n:")) != -1) {
		if (opt == 't')
			nthreads = atoi(optarg);
		else if (opt == 'n')
			iters = strtoul(optarg, NULL, 10);
		else
			return 99;
	}
	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 99;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, &counts[i]))
			return 99;
	pthread_mutex_lock(&lock);
	while (done < nthreads)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < nthreads; i++) {
		for (int k = 0; k < K_N; k++) {
			total.calls[k] += counts[i].calls[k];
			total.acquired[k] += counts[i].acquired[k];
			total.released[k] += counts[i].released[k];
			total.failed[k] += counts[i].failed[k];
		}
		bad |= counts[i].bad;
	}
	for (int k = 0; k < K_N; k++)
		printf("EXPECT %d %s %lu %lu %lu %lu\n", (int)getpid(), names[k], total.calls[k],
		       total.acquired[k], total.released[k], total.failed[k]);
	printf(bad ? "CORRUPT\n" : "OK\n");
	fflush(stdout);
	exit(bad);
}

/*
 * alloc-pause.c - T threads calling malloc and free without pause, each
 * counting its iterations and timing the longest gap between two of
 * them: how long a tracer left it waiting.
 *
 *   alloc-pause [-t THREADS]
 *
 * Prints "ready" once every thread runs.  SIGUSR1 opens a window: the
 * counts and longest pauses start from zero.  SIGUSR2 closes it: one
 * line per thread, "thread I iters N pause_us P", then "min_iters N"
 * and "max_pause_us P" over all threads, and the process exits 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024

struct worker {
	unsigned long iters;	/* since the start */
	uint64_t last_ns;	/* end of its last iteration */
	uint64_t pause_ns;	/* longest gap in the window */
	char pad[64 - 3 * sizeof(uint64_t)];
} __attribute__((aligned(64)));

static struct worker workers[MAX_THREADS];
static unsigned long start_iters[MAX_THREADS];
static uint64_t window_ns;		/* when SIGUSR1 came */
static unsigned running;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t last = now_ns();

	__atomic_store_n(&w->last_ns, last, __ATOMIC_RELAXED);
	__atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST);
	for (unsigned long i = 0;; i++) {
		char *p = malloc(16 + i % 256);
		uint64_t t, from, start;

		__asm__ volatile("" : : "r"(p) : "memory");
		if (p)
			p[0] = (char)i;
		free(p);
		t = now_ns();
		/* only what falls in the window counts */
		start = __atomic_load_n(&window_ns, __ATOMIC_RELAXED);
		from = last > start ? last : start;
		if (t > from && t - from > __atomic_load_n(&w->pause_ns, __ATOMIC_RELAXED))
			__atomic_store_n(&w->pause_ns, t - from, __ATOMIC_RELAXED);
		__atomic_store_n(&w->iters, i + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&w->last_ns, t, __ATOMIC_RELAXED);
		last = t;
	}
	return NULL;
}

/* SIGUSR2: the window's figures, then exit. */
static void report(int nthreads)
{
	unsigned long min_iters = (unsigned long)-1;
	uint64_t max_pause = 0, now = now_ns();

	for (int i = 0; i < nthreads; i++) {
		struct worker *w = &workers[i];
		unsigned long n = __atomic_load_n(&w->iters, __ATOMIC_RELAXED) - start_iters[i];
		uint64_t p = __atomic_load_n(&w->pause_ns, __ATOMIC_RELAXED);
		uint64_t last = __atomic_load_n(&w->last_ns, __ATOMIC_RELAXED);

		/* a thread stopped right now: its pause so far */
		if (last < window_ns)
			last = window_ns;
		if (now > last && now - last > p)
			p = now - last;
		printf("thread %d iters %lu pause_us %llu\n", i, n, (unsigned long long)(p / 1000));
		if (n < min_iters)
			min_iters = n;
		if (p > max_pause)
			max_pause = p;
	}
	printf("min_iters %lu\nmax_pause_us %llu\n", min_iters,
	       (unsigned long long)(max_pause / 1000));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int nthreads = 8, opt, sig;
	sigset_t set;
	pthread_t tid;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't') {
			fprintf(stderr, "usage: alloc-pause [-t THREADS]\n");
			return 2;
		}
		nthreads = atoi(optarg);
	}
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "alloc-pause: 1 to %d threads\n", MAX_THREADS);
		return 2;
	}
	/* the workers inherit the mask: only main takes the signals */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&tid, NULL, work, &workers[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < (unsigned)nthreads)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			return 1;
		if (sig == SIGUSR2)
			break;
		for (int i = 0; i < nthreads; i++) {
			start_iters[i] = __atomic_load_n(&workers[i].iters, __ATOMIC_RELAXED);
			__atomic_store_n(&workers[i].pause_ns, 0, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&window_ns, now_ns(), __ATOMIC_SEQ_CST);
	}
	report(nthreads);
	_exit(0);
}

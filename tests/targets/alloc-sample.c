/*
 * alloc-sample.c - a gigabyte of mallocs in mixed sizes from three
 * known functions, for the sampled estimates.
 *
 *   alloc-sample [-t THREADS] [-m MIB] [-l LEAK] [-k KIB] [-r] [-w]
 *
 * The threads together malloc MIB MiB (default 1024) in blocks of 16 B
 * to 1 MiB, log-uniform (the same sizes every run), each block written
 * and freed at once.  Each block goes to site_a, site_b or site_c,
 * whichever is furthest below its share of the bytes so far: 50%, 30%,
 * 20%.  With -l, leak_site() mallocs LEAK bytes and never frees them.
 * With -k, site_a, site_b and site_c keep (never free) their blocks
 * until they hold 60%, 30% and 10% of KIB KiB (each thread its part).
 * With -r each block is made by malloc of half its size and one byte,
 * then realloc to its size: the blocks held come from realloc (EXPECT
 * and SITE count the sizes the blocks end with, not the mallocs).
 * With -w it first prints "ready PID" and waits for SIGUSR1; the
 * threads are made after it.  Then it prints what a tracer must count:
 *
 *   EXPECT malloc <calls> <bytes>      every malloc the process made
 *   SITE <function> <calls> <bytes>
 *   LEAK leak_site 1 <bytes>           with -l
 *   HELD <function> <blocks> <bytes>   with -k: what it never freed
 *
 * and "OK".  Output by write(2): the process calls malloc nowhere else.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usr1.h"

struct site_count {
	uint64_t calls, bytes;
};

struct work {
	pthread_t th;
	uint64_t seed, budget, keep;
	struct site_count site[3], held[3];
};

static const unsigned shares[3] = { 5, 3, 2 };
static const unsigned keep_shares[3] = { 6, 3, 1 };
static int grow;

static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* One block: written, freed unless kept; the frames stay (no tail call, no inlining). */
static inline void one(size_t sz, int keep)
{
	char *p = malloc(grow ? sz / 2 + 1 : sz);

	escape(p);
	if (p && grow) {
		char *q = realloc(p, sz);

		if (q)
			p = q;
		escape(p);
	}
	if (p) {
		p[0] = 1;
		p[sz - 1] = 2;
	}
	escape(p);
	if (!keep)
		free(p);
	__asm__ volatile("" : : : "memory");
}

__attribute__((noinline)) void site_a(size_t sz, int keep)
{
	one(sz, keep);
}

__attribute__((noinline)) void site_b(size_t sz, int keep)
{
	one(sz, keep);
}

__attribute__((noinline)) void site_c(size_t sz, int keep)
{
	one(sz, keep);
}

__attribute__((noinline)) void *leak_site(size_t sz)
{
	void *p = malloc(sz);

	escape(p);
	if (p)
		memset(p, 3, sz);
	return p;
}

/* xorshift64: the sizes are the same every run */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *worker(void *arg)
{
	struct work *w = arg;
	uint64_t done = 0;

	while (done < w->budget) {
		/* 16 * 2^(16 u): 16 B to 1 MiB, log-uniform */
		double u = (double)(next(&w->seed) >> 11) * 0x1p-53;
		size_t sz = (size_t)(16.0 * __builtin_exp2(16.0 * u));
		int k = 0;

		for (int i = 1; i < 3; i++)
			if (w->site[i].bytes * shares[k] < w->site[k].bytes * shares[i])
				k = i;
		int keep = w->held[k].bytes + sz <= w->keep * keep_shares[k] / 10;

		if (k == 0)
			site_a(sz, keep);
		else if (k == 1)
			site_b(sz, keep);
		else
			site_c(sz, keep);
		if (keep) {
			w->held[k].calls++;
			w->held[k].bytes += sz;
		}
		w->site[k].calls++;
		w->site[k].bytes += sz;
		done += sz;
	}
	return NULL;
}

/* A line on stdout, by write(2): stdio would malloc its buffer. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, line, (size_t)n) != n)
		_exit(2);
}

int main(int argc, char **argv)
{
	static const char *const names[3] = { "site_a", "site_b", "site_c" };
	static struct work works[64];
	struct site_count tot[3] = { { 0, 0 } }, held[3] = { { 0, 0 } };
	unsigned long long calls = 0, bytes = 0, mib = 1024, leak = 0, keep = 0;
	int nthreads = 1, wait = 0, c;

	while ((c = getopt(argc, argv, "t:m:l:k:rw")) != -1) {
		switch (c) {
		case 't': nthreads = atoi(optarg); break;
		case 'm': mib = strtoull(optarg, NULL, 10); break;
		case 'l': leak = strtoull(optarg, NULL, 10); break;
		case 'k': keep = strtoull(optarg, NULL, 10); break;
		case 'r': grow = 1; break;
		case 'w': wait = 1; break;
		default: return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		return 2;
	if (wait) {
		usr1_block();
		say("ready %d\n", (int)getpid());
		usr1_wait();
	}
	for (int i = 0; i < nthreads; i++) {
		works[i].seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		works[i].budget = (mib << 20) / (uint64_t)nthreads;
		works[i].keep = (keep << 10) / (uint64_t)nthreads;
		if (pthread_create(&works[i].th, NULL, worker, &works[i]))
			return 1;
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(works[i].th, NULL);
		for (int k = 0; k < 3; k++) {
			tot[k].calls += works[i].site[k].calls;
			tot[k].bytes += works[i].site[k].bytes;
			held[k].calls += works[i].held[k].calls;
			held[k].bytes += works[i].held[k].bytes;
		}
	}
	if (leak && leak_site(leak)) {
		calls++;
		bytes += leak;
	}
	for (int k = 0; k < 3; k++) {
		calls += tot[k].calls;
		bytes += tot[k].bytes;
	}
	say("EXPECT malloc %llu %llu\n", calls, bytes);
	for (int k = 0; k < 3; k++)
		say("SITE %s %llu %llu\n", names[k], (unsigned long long)tot[k].calls,
		    (unsigned long long)tot[k].bytes);
	if (leak)
		say("LEAK leak_site 1 %llu\n", leak);
	for (int k = 0; keep && k < 3; k++)
		say("HELD %s %llu %llu\n", names[k], (unsigned long long)held[k].calls,
		    (unsigned long long)held[k].bytes);
	say("OK\n");
	return 0;
}

/*
 * alloc-counts.h - what alloc-all.c and alloc-rounds.c share: the calls
 * and bytes of each allocator kind a round made, a round in nthreads
 * threads, and its EXPECT lines.  The including file defines first
 * enum kind (K_MALLOC .. K_N, with K_CALLOC, K_FREE, K_MEMALIGN and
 * K_ALIGNED_ALLOC among them) and names[K_N], memtap's event names;
 * then worker(), which runs a thread's iterations into its counts.
 *
 * Every call is made from functions in the section "alloc_text"
 * (SECTION; compiled without sibling calls), whose range each report
 * prints.
 */
#ifndef ALLOC_COUNTS_H
#define ALLOC_COUNTS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SECTION __attribute__((section("alloc_text"), noinline))

extern char __start_alloc_text[], __stop_alloc_text[];

struct counts {
	unsigned long calls[K_N], bytes[K_N], failed[K_N];
	int bad;
};

static unsigned long iters = 100;
/* aliased: memalign is aligned_alloc (glibc), counted as aligned_alloc */
static int nthreads = 1, aliased;
/* NULL, hidden from the compiler: it turns realloc(NULL, n) into malloc(n) */
static void *volatile nothing;

static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void count(struct counts *c, enum kind k, unsigned long bytes)
{
	if (k == K_MEMALIGN && aliased)
		k = K_ALIGNED_ALLOC;
	c->calls[k]++;
	c->bytes[k] += bytes;
}

static SECTION void *worker(void *arg);

/* One round in nthreads threads; adds to total. */
static SECTION void round_run(struct counts *total)
{
	struct counts *c = calloc(nthreads, sizeof(*c));
	pthread_t *t = calloc(nthreads, sizeof(*t));

	if (!c || !t)
		exit(99);
	count(total, K_CALLOC, nthreads * sizeof(*c));
	count(total, K_CALLOC, nthreads * sizeof(*t));
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, &c[i]))
			exit(99);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		for (int k = 0; k < K_N; k++) {
			total->calls[k] += c[i].calls[k];
			total->bytes[k] += c[i].bytes[k];
			total->failed[k] += c[i].failed[k];
		}
		total->bad |= c[i].bad;
	}
	free(c);
	free(t);
	count(total, K_FREE, nthreads * sizeof(*c));
	count(total, K_FREE, nthreads * sizeof(*t));
}

static SECTION void report(const struct counts *c)
{
	int pid = (int)getpid();

	printf("RANGE %d 0x%016lx 0x%016lx\n", pid, (unsigned long)__start_alloc_text,
	       (unsigned long)__stop_alloc_text);
	for (int k = 0; k < K_N; k++)
		if (c->calls[k])
			printf("EXPECT %d %s %lu %lu %lu\n", pid, names[k], c->calls[k],
			       c->bytes[k], c->failed[k]);
	fflush(stdout);
}

#endif /* ALLOC_COUNTS_H */

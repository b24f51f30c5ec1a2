/*
 * alloc-big.c - many small mallocs and a few large ones, from T threads,
 * for --min-size in the in-target stubs.
 *
 *   alloc-big [-t THREADS] [-n SMALL] [-b BIG] [-w]
 *
 * Each thread makes SMALL mallocs of 16 to 4096 bytes from small_one()
 * and BIG mallocs of 1 to 3 MiB, alternately from big_one() and
 * big_two(), writing and checking each block, freeing it.  With -w it
 * first prints "ready PID" and waits for SIGUSR1.  Every call
 * is made from the section "alloc_text".  It prints
 *
 *   RANGE <pid> <start> <end>
 *   EXPECT <pid> malloc <calls> <bytes> 0     the large ones only
 *   BIG big_one <calls>, BIG big_two <calls>
 *
 * then "OK" (exit 0), or "CORRUPT" (exit 1).  The threads (up to 128)
 * start together: all of them are alive at once.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECTION __attribute__((section("alloc_text"), noinline))

extern char __start_alloc_text[], __stop_alloc_text[];

static unsigned long nsmall = 20000, nbig = 4;
static int nthreads = 1;
static volatile sig_atomic_t go;
static pthread_barrier_t start;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

struct counts {
	unsigned long calls, bytes, one, two;
	int bad;
};

static int check(unsigned char *p, size_t n, unsigned char v)
{
	if (!p)
		return 1;
	memset(p, v, n);
	return p[0] != v || p[n - 1] != v;
}

SECTION static int small_one(size_t n)
{
	unsigned char *p = malloc(n);
	int bad = check(p, n, (unsigned char)n);

	free(p);
	return bad;
}

SECTION static int big_one(size_t n)
{
	unsigned char *p = malloc(n);
	int bad = check(p, n, 0x5a);

	free(p);
	return bad;
}

SECTION static int big_two(size_t n)
{
	unsigned char *p = malloc(n);
	int bad = check(p, n, 0xa5);

	free(p);
	return bad;
}

static void *run(void *arg)
{
	struct counts *c = arg;
	unsigned long every = nbig ? nsmall / nbig + 1 : 0, done = 0;

	pthread_barrier_wait(&start);
	for (unsigned long i = 0; i < nsmall; i++) {
		c->bad |= small_one(16 + (i * 37) % 4081);
		if (every && i % every == every / 2 && done < nbig) {
			size_t n = (1u << 20) + (done % 3) * (1u << 20);

			if (done % 2)
				c->bad |= big_two(n), c->two++;
			else
				c->bad |= big_one(n), c->one++;
			c->calls++;
			c->bytes += n;
			done++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct counts total = { 0 }, *c;
	pthread_t *th;
	int opt, wait = 0;

	while ((opt = getopt(argc, argv, "t:n:b:w")) != -1) {
		switch (opt) {
		case 'w': wait = 1; break;
		case 't': nthreads = atoi(optarg); break;
		case 'n': nsmall = strtoul(optarg, NULL, 10); break;
		case 'b': nbig = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (nthreads < 1 || nthreads > 128 || nbig > nsmall)
		return 2;
	if (wait) {
		sigset_t usr1, old;

		signal(SIGUSR1, on_usr1);
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, &old);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (!go)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	c = calloc((size_t)nthreads, sizeof(*c));
	th = calloc((size_t)nthreads, sizeof(*th));
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, run, &c[i]))
			return 2;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		total.calls += c[i].calls;
		total.bytes += c[i].bytes;
		total.one += c[i].one;
		total.two += c[i].two;
		total.bad |= c[i].bad;
	}
	printf("RANGE %d 0x%016lx 0x%016lx\n", (int)getpid(), (unsigned long)(uintptr_t)__start_alloc_text,
	       (unsigned long)(uintptr_t)__stop_alloc_text);
	printf("EXPECT %d malloc %lu %lu 0\n", (int)getpid(), total.calls, total.bytes);
	printf("BIG big_one %lu\nBIG big_two %lu\n", total.one, total.two);
	puts(total.bad ? "CORRUPT" : "OK");
	return total.bad;
}

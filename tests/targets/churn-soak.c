/*
 * churn-soak.c LIB [SECONDS [WHAT]] - a day's churn of a service in
 * about a minute, for memtap's own memory over a long run
 * (tests/soak-churn.test): every round (20 a second) PER_ROUND new
 * distinct stacks (a recursion whose branches spell a counter, so the
 * stack of call N differs from every earlier one), a short-lived
 * thread, dlopen, a call and dlclose of LIB (alloc-dl-lib.so:
 * lib_work() allocates and frees), and a page of code made, named by
 * a line of /tmp/perf-PID.map, and unmapped.  WHAT (default 15) is the
 * sum of the churns to make: 1 stacks, 2 threads, 4 dlopen, 8 code;
 * and 16: no wait for SIGUSR1 (run by memtap).
 *
 * Prints "ready PID", waits for SIGUSR1, then "round N" lines; at the
 * end, of its own malloc calls of SOAK_MIN bytes or more (libc's and
 * the loader's are smaller):
 *
 *   TOTAL <calls> <bytes>	every one
 *   KEPT <calls> <bytes>	those never freed
 *
 * then "done", and waits for SIGUSR1 again before it exits (memtap
 * detaches with what is kept still held).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "usr1.h"

#define SOAK_MIN 65536
#define DEPTH 16		/* 65536 distinct stacks */
#define PER_ROUND 40
#define ROUNDS_PER_SEC 20

static unsigned long total_calls, total_bytes, kept_calls, kept_bytes;
static void **kept;
static size_t nkept;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long a_calls, b_calls;	/* the branches differ */

static void count(size_t size, int keep)
{
	pthread_mutex_lock(&lock);
	total_calls++;
	total_bytes += size;
	if (keep) {
		kept_calls++;
		kept_bytes += size;
	}
	pthread_mutex_unlock(&lock);
}

static void leaf(unsigned long n)
{
	size_t size = SOAK_MIN + (n % 64) * 16;
	char *p = malloc(size);

	if (!p)
		exit(99);
	p[0] = (char)n;
	if (n % 32 == 0) {
		kept = realloc(kept, (nkept + 1) * sizeof(*kept));	/* small: not counted */
		kept[nkept++] = p;
		count(size, 1);
	} else {
		free(p);
		count(size, 0);
	}
}

static void rec(int level, unsigned long n);

__attribute__((noinline)) static void branch_a(int level, unsigned long n)
{
	rec(level + 1, n);
	a_calls++;
}

__attribute__((noinline)) static void branch_b(int level, unsigned long n)
{
	rec(level + 1, n);
	b_calls++;
}

/* Level i takes branch a or b by bit i of n: call n's stack is n's own. */
__attribute__((noinline)) static void rec(int level, unsigned long n)
{
	if (level == DEPTH)
		leaf(n);
	else if (n >> level & 1)
		branch_b(level, n);
	else
		branch_a(level, n);
	__asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
	size_t size = SOAK_MIN + 8;
	char *p = malloc(size);

	(void)arg;
	if (!p)
		exit(99);
	p[0] = 1;
	free(p);
	count(size, 0);
	return NULL;
}

static void jit_page(FILE *map, unsigned long n)
{
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED)
		exit(99);
	code[0] = 0xc3;	/* ret */
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
		exit(99);
	fprintf(map, "%lx 1 soak_jit_%lu\n", (unsigned long)(uintptr_t)code, n);
	fflush(map);
	munmap(code, 4096);
}

int main(int argc, char **argv)
{
	int (*lib_work)(unsigned long, size_t);
	unsigned long seconds = argc > 2 ? strtoul(argv[2], NULL, 0) : 60, n = 0;
	unsigned long what = argc > 3 ? strtoul(argv[3], NULL, 0) : 15;
	struct timespec pause = { 0, 1000000000L / ROUNDS_PER_SEC };
	char path[64];
	FILE *map;

	if (argc < 2) {
		fprintf(stderr, "usage: churn-soak LIB [SECONDS]\n");
		return 99;
	}
	usr1_block();
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 99;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!(what & 16))
		usr1_wait();
	for (unsigned long r = 0; r < seconds * ROUNDS_PER_SEC; r++) {
		pthread_t t;
		void *h;

		for (int k = 0; k < PER_ROUND && (what & 1); k++)
			rec(0, n++);
		if ((what & 2) && (pthread_create(&t, NULL, thread_main, NULL) != 0 ||
				   pthread_join(t, NULL) != 0))
			return 99;
		if (what & 4) {
			h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
			if (!h || !(*(void **)&lib_work = dlsym(h, "lib_work")))
				return 99;
			if (lib_work(r, SOAK_MIN + 32) != 0)
				return 99;
			count(SOAK_MIN + 32, 0);
			dlclose(h);
		}
		if (what & 8)
			jit_page(map, r);
		if (r % ROUNDS_PER_SEC == 0) {
			printf("round %lu\n", r);
			fflush(stdout);
		}
		nanosleep(&pause, NULL);
	}
	printf("TOTAL %lu %lu\nKEPT %lu %lu\ndone\n", total_calls, total_bytes, kept_calls,
	       kept_bytes);
	fflush(stdout);
	if (!(what & 16))
		usr1_wait();
	fclose(map);
	unlink(path);
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	free(kept);
	return 0;
}

/*
 * stub-grow.c - mallocs that make the process grow from known call
 * chains, for stacks taken while malloc runs (in-target probes: malloc
 * is then called by its stub).
 *
 *   stub-grow [-w] [-n N]
 *
 * main -> grow_mmap -> malloc of 40 MiB + k pages, N times (above
 * glibc's largest mmap threshold: each is one mmap made by malloc);
 * main -> grow_brk -> malloc of 64 KiB, 16 N times, none freed until
 * the end (below the mmap threshold: the heap grows by brk).  With -w
 * it first prints "ready PID" and waits for SIGUSR1.  It prints
 *
 *   MMAP <bytes asked> ...        one line per large malloc
 *
 * then "OK", or "FAILED" (exit 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usr1.h"

#define MiB (1024UL * 1024UL)
#define NOINLINE __attribute__((noinline))

static void *keep[4096];
static size_t nkeep;

static void hold(void *p, size_t n)
{
	if (!p) {
		printf("FAILED\n");
		exit(1);
	}
	memset(p, 1, n < 4096 ? n : 4096);
	keep[nkeep++] = p;
}

static volatile unsigned long large, small;	/* two bodies, never folded */

NOINLINE static void grow_mmap(size_t n)
{
	hold(malloc(n), n);
	large++;
}

NOINLINE static void grow_brk(size_t n)
{
	hold(malloc(n), n);
	small += 2;
}

int main(int argc, char **argv)
{
	unsigned long n = 3;
	int wait = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-w"))
			wait = 1;
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoul(argv[++i], NULL, 0);
	}
	if (n > 200)
		n = 200;
	setvbuf(stdout, NULL, _IONBF, 0);	/* stdio allocates nothing */
	if (wait) {
		usr1_block();
		printf("ready %d\n", (int)getpid());
		usr1_wait();
	}
	for (unsigned long i = 0; i < n; i++) {
		grow_mmap(40 * MiB + i * 4096);
		for (int k = 0; k < 16; k++)
			grow_brk(64 * 1024);
	}
	for (unsigned long i = 0; i < n; i++)
		printf("MMAP %lu\n", 40 * MiB + i * 4096);
	for (size_t i = 0; i < nkeep; i++)
		free(keep[i]);
	printf("OK\n");
	return 0;
}

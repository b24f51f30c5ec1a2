/*
 * trend.c - four allocation sites whose held bytes follow known
 * trends, one step per SIGUSR1 ("tick"), for the leak suspects:
 *
 *   trend -n TICKS -o FILE
 *
 * Writes "ready PID" to FILE, then at each of TICKS ticks:
 *   leak_site  mallocs BLOCK bytes and keeps them (a steady leak);
 *   cache_site mallocs BLOCK bytes at the first 4 ticks only, kept (a
 *              cache that fills, then stops);
 *   saw_site   mallocs BLOCK bytes, and at every 4th tick frees what
 *              it holds (a batch that rises and falls);
 *   stair_site mallocs STAIR bytes at every 4th tick, kept (a leak that
 *              grows in steps: flat for 3 ticks, then a jump);
 * and writes "tick N" to FILE once done.  The SIGUSR1 after the last
 * tick writes "EXPECT leak BYTES_PER_TICK" and "EXPECT stair BYTES
 * EVERY" and ends the process.  BLOCK is 1 MiB and STAIR 3 MiB:
 * sampled at the default mean, every block is kept.  The sites' bodies
 * differ, so that no compiler folds two into one function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usr1.h"

#define BLOCK (1024 * 1024)
#define STAIR (3 * BLOCK)
#define STAIR_EVERY 4

static void *kept[8192];
static int nkept;
static void *saw[4];
static int nsaw;

static __attribute__((noinline)) void *leak_site(void)
{
	return malloc(BLOCK);
}

static __attribute__((noinline)) void *cache_site(int tick)
{
	return tick <= 4 ? malloc(BLOCK) : NULL;
}

static __attribute__((noinline)) void *stair_site(int tick)
{
	return tick % STAIR_EVERY == 0 ? malloc(STAIR) : NULL;
}

static __attribute__((noinline)) void saw_site(int tick)
{
	saw[nsaw++] = malloc(BLOCK);
	if (tick % 4 == 0) {
		while (nsaw)
			free(saw[--nsaw]);
	}
}

int main(int argc, char **argv)
{
	int ticks = 0, c;
	const char *path = NULL;
	FILE *f;

	while ((c = getopt(argc, argv, "n:o:")) != -1) {
		if (c == 'n')
			ticks = atoi(optarg);
		else if (c == 'o')
			path = optarg;
		else
			return 2;
	}
	if (ticks <= 0 || ticks > 4000 || !path)
		return 2;
	usr1_block();
	f = fopen(path, "w");
	if (!f)
		return 2;
	setvbuf(f, NULL, _IOLBF, 0);
	fprintf(f, "ready %d\n", (int)getpid());
	for (int t = 1; t <= ticks; t++) {
		usr1_wait();
		kept[nkept++] = leak_site();
		if ((kept[nkept] = cache_site(t)))
			nkept++;
		if ((kept[nkept] = stair_site(t)))
			nkept++;
		saw_site(t);
		fprintf(f, "tick %d\n", t);
	}
	usr1_wait();
	fprintf(f, "EXPECT leak %d\n", BLOCK);
	fprintf(f, "EXPECT stair %d %d\n", STAIR, STAIR_EVERY);
	fclose(f);
	return 0;
}

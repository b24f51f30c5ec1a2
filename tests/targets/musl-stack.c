/*
 * musl-stack.c - known mmaps and mallocs through known functions, for
 * a C library built without unwind tables (tests/musl-*.test build it
 * with musl-gcc at test time, dynamic and static).
 *
 *   musl-stack map N     N mmaps of 3 MiB by musl_map() (called from
 *                        main through musl_outer()), each then touched
 *                        and unmapped; prints EXPECT lines (target.h)
 *                        and "done"
 *   musl-stack wait      prints "ready PID", then for each SIGUSR1 a
 *                        round: malloc(5 MiB) by musl_alloc(), which
 *                        musl's malloc serves with an mmap of its own,
 *                        freed; "round N done"; SIGUSR2 ends it
 *
 * musl's libc has no CFI: a stack through its mmap and malloc reaches
 * main only when the unwinder can walk frames without it.
 */
#include <signal.h>

#include "target.h"

#define MAP_LEN (3 * MiB)
#define ALLOC_LEN (5 * MiB)

volatile unsigned long musl_sink;

__attribute__((noinline)) static void *musl_map(size_t len)
{
	void *p = xmmap_anon(len);

	musl_sink++;
	return p;
}

__attribute__((noinline)) static void musl_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = musl_map(MAP_LEN);

		xmunmap(p, MAP_LEN);
	}
	musl_sink++;
}

__attribute__((noinline)) static void musl_alloc(size_t len)
{
	char *p = malloc(len);

	if (!p)
		exit(99);
	memset(p, 1, len);
	musl_sink += (unsigned char)p[len / 2];
	free(p);
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig, round = 0;

	if (argc == 3 && strcmp(argv[1], "map") == 0) {
		unsigned long n = strtoul(argv[2], NULL, 0);

		musl_outer(n);
		expect("mmap", n, n * MAP_LEN, 0);
		expect("munmap", n, 0, n * MAP_LEN);
		printf("done\n");
		return 0;
	}
	if (argc != 2 || strcmp(argv[1], "wait") != 0) {
		fprintf(stderr, "usage: musl-stack map N | wait\n");
		return 99;
	}
	block_usr_signals(&set);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (sigwait(&set, &sig) == 0 && sig == SIGUSR1) {
		musl_alloc(ALLOC_LEN);
		printf("round %d done\n", ++round);
		fflush(stdout);
	}
	return 0;
}

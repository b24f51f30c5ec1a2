/*
 * protect.c - mprotect and madvise of known functions.
 *
 *   arena_grow     in a second thread: 400 mallocs of 60 KiB (below the
 *                  mmap threshold): glibc makes the thread an arena, a
 *                  reserved PROT_NONE heap grown by mprotect
 *   release_pages  maps 32 MiB, touches the first 16 MiB, then
 *                  madvise(MADV_DONTNEED) of all 32 MiB, and a
 *                  MADV_WILLNEED that is no release
 *
 * Prints
 *
 *   PROTECT arena_grow <bytes of the arena's heap made accessible>
 *   MADVISE release_pages <bytes resident before the madvise>
 *
 * the first from /proc/self/maps (the read-write part of the heap the
 * blocks are in: all of it was PROT_NONE), after the thread is done.
 * -w: print "ready PID" and wait for SIGUSR1 first, and print "done" and
 * wait for it again at the end (for memtap -p).
 * -m: then more, for the account: 16 MiB of small mallocs (the brk
 * heap), 768 MiB mapped of which mixed_touch touches 512 MiB, 64 MiB
 * of those unmapped and 256 MiB untouched unmapped.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "usr1.h"

#define MiB (1024UL * 1024UL)
#define HEAP_MAX (64 * MiB)	/* glibc's HEAP_MAX_SIZE on 64-bit */

static void *blocks[400];

__attribute__((noinline)) void arena_grow(void)
{
	for (int i = 0; i < 400; i++) {
		blocks[i] = malloc(60 * 1024);
		if (!blocks[i])
			exit(99);
		memset(blocks[i], 1, 16);
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	arena_grow();
	return NULL;
}

/* The read-write bytes of the mapping that starts at the heap of p. */
static unsigned long heap_rw(void *p)
{
	unsigned long base = (uintptr_t)p & ~(HEAP_MAX - 1), start, end, rw = 0;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		exit(99);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 && start == base &&
		    perms[0] == 'r' && perms[1] == 'w')
			rw = end - start;
	fclose(f);
	return rw;
}

__attribute__((noinline)) void release_pages(char *p, size_t len, size_t touched)
{
	for (size_t i = 0; i < touched; i += 4096)
		p[i] = 1;
	if (madvise(p, len, MADV_WILLNEED) < 0 || madvise(p, len, MADV_DONTNEED) < 0) {
		perror("madvise");
		exit(99);
	}
}

__attribute__((noinline)) void mixed_touch(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
}

static void mixed(void)
{
	char *p = mmap(NULL, 768 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(99);
	madvise(p, 768 * MiB, MADV_NOHUGEPAGE);
	for (int i = 0; i < 4096; i++)
		memset(malloc(4000), 1, 4000);
	mixed_touch(p, 512 * MiB);
	munmap(p, 64 * MiB);
	munmap(p + 512 * MiB, 256 * MiB);
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "-w");
	int more = argc > 1 && !strcmp(argv[argc - 1], "-m");
	pthread_t t;
	char *p;

	usr1_block();
	if (wait) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		usr1_wait();
	}
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 99;
	pthread_join(t, NULL);
	printf("PROTECT arena_grow %lu\n", heap_rw(blocks[399]));
	p = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 99;
	madvise(p, 32 * MiB, MADV_NOHUGEPAGE);
	release_pages(p, 32 * MiB, 16 * MiB);
	printf("MADVISE release_pages %lu\n", 16 * MiB);
	if (more)
		mixed();
	if (wait) {
		printf("done\n");
		fflush(stdout);
		usr1_wait();
	}
	fflush(stdout);
	return 0;
}

/*
 * stack-big.c - allocations under a frame larger than memtap's stack
 * copy (--stack-size, 32 KiB by default): main calls big_frame(), whose
 * frame holds BIG bytes (80 KiB) of its own, which calls big_leaf(),
 * which mallocs N blocks of BLOCK bytes, then maps STACK_BIG_MAGIC
 * bytes and unmaps them.  Their stacks are main;big_frame;big_leaf;
 * malloc and main;big_frame;big_leaf;mmap.
 *
 *   stack-big [-w] [N]     -w: print "ready <pid>" and wait for SIGUSR1
 *                          (memtap -p) first; N: 100 by default
 *
 * Prints "EXPECT malloc <calls> <bytes>" and "EXPECT mmap 1 <bytes>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "usr1.h"

#define BIG (80 * 1024)
#define BLOCK 256
#define STACK_BIG_MAGIC 0x2351000UL

static unsigned long n = 100;

/* keep the compiler from eliding or merging the calls */
static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void **big_leaf(void)
{
	void **v = calloc(n, sizeof(*v));
	void *m;

	if (!v)
		exit(99);
	for (unsigned long i = 0; i < n; i++) {
		v[i] = malloc(BLOCK);
		escape(v[i]);
	}
	m = mmap(NULL, STACK_BIG_MAGIC, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		exit(99);
	escape(m);
	munmap(m, STACK_BIG_MAGIC);
	return v;
}

__attribute__((noinline)) static void **big_frame(void)
{
	char pad[BIG];
	void **v;

	memset(pad, 1, sizeof(pad));
	escape(pad);
	v = big_leaf();
	escape(pad);
	return v;
}

int main(int argc, char **argv)
{
	void **v;
	int i = 1;

	if (argc > i && strcmp(argv[i], "-w") == 0) {
		usr1_block();
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		usr1_wait();
		i++;
	}
	if (argc > i)
		n = strtoul(argv[i], NULL, 0);
	v = big_frame();
	for (unsigned long k = 0; k < n; k++)
		free(v[k]);
	free(v);
	printf("EXPECT malloc %lu %lu\n", n, n * BLOCK);
	printf("EXPECT mmap 1 %lu\n", STACK_BIG_MAGIC);
	return 0;
}

/*
 * alloc-zero.c - blocks of zero bytes, held and freed:
 *
 *   alloc-zero
 *
 * keep_zero() leaks 4 blocks of 0 bytes (malloc(0) 3 times, calloc(0,
 * 16) once); drop_zero() allocates 3 more (malloc(0), calloc(16, 0),
 * realloc(NULL, 0)) and frees them; shrink_zero() gives one more block,
 * malloc(0), to realloc(p, 0), which frees it (glibc: NULL returned;
 * a block it returns instead is freed too).  Then it leaks one block of
 * LEAK bytes from keep_some(), through leak_it(), always inlined, so
 * that the leaks report has a row with bytes.  Prints
 *
 *   EXPECT zero-leaked 4
 *   EXPECT leaked-bytes LEAK
 *   OK
 *
 * so that --leaks must show keep_zero's 4 blocks of 0 bytes, keep_some's
 * LEAK bytes, 5 blocks not freed, and no free of an unknown block.
 */
#include <stdio.h>
#include <stdlib.h>

#define LEAK 12345

/* hidden from the compiler: it would turn realloc(NULL, n) into malloc(n) */
static void *volatile nothing;
static void *volatile sink[8];

static __attribute__((noinline)) void keep_zero(void)
{
	sink[0] = malloc(0);
	sink[1] = malloc(0);
	sink[2] = malloc(0);
	sink[3] = calloc(0, 16);
}

static __attribute__((noinline)) void drop_zero(void)
{
	void *a = malloc(0), *b = calloc(16, 0), *c = realloc(nothing, 0);

	if (!a || !b || !c)
		exit(99);
	free(a);
	free(b);
	free(c);
}

static __attribute__((noinline)) void shrink_zero(void)
{
	void *p = malloc(0), *q;

	if (!p)
		exit(99);
	q = realloc(p, 0);
	free(q);
}

static inline __attribute__((always_inline)) void leak_it(size_t n)
{
	sink[4] = malloc(n);
}

static __attribute__((noinline)) void keep_some(void)
{
	leak_it(LEAK);
}

int main(void)
{
	static char buf[4096];	/* no malloc of stdio's: the counts exact */

	setvbuf(stdout, buf, _IOLBF, sizeof(buf));
	keep_zero();
	drop_zero();
	shrink_zero();
	keep_some();
	for (int i = 0; i < 5; i++)
		if (!sink[i])
			return 99;
	printf("EXPECT zero-leaked 4\nEXPECT leaked-bytes %d\nOK\n", LEAK);
	return 0;
}

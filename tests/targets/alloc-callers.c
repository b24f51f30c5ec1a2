/*
 * alloc-callers.c - one place that mallocs, reached at the same stack
 * depth through different callers in turn: main -> via_a -> mid -> leaf
 * -> malloc(100) and main -> via_b -> mid -> leaf -> malloc(200), N
 * times each, alternating; leaf's return address and stack pointer are
 * the same for both, the stacks part only two frames up.  A stub that
 * took one walk for the other would put bytes under the wrong caller.
 *
 *   alloc-callers N
 *
 * Prints "EXPECT via_a BYTES", "EXPECT via_b BYTES", then "OK".
 */
#include <stdio.h>
#include <stdlib.h>

/* keep each call a call (no inlining, no tail call) */
#define KEEP __attribute__((noinline))

static volatile unsigned long sink;

KEEP void leaf(size_t size)
{
	char *p = malloc(size);

	if (p)
		p[0] = 1;
	sink += (unsigned long)(p != NULL);
	free(p);
}

KEEP void mid(size_t size)
{
	leaf(size);
	sink++;
}

KEEP void via_a(void)
{
	mid(100);
	sink++;
}

KEEP void via_b(void)
{
	mid(200);
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;

	for (unsigned long i = 0; i < 2 * n; i++) {
		if (i & 1)
			via_b();
		else
			via_a();
	}
	printf("EXPECT via_a %lu\nEXPECT via_b %lu\nOK\n", n * 100, n * 200);
	return 0;
}

/*
 * alloc-longjmp.c - a function that allocates and then, every other
 * call, leaves by longjmp instead of returning.  A tracer that captures
 * jump_alloc's return by replacing its return address must drop the
 * entries of the frames longjmp skipped, and must never disturb the
 * program.
 *
 *   alloc-longjmp [N]
 *
 * Prints EXPECT lines (see alloc-loop.c) and "EXPECT-RETURNS jump_alloc
 * <returns>", then "OK".
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf jb;
static void *stash;
static unsigned long checksum;

static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* no tail call: the caller of free stays this executable */
static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

__attribute__((noinline)) void *jump_alloc(size_t n)
{
	char *p = malloc(n);

	escape(p);
	memset(p, (int)(n & 0x7f) | 1, n);
	stash = p;
	if (n % 2 == 0)
		longjmp(jb, 1);
	return p;
}

/* one frame deeper, so that jump_alloc's frame sits at two depths */
__attribute__((noinline)) void *deeper(size_t n)
{
	void *p = jump_alloc(n);

	escape(p);
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
	static unsigned long mbytes, returns;
	volatile unsigned long i;

	for (i = 0; i < n; i++) {
		size_t sz = 100 + i;
		char *p;

		mbytes += sz;
		if (setjmp(jb) == 0) {
			p = (i % 3) ? jump_alloc(sz) : deeper(sz);
			returns++;
		} else {
			p = stash;
		}
		checksum += (unsigned char)p[sz - 1];
		free(p);
		barrier();
	}
	printf("EXPECT malloc %lu %lu\n", n, mbytes);
	printf("EXPECT free %lu 0\n", n);
	printf("EXPECT live 0\n");
	printf("EXPECT jump_alloc %lu %lu\n", n, 0UL);
	printf("EXPECT-RETURNS jump_alloc %lu\n", returns);
	printf("checksum %lu\nOK\n", checksum);
	return 0;
}

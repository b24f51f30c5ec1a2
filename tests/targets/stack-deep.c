/*
 * stack-deep.c - a target with a stack of chosen depth, each frame a
 * distinct function, for the unwinding benchmark:
 *
 *   stack-deep DEPTH     DEPTH (1..64) frames of deep_*, then an mmap of
 *                        STACK_DEEP_MAGIC bytes from the deepest one
 */
#include <stdlib.h>
#include <sys/mman.h>

#define STACK_DEEP_MAGIC 0x2347000UL

volatile int deep_sink;

__attribute__((noinline)) static int deep_leaf(void)
{
	void *p = mmap(NULL, STACK_DEEP_MAGIC, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	munmap(p, STACK_DEEP_MAGIC);
	return 1;
}

typedef int (*deep_fn)(int, int);
static const deep_fn deep_table[65];

/* deep_table[i] calls deep_table[i + 1] until left is 1, then the leaf. */
#define DEEP(n) \
	__attribute__((noinline)) static int deep_##n(int i, int left) \
	{ \
		volatile char pad[24]; \
		int r; \
		pad[0] = (char)left; \
		r = left > 1 ? deep_table[i + 1](i + 1, left - 1) : deep_leaf(); \
		deep_sink = r + pad[0]; \
		return r + 1; \
	}
#define DEEP8(a) DEEP(a##0) DEEP(a##1) DEEP(a##2) DEEP(a##3) \
	DEEP(a##4) DEEP(a##5) DEEP(a##6) DEEP(a##7)
DEEP8(1) DEEP8(2) DEEP8(3) DEEP8(4) DEEP8(5) DEEP8(6) DEEP8(7) DEEP8(8)

static const deep_fn deep_table[65] = {
#define T8(a) deep_##a##0, deep_##a##1, deep_##a##2, deep_##a##3, \
	deep_##a##4, deep_##a##5, deep_##a##6, deep_##a##7,
	T8(1) T8(2) T8(3) T8(4) T8(5) T8(6) T8(7) T8(8)
	NULL
};

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 8;

	if (depth < 1 || depth > 64)
		return 99;
	return deep_table[0](0, depth) > 0 ? 0 : 1;
}

/*
 * peak.c - a peak known by construction, for --weight=peak:
 *
 *   peak [-m]
 *
 * f() allocates A bytes, g() B bytes, then A is freed and h() allocates
 * C < A: the held bytes were highest (A + B) with f's and g's blocks,
 * h's never among them.  With -m the same with mmap and munmap.
 * Prints "EXPECT f A", "EXPECT g B", "EXPECT h C", "EXPECT peak A+B".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define A (4 << 20)
#define B (2 << 20)
#define C (1 << 20)

static int use_mmap;

static void *get(size_t n)
{
	void *p;

	if (!use_mmap) {
		p = malloc(n);
	} else {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
	}
	if (!p)
		exit(2);
	memset(p, 1, 64);
	return p;
}

static void put(void *p, size_t n)
{
	if (use_mmap)
		munmap(p, n);
	else
		free(p);
}

static __attribute__((noinline)) void *f(void) { return get(A); }
static __attribute__((noinline)) void *g(void) { return get(B); }
static __attribute__((noinline)) void *h(void) { return get(C); }

int main(int argc, char **argv)
{
	void *a, *b, *c;

	use_mmap = argc > 1 && !strcmp(argv[1], "-m");
	a = f();
	b = g();
	put(a, A);
	c = h();
	printf("EXPECT f %d\nEXPECT g %d\nEXPECT h %d\nEXPECT peak %d\n", A, B, C, A + B);
	fflush(stdout);
	put(b, B);
	put(c, C);
	return 0;
}

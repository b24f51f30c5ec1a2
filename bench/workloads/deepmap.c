/*
 * deepmap DEPTH N [MAXPAGES] - the mmap workload of mmapper.c, made
 * DEPTH frames down: main calls dm_00, which calls dm_01, ... down to
 * dm_<DEPTH-1>, which calls deep_leaf; deep_leaf makes N rounds of: mmap
 * an anonymous mapping of 1 to MAXPAGES (default 16) pages, write one
 * byte in each page, munmap it (and every 16th round, grow it with
 * mremap first).  Memory syscalls per round: 2 (3 every 16th round),
 * each with DEPTH + 6 or so frames above it (_start,
 * __libc_start_main, __libc_start_call_main, main, the dm_ chain,
 * deep_leaf, the libc wrapper).
 *
 * At the end it prints the bytes it mapped, grew and unmapped (one line,
 * "deepmap: depth D rounds N mmap B mremap G munmap U"), for checking
 * a tracer's totals.
 *
 * DEPTH is 0 to 70.  Every dm_ function is distinct, called through a
 * table (so none can be inlined into another), and uses its callee's
 * result (so no call is a tail call); build with
 * -fno-optimize-sibling-calls all the same, and with or without
 * -fno-omit-frame-pointer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

volatile int deep_sink;
static long rounds;
static long maxpages = 16;
static unsigned long mmap_bytes, mremap_bytes, munmap_bytes;

__attribute__((noinline)) static int deep_leaf(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long seed = 12345;

	for (long i = 0; i < rounds; i++) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		size_t len = (1 + (seed >> 33) % (unsigned long)maxpages) * page;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return -1;
		}
		mmap_bytes += len;
		for (size_t off = 0; off < len; off += page)
			p[off] = (char)i;
		if (i % 16 == 15) {
			char *q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);

			if (q == MAP_FAILED) {
				perror("mremap");
				return -1;
			}
			p = q;
			mremap_bytes += len;
			len *= 2;
		}
		if (munmap(p, len) != 0) {
			perror("munmap");
			return -1;
		}
		munmap_bytes += len;
	}
	return 1;
}

typedef int (*deep_fn)(int, int);
/* Not const, not static: the compiler cannot resolve its entries. */
extern deep_fn deep_table[71];

/* deep_table[i] calls deep_table[i + 1] until left is 1, then the leaf. */
#define DM(n) \
	__attribute__((noinline)) static int dm_##n(int i, int left) \
	{ \
		volatile char pad[24]; \
		int r; \
		pad[0] = (char)left; \
		r = left > 1 ? deep_table[i + 1](i + 1, left - 1) : deep_leaf(); \
		deep_sink = r + pad[0]; \
		return r + 1; \
	}
#define DM10(a) DM(a##0) DM(a##1) DM(a##2) DM(a##3) DM(a##4) \
	DM(a##5) DM(a##6) DM(a##7) DM(a##8) DM(a##9)
DM10(0) DM10(1) DM10(2) DM10(3) DM10(4) DM10(5) DM10(6)

#define T10(a) dm_##a##0, dm_##a##1, dm_##a##2, dm_##a##3, dm_##a##4, \
	dm_##a##5, dm_##a##6, dm_##a##7, dm_##a##8, dm_##a##9,
deep_fn deep_table[71] = {
	T10(0) T10(1) T10(2) T10(3) T10(4) T10(5) T10(6)
	NULL
};

int main(int argc, char **argv)
{
	int depth, r;

	if (argc < 3) {
		fprintf(stderr, "usage: deepmap DEPTH N [MAXPAGES]\n");
		return 2;
	}
	depth = atoi(argv[1]);
	rounds = atol(argv[2]);
	if (argc > 3)
		maxpages = atol(argv[3]);
	if (depth < 0 || depth > 70 || rounds < 0 || maxpages < 1) {
		fprintf(stderr, "deepmap: DEPTH 0..70, N >= 0, MAXPAGES >= 1\n");
		return 2;
	}
	r = depth == 0 ? deep_leaf() : deep_table[0](0, depth);
	printf("deepmap: depth %d rounds %ld mmap %lu mremap %lu munmap %lu\n",
	       depth, rounds, mmap_bytes, mremap_bytes, munmap_bytes);
	return r > 0 ? 0 : 1;
}

/*
 * mmapper N [MAXPAGES] - N rounds of: mmap an anonymous mapping of 1 to
 * MAXPAGES (default 16) pages, chosen pseudo-randomly, write one byte
 * in each page, munmap it.  Every 16th round also grows the mapping
 * with mremap before unmapping it.  Memory syscalls per round: 2 (3
 * every 16th round).  BENCH_GATE: see gate.h.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gate.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	long maxpages = argc > 2 ? atol(argv[2]) : 16;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long seed = 12345;

	if (n < 0 || maxpages < 1) {
		fprintf(stderr, "usage: mmapper N [MAXPAGES]\n");
		return 1;
	}
	gate_open();
	for (long i = 0; i < n; i++) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		size_t len = (1 + (seed >> 33) % (unsigned long)maxpages) * page;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (size_t off = 0; off < len; off += page)
			p[off] = (char)i;
		if (i % 16 == 15) {
			char *q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);

			if (q == MAP_FAILED) {
				perror("mremap");
				return 1;
			}
			p = q;
			len *= 2;
		}
		if (munmap(p, len) != 0) {
			perror("munmap");
			return 1;
		}
	}
	gate_close();
	return 0;
}

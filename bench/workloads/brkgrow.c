/*
 * brkgrow CYCLES [MIB] [MAXBLOCK] - CYCLES rounds of: malloc blocks of
 * 16 to MAXBLOCK bytes (default 256, pseudo-random sizes) until MIB
 * MiB (default 16) are requested, writing into each, then free them
 * all (in allocation order) and malloc_trim(0).  glibc grows the main
 * heap with brk in steps of the request plus M_TOP_PAD (128 KiB):
 * about 8 brk calls per MiB, one brk to shrink it at the end of each
 * cycle, and about 7,700 mallocs per MiB that make no syscall.
 * BENCH_GATE: see gate.h.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"

int main(int argc, char **argv)
{
	long cycles = argc > 1 ? atol(argv[1]) : 10;
	long mib = argc > 2 ? atol(argv[2]) : 16;
	long maxblock = argc > 3 ? atol(argv[3]) : 256;
	unsigned long seed = 42;
	size_t cap, total = 0;
	char **ptrs;

	if (cycles < 0 || mib < 1 || maxblock < 16) {
		fprintf(stderr, "usage: brkgrow CYCLES [MIB] [MAXBLOCK]\n");
		return 1;
	}
	cap = (size_t)mib * 1024 * 1024 / 16 + 1;
	ptrs = malloc(cap * sizeof *ptrs);	/* large: mmap, not brk */
	if (ptrs == NULL) {
		perror("malloc");
		return 1;
	}
	gate_open();
	for (long c = 0; c < cycles; c++) {
		size_t n = 0, bytes = 0;

		while (bytes < (size_t)mib * 1024 * 1024 && n < cap) {
			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			size_t len = 16 + (seed >> 33) % (unsigned long)(maxblock - 15);

			ptrs[n] = malloc(len);
			if (ptrs[n] == NULL) {
				perror("malloc");
				return 1;
			}
			memset(ptrs[n], (int)c, len);
			bytes += len;
			n++;
		}
		total += n;
		/* in allocation order: the chunks tcache keeps are at the
		   bottom of the heap, and malloc_trim can give the rest back */
		for (size_t i = 0; i < n; i++)
			free(ptrs[i]);
		malloc_trim(0);
	}
	free(ptrs);
	if (total == 0 && cycles > 0)
		return 1;
	gate_close();
	return 0;
}

/*
 * alloc-dl-lib.c - a library that alloc-dl dlopens: lib_work(i, size)
 * allocates, fills, checks and frees size bytes.  Returns 0, or 1 when
 * the memory was wrong.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int lib_work(unsigned long i, size_t size)
{
	unsigned char *p = malloc(size);
	int bad = 0;

	if (!p)
		return 1;
	memset(p, (int)(i & 0xff), size);
	for (size_t k = 0; k < size; k++)
		if (p[k] != (unsigned char)(i & 0xff))
			bad = 1;
	free(p);
	return bad;
}

/*
 * lib_grow(n): n blocks of 64 KiB from malloc (the heap grows with
 * brk), one of 1 MiB (an mmap), all freed again (munmap, and brk when
 * the heap is trimmed).  Returns 0, or 1 when the memory was wrong.
 */
__attribute__((noinline)) int lib_grow(unsigned long n)
{
	unsigned char *blocks[256], *big;
	int bad = 0;

	if (n > 256)
		return 1;
	for (unsigned long i = 0; i < n; i++) {
		blocks[i] = malloc(64 * 1024);
		if (!blocks[i])
			return 1;
		memset(blocks[i], (int)i, 64 * 1024);
	}
	big = malloc(1024 * 1024);
	if (!big)
		return 1;
	memset(big, 7, 1024 * 1024);
	for (unsigned long i = 0; i < n; i++)
		if (blocks[i][i] != (unsigned char)i)
			bad = 1;
	bad |= big[4096] != 7;
	free(big);
	for (unsigned long i = n; i-- > 0;)
		free(blocks[i]);
	return bad;
}

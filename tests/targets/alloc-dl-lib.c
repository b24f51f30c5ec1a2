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

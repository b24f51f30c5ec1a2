/*
 * dl-churn-lib.c - the plugin that dl-churn loads and unloads again and
 * again: plug_alloc(size) allocates size bytes with malloc, fills and
 * checks them, and frees them.  Returns 0, or 1 when the memory was
 * wrong.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int plug_alloc(unsigned long tag, size_t size)
{
	unsigned char *volatile p = malloc(size);
	int bad = 0;

	if (!p)
		return 1;
	memset(p, (int)(tag & 0xff), size);
	for (size_t k = 0; k < size; k += 97)
		if (p[k] != (unsigned char)(tag & 0xff))
			bad = 1;
	free(p);
	return bad;
}

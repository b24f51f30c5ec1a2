/*
 * ctor-lib.c - a library whose constructor allocates: ctor_lib_init(),
 * run by the dynamic linker before the program's entry point, calls
 * ctor_lib_alloc(), which mallocs CTOR_LIB_BYTES (5000) bytes and keeps
 * them to the end.  ctor-cxx links it.
 */
#include <stdlib.h>
#include <string.h>

void *ctor_lib_block;

__attribute__((noinline)) void *ctor_lib_alloc(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}

__attribute__((constructor, noinline)) void ctor_lib_init(void)
{
	ctor_lib_block = ctor_lib_alloc(5000);
	__asm__ volatile("" ::: "memory");	/* no tail call: its frame stays */
}

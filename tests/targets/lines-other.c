/* lines-other.c - the functions of lines-gc with line information. */
#include <stdlib.h>

void *asm_alloc(size_t n);

__attribute__((noinline)) void *other_alloc(size_t n)
{
	void *p = malloc(n); /* LINE other_alloc */

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *with_lines(size_t n)
{
	void *p = asm_alloc(n); /* LINE with_lines */

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

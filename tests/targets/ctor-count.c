/*
 * ctor-count.c - an LD_PRELOAD malloc that counts: the calls and bytes
 * of malloc and calloc, and the calls of the others, forwarded to
 * glibc's __libc_* entry points.  ctor-cxx asks it at main() what was
 * allocated before: its own view of the constructors' allocations
 * (libstdc++'s emergency pool, ctor-lib's block), for a tracer's counts
 * to be checked against.
 */
#include <stddef.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);

/* malloc calls, bytes; calloc calls, bytes; realloc, memalign calls; frees */
static unsigned long counts[7];

void ctor_count_get(unsigned long out[7])
{
	for (int i = 0; i < 7; i++)
		out[i] = counts[i];
}

void *malloc(size_t n)
{
	counts[0]++;
	counts[1] += n;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	counts[2]++;
	counts[3] += n * m;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	counts[4]++;
	return __libc_realloc(p, n);
}

void *memalign(size_t a, size_t n)
{
	counts[5]++;
	return __libc_memalign(a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	counts[5]++;
	return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	counts[5]++;
	*out = __libc_memalign(a, n);
	return *out ? 0 : 12;
}

void free(void *p)
{
	if (p)
		counts[6]++;
	__libc_free(p);
}

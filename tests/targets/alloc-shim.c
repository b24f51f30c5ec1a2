/*
 * alloc-shim.c - an LD_PRELOAD malloc: malloc, calloc, realloc and free
 * defined here, forwarding to glibc's __libc_* entry points.  With it
 * preloaded, the dynamic linker binds every malloc call to this object:
 * a tracer resolving "malloc" must find this one, not libc's.
 */
#include <stddef.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);

void *malloc(size_t n)
{
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

/* detour-inside.h - the functions of detour-inside-lib.so (see detour-inside.c). */
#ifndef DETOUR_INSIDE_H
#define DETOUR_INSIDE_H

#include <stddef.h>

void *mallocx(size_t size, int flags);
void *rallocx(void *p, size_t size, int flags);
/* fn(a, b, c) with rax = nr at its entry */
void *call_nr(long nr, void *fn, long a, long b, long c);

#endif

/*
 * xmalloc.h - allocation helpers that die on failure (the x prefix).
 */
#ifndef MEMTAP_XMALLOC_H
#define MEMTAP_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
/*
 * Grow *array (of *nmemb elements of size elsize) so that index need-1 is
 * valid; new elements are zeroed.  Doubles the capacity.
 */
void *xgrowarray(void *array, size_t *nmemb, size_t need, size_t elsize);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* MEMTAP_XMALLOC_H */

/*
 * xmalloc.c - allocation that dies on failure.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/xmalloc.h"

static void __attribute__((noreturn)) oom(size_t size)
{
	error_msg_and_die("out of memory allocating %zu bytes", size);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom(strlen(s) + 1);
	return p;
}

void *xgrowarray(void *array, size_t *nmemb, size_t need, size_t elsize)
{
	size_t old = *nmemb, n = old ? old : 8;

	if (need <= old)
		return array;
	while (n < need) {
		if (n > ((size_t)-1 / 2) / elsize)
			oom((size_t)-1);
		n *= 2;
	}
	array = xrealloc(array, n * elsize);
	memset((char *)array + old * elsize, 0, (n - old) * elsize);
	*nmemb = n;
	return array;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom(strlen(fmt));
	va_end(ap);
	return s;
}

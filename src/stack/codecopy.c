/*
 * codecopy.c - copies of run-time code taken where it was made
 * executable (codecopy.h).  A small array, newest last: a lookup scans
 * at most CODE_COPIES_MAX ranges, which are disjoint.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "linux/memio.h"
#include "stack/codecopy.h"
#include "util/xmalloc.h"

struct code_copy {
	uint64_t start, end;
	unsigned char *bytes;
};

struct code_copies {
	struct code_copy c[CODE_COPIES_MAX];
	size_t n;
};

static void drop(struct code_copies *cc, size_t i)
{
	free(cc->c[i].bytes);
	memmove(&cc->c[i], &cc->c[i + 1], (cc->n - i - 1) * sizeof(cc->c[0]));
	cc->n--;
}

int code_copy_take(struct code_copies **ccp, pid_t pid, pid_t tid, uint64_t addr,
		   uint64_t len, int anon)
{
	struct code_copies *cc = *ccp;
	unsigned char *bytes;
	int err;

	if (!len || addr > UINT64_MAX - len)
		return 0;
	for (size_t i = 0; cc && i < cc->n;)
		if (cc->c[i].start < addr + len && addr < cc->c[i].end)
			drop(cc, i);
		else
			i++;
	if (!anon || len > CODE_COPY_MAX)
		return 0;
	bytes = xmalloc((size_t)len);
	err = memio_read_all(pid, tid, addr, bytes, (size_t)len);
	if (err < 0) {
		free(bytes);
		return err;
	}
	if (!cc)
		cc = *ccp = xcalloc(1, sizeof(*cc));
	if (cc->n == CODE_COPIES_MAX)
		drop(cc, 0);	/* the oldest */
	cc->c[cc->n].start = addr;
	cc->c[cc->n].end = addr + len;
	cc->c[cc->n].bytes = bytes;
	cc->n++;
	return 1;
}

int code_copy_read(const struct code_copies *cc, uint64_t addr, void *buf, size_t len)
{
	for (size_t i = 0; cc && i < cc->n; i++) {
		const struct code_copy *c = &cc->c[i];

		if (addr < c->start || addr >= c->end)
			continue;
		if (len > c->end - addr)
			return 0;	/* beyond the copy: not this code's bytes */
		memcpy(buf, c->bytes + (addr - c->start), len);
		return 1;
	}
	return 0;
}

size_t code_copies_count(const struct code_copies *cc, uint64_t *bytes)
{
	uint64_t b = 0;

	for (size_t i = 0; cc && i < cc->n; i++)
		b += cc->c[i].end - cc->c[i].start;
	if (bytes)
		*bytes = b;
	return cc ? cc->n : 0;
}

void code_copies_free(struct code_copies *cc)
{
	while (cc && cc->n)
		drop(cc, cc->n - 1);
	free(cc);
}

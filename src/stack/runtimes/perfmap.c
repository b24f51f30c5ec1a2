/*
 * perfmap.c - the perf map reader (jitnames-int.h): lines of
 * "START SIZE NAME", START and SIZE in hex (0x optional), NAME the rest
 * of the line, as perf's tools/perf/Documentation/jit-interface.txt
 * gives them.  Hostile input: a line that is not so is counted and
 * skipped, a line longer than the buffer is read for its start and
 * skipped to its end, and at most JIT_MAX_BYTES of a file are read.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stack/runtimes/jitnames.h"
#include "stack/runtimes/jitnames-int.h"
#include "util/xmalloc.h"


static int hex_field(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	*v = 0;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;

		if (d < 0)
			break;
		if (digits >= 16)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	if (!digits || s == end || *s != ' ')
		return -1;
	*p = s + 1;
	return 0;
}

/* One line without its newline: 1 when it added a range. */
static int map_line(struct jit_table *t, struct perfmap_state *s, const char *p, const char *end)
{
	uint64_t start, size;
	uint32_t name;

	if (end > p && end[-1] == '\r')
		end--;
	if (end == p)
		return 0;
	if (hex_field(&p, end, &start) < 0 || hex_field(&p, end, &size) < 0 || p == end) {
		s->bad++;
		return 0;
	}
	name = jit_pool_add(t, p, (size_t)(end - p));
	return jit_table_add(t, start, size, name, JIT_NONE, JIT_NONE) == 0;
}

size_t perfmap_read(struct jit_table *t, struct perfmap_state *s, jit_pread_fn rd, void *arg,
		    uint64_t size, int final)
{
	enum { BUF = 65536 };
	char *buf = xmalloc(BUF);
	size_t added = 0;

	if (size > JIT_MAX_BYTES) {
		jit_warn(t, "%" PRIu64 " bytes: only the first %llu MiB are read", size,
			 JIT_MAX_BYTES >> 20);
		size = JIT_MAX_BYTES;
	}
	while (s->off < size) {
		size_t want = size - s->off < BUF ? (size_t)(size - s->off) : BUF;
		ssize_t got = rd(arg, buf, want, s->off);
		const char *p = buf, *end, *nl;

		if (got <= 0)
			break;
		end = buf + got;
		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			if (s->skipping)
				s->skipping = 0;
			else
				added += (size_t)map_line(t, s, p, nl);
			p = nl + 1;
		}
		if (p == buf && (size_t)got == BUF) {
			/* a line longer than the buffer: its start, then skip it */
			if (!s->skipping)
				added += (size_t)map_line(t, s, p, end);
			s->skipping = 1;
			p = end;
		} else if (p == buf && final && s->off + (uint64_t)got == size) {
			if (!s->skipping)
				added += (size_t)map_line(t, s, p, end);
			p = end;
		}
		if (p == buf)
			break;	/* a line not whole yet */
		s->off += (uint64_t)(p - buf);
	}
	if (s->bad)
		jit_warn(t, "%" PRIu64 " line%s not START SIZE NAME, skipped", s->bad,
			 s->bad == 1 ? "" : "s");
	free(buf);
	return added;
}

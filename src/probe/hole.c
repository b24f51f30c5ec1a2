/*
 * hole.c - a free range near some code, for memtap's own code in the
 * target (see hole.h).
 */
#include "config.h"

#include <string.h>

#include "probe/hole.h"

/* Is [a, a + len) clear of every mapping, and not where brk grows? */
static int range_free(const struct procfs_map *r, size_t n, uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (a < r[i].end && a + len > r[i].start)
			return 0;
		/* leave the heap 1 GiB to grow into */
		if (a + len > r[i].end && a < r[i].end + (1ULL << 30) && r[i].path &&
		    strstr(r[i].path, "[heap]"))
			return 0;
	}
	return a >= 0x10000;
}

uint64_t hole_find(const struct procfs_map *r, size_t n, uint64_t lo, uint64_t hi,
		   uint64_t len, uint64_t reach)
{
	reach -= 2 * len;

	/* below: walk down from each mapping's start */
	for (size_t k = n; k-- > 0;) {
		uint64_t a = r[k].start - len;

		if (r[k].start > lo || r[k].start < len)
			continue;
		if (hi - a > reach)
			break;
		if (range_free(r, n, a, len))
			return a;
	}
	/* above: each mapping's end */
	for (size_t k = 0; k < n; k++) {
		uint64_t a = r[k].end;

		if (a < hi)
			continue;
		if (a + len - lo > reach)
			break;
		if (range_free(r, n, a, len))
			return a;
	}
	return 0;
}

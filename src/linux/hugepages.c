/*
 * hugepages.c - page sizes of mappings (hugepages.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>

#include "linux/hugepages.h"
#include "linux/procfs.h"
#include "linux/thp.h"
#include "util/clock.h"
#include "util/xmalloc.h"

#ifndef HUGETLBFS_MAGIC
# define HUGETLBFS_MAGIC 0x958458f6
#endif

#define REREAD_NS (50 * 1000000ull)

struct range {
	uint64_t start, end, page;
};

static struct {
	pid_t pid;
	struct range *r;
	size_t n;
	uint64_t futile_ns;	/* a re-read that did not find the address */
	uint64_t hole_lo, hole_hi;	/* in this hole between mappings */
} cache;

uint64_t hugepages_base_size(void)
{
	static uint64_t page;

	if (!page)
		page = (uint64_t)sysconf(_SC_PAGESIZE);
	return page;
}

static int hugetlb_candidate(const char *path)
{
	return path && (!strncmp(path, "/anon_hugepage", 14) || !strncmp(path, "/SYSV", 5) ||
			!strncmp(path, "/dev/hugepages/", 15));
}

static uint64_t mapping_page(pid_t pid, const struct procfs_map *m)
{
	char path[96];
	struct statfs sf;

	if (!hugetlb_candidate(m->path))
		return hugepages_base_size();
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	if (statfs(path, &sf) == 0 && (uint64_t)sf.f_type == HUGETLBFS_MAGIC && sf.f_bsize > 0)
		return (uint64_t)sf.f_bsize;
	return hugepages_base_size();
}

static void reread(pid_t pid)
{
	struct procfs_map *maps;
	size_t n;

	cache.pid = pid;
	cache.n = 0;
	if (procfs_read_maps(pid, &maps, &n) < 0)
		return;
	free(cache.r);
	cache.r = xcalloc(n ? n : 1, sizeof(*cache.r));
	for (size_t i = 0; i < n; i++) {
		cache.r[i].start = maps[i].start;
		cache.r[i].end = maps[i].end;
		cache.r[i].page = mapping_page(pid, &maps[i]);
	}
	cache.n = n;
	procfs_maps_free(maps);
}

static const struct range *find(uint64_t addr)
{
	size_t lo = 0, hi = cache.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < cache.r[mid].start)
			hi = mid;
		else if (addr >= cache.r[mid].end)
			lo = mid + 1;
		else
			return &cache.r[mid];
	}
	return NULL;
}

/* The hole of the cache's mappings around addr, not in any of them. */
static void hole(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	*lo = 0;
	*hi = UINT64_MAX;
	for (size_t i = 0; i < cache.n; i++) {
		if (cache.r[i].end <= addr)
			*lo = cache.r[i].end;
		else if (cache.r[i].start > addr) {
			*hi = cache.r[i].start;
			break;
		}
	}
}

/* The mapping of pid that holds addr, from the cache or a new read; NULL if none. */
static const struct range *mapping_of(pid_t pid, uint64_t addr)
{
	const struct range *r = cache.pid == pid ? find(addr) : NULL;
	int futile = cache.pid == pid && cache.futile_ns && addr >= cache.hole_lo &&
		     addr < cache.hole_hi && now_ns() - cache.futile_ns < REREAD_NS;

	if (!r && !futile) {
		reread(pid);
		r = find(addr);
		cache.futile_ns = r ? 0 : now_ns();
		if (!r)
			hole(addr, &cache.hole_lo, &cache.hole_hi);
	}
	return r;
}

uint64_t hugepages_page_size(pid_t pid, uint64_t addr)
{
	const struct range *r = mapping_of(pid, addr);

	return r ? r->page : hugepages_base_size();
}

uint64_t hugepages_fault_size(pid_t pid, uint64_t addr)
{
	const struct range *r = mapping_of(pid, addr);
	uint64_t base = hugepages_base_size();

	if (!r)
		return base;
	if (r->page != base)
		return r->page;
	return thp_fault_size(pid, addr, r->start, r->end, base);
}

void hugepages_release(void)
{
	free(cache.r);
	cache.r = NULL;
	cache.n = 0;
	cache.pid = 0;
	cache.futile_ns = 0;
	thp_release();
}

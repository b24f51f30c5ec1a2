/*
 * pagemap.c - resident bytes and access changes of a range (pagemap.h).
 *
 * /proc/PID/pagemap has one 64-bit entry per page of the address space:
 * bit 63 set when the page is present in memory.  The present bit is
 * readable by whoever may read the process's memory (the physical frame
 * numbers are not, and are not needed).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "linux/pagemap.h"
#include "linux/procfs.h"

#define PAGE ((uint64_t)arch_page_size())
#define CHUNK 512		/* entries read at once */
#define PRESENT (1ull << 63)

int pagemap_resident(pid_t pid, uint64_t addr, uint64_t len, uint64_t *bytes)
{
	char path[64];
	uint64_t first = addr / PAGE, last = (addr + len + PAGE - 1) / PAGE, n = 0;
	uint64_t buf[CHUNK];
	int fd, err = 0;

	*bytes = 0;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)procfs_live_task(pid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (uint64_t p = first; p < last;) {
		size_t want = last - p < CHUNK ? (size_t)(last - p) : CHUNK;
		ssize_t got = pread(fd, buf, want * sizeof(*buf), (off_t)(p * sizeof(*buf)));

		if (got <= 0) {
			err = got < 0 ? errno : EIO;
			break;
		}
		for (size_t i = 0; i < (size_t)got / sizeof(*buf); i++)
			n += (buf[i] & PRESENT) != 0;
		p += (uint64_t)got / sizeof(*buf);
	}
	close(fd);
	*bytes = n * PAGE;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

void maps_range_change(pid_t pid, uint64_t addr, uint64_t len, int prot,
		       struct range_change *rc)
{
	struct procfs_map *maps;
	size_t n;
	uint64_t end = addr + ((len + PAGE - 1) & ~(uint64_t)(PAGE - 1));

	rc->access = rc->data = 0;
	rc->data_bytes = rc->mapped = 0;
	if (procfs_read_maps(pid, &maps, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct procfs_map *m = &maps[i];
		uint64_t lo = m->start > addr ? m->start : addr;
		uint64_t hi = m->end < end ? m->end : end;
		int none = !(m->perms & (PROT_READ | PROT_WRITE | PROT_EXEC));
		int priv = !(m->perms & PROCFS_MAP_SHARED) &&
			   !(m->path && !strcmp(m->path, "[stack]"));
		int data = priv && (m->perms & PROT_WRITE);

		if (lo >= hi)
			continue;
		rc->mapped += hi - lo;
		if (data)
			rc->data_bytes += hi - lo;
		if (prot < 0)
			continue;
		if (none && prot != PROT_NONE)
			rc->access += (int64_t)(hi - lo);
		else if (!none && prot == PROT_NONE)
			rc->access -= (int64_t)(hi - lo);
		if (priv && !data && (prot & PROT_WRITE))
			rc->data += (int64_t)(hi - lo);
		else if (data && !(prot & PROT_WRITE))
			rc->data -= (int64_t)(hi - lo);
	}
	procfs_maps_free(maps);
}

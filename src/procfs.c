/*
 * procfs.c - the few /proc files memtap reads: status (memory figures,
 * TracerPid, Uid), stat (state, flags), comm, maps (the heap's end).
 * Every function returns -1 (or 0) when the task is gone; none dies.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtap.h"

/* Read a small /proc file into buf, NUL-terminated; bytes read or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1 &&
	       (n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total;
}

static int status_field(const char *buf, const char *name, long *value)
{
	size_t len = strlen(name);

	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (strncmp(p, name, len) == 0 && p[len] == ':') {
			*value = strtol(p + len + 1, NULL, 10);
			return 0;
		}
	}
	return -1;
}

int procfs_status_long(pid_t pid, const char *name, long *value)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	return status_field(buf, name, value);
}

int procfs_read_vmstat(pid_t pid, struct vmstat *vs)
{
	char path[64], buf[4096];
	long size, rss, data;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0 ||
	    status_field(buf, "VmSize", &size) < 0 ||
	    status_field(buf, "VmRSS", &rss) < 0 ||
	    status_field(buf, "VmData", &data) < 0)
		return -1;
	vs->vm_size = (uint64_t)size * 1024;
	vs->vm_rss = (uint64_t)rss * 1024;
	vs->vm_data = (uint64_t)data * 1024;
	vs->have = 1;
	return 0;
}

int procfs_read_comm(pid_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", tid);
	n = read_small(path, buf, size);
	if (n <= 0) {
		snprintf(buf, size, "?");
		return -1;
	}
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

int procfs_stat_state(pid_t pid, char *state, unsigned long *flags)
{
	char path[64], buf[1024];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* comm may hold spaces and parentheses: fields follow the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	*state = p[2];
	/* fields after comm: state ppid pgrp session tty tpgid flags */
	p += 2;
	for (int i = 0; i < 6 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	*flags = p ? strtoul(p, NULL, 10) : 0;
	return 0;
}

/*
 * The program break as far as /proc shows it: the end of [heap], or
 * start_brk (field 47 of stat) when the heap was never grown.  Exact up
 * to page rounding; used only for the first brk seen after attaching.
 */
uint64_t procfs_heap_end(pid_t pid)
{
	char path[64], line[512];
	uint64_t start, end, result = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[heap]") &&
		    sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2) {
			result = end;
			break;
		}
	}
	fclose(f);
	if (!result) {
		char buf[1024];
		const char *p;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
			return 0;
		/* field 3 follows ") "; start_brk is field 47 */
		for (int i = 3; i < 47 && p; i++) {
			p = strchr(p + 1, ' ');
		}
		if (p)
			result = strtoull(p + 1, NULL, 10);
	}
	return result;
}

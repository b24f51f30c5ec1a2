/*
 * procfs.c - the few /proc files memtap reads: status (memory figures,
 * TracerPid, Uid), stat (state, flags), comm, maps (every mapping, the
 * heap's end), auxv (the entry point, the interpreter).  Every function
 * returns -1 (or 0) when the task is gone; none dies.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "linux/procfs.h"
#include "util/xmalloc.h"

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

/* A /proc file of any size, NUL-terminated, in a malloc'd buffer; NULL on error. */
static char *read_all(const char *path, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 16384, len = 0;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap);
	while ((n = read(fd, buf + len, cap - len - 1)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)n;
		if (cap - len < 4096) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	if (n < 0) {
		int err = errno;

		close(fd);
		free(buf);
		errno = err;
		return NULL;
	}
	close(fd);
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

/* The text after "name:" in a status file's buf, or NULL. */
static const char *status_value(const char *buf, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (strncmp(p, name, len) == 0 && p[len] == ':')
			return p + len + 1;
	return NULL;
}

static int status_field(const char *buf, const char *name, long *value)
{
	const char *p = status_value(buf, name);

	if (!p)
		return -1;
	*value = strtol(p, NULL, 10);
	return 0;
}

/* /proc/PID/status into buf; -1 when the task is gone. */
static int read_status(pid_t pid, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return read_small(path, buf, size) < 0 ? -1 : 0;
}

int procfs_status_long(pid_t pid, const char *name, long *value)
{
	return procfs_status_longs(pid, &name, value, 1) == 1 ? 0 : -1;
}

int procfs_status_longs(pid_t pid, const char *const *names, long *values, size_t n)
{
	char buf[4096];
	int found = 0;

	if (read_status(pid, buf, sizeof(buf)) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (status_field(buf, names[i], &values[i]) == 0)
			found |= 1 << i;
	return found;
}

int procfs_status_hex(pid_t pid, const char *name, uint64_t *value)
{
	char buf[4096];
	const char *p;

	if (read_status(pid, buf, sizeof(buf)) < 0 || !(p = status_value(buf, name)))
		return -1;
	*value = strtoull(p, NULL, 16);
	return 0;
}

int procfs_status_ids(pid_t pid, const char *name, long ids[4])
{
	char buf[4096], *q;

	if (read_status(pid, buf, sizeof(buf)) < 0 || !(q = (char *)status_value(buf, name)))
		return -1;
	for (int i = 0; i < 4; i++)
		ids[i] = strtol(q, &q, 10);
	return 0;
}

pid_t procfs_live_task(pid_t pid)
{
	char path[64], state;
	unsigned long flags;
	pid_t found = 0;
	struct dirent *de;
	DIR *d;

	if (procfs_stat_state(pid, &state, &flags) < 0 || (state != 'Z' && state != 'X'))
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return pid;
	while (!found && (de = readdir(d))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

		if (tid > 0 && tid != pid && procfs_stat_state(tid, &state, &flags) == 0 &&
		    state != 'Z' && state != 'X')
			found = tid;
	}
	closedir(d);
	return found ? found : pid;
}

int procfs_read_vmstat(pid_t pid, struct vmstat *vs)
{
	char path[64], buf[4096];
	long size, rss, data;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	/* a leader that exited has no memory figures: its threads have */
	if (!status_value(buf, "VmSize") && procfs_live_task(pid) != pid) {
		snprintf(path, sizeof(path), "/proc/%d/status", procfs_live_task(pid));
		if (read_small(path, buf, sizeof(buf)) < 0)
			return -1;
	}
	if (status_field(buf, "VmSize", &size) < 0 ||
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
 * Fields first .. first + n - 1 of /proc/PID/stat, numbers (numbered
 * from 1 as in proc(5); first >= 3, after comm, which may hold spaces
 * and parentheses: the fields follow the last ')').
 */
int procfs_stat_fields(pid_t pid, int first, int n, uint64_t *v)
{
	char path[64], buf[1024];
	char *p, *end;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (first < 3 || read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return -1;
	p++;			/* the space before field 3 */
	for (int i = 3; i < first && p; i++)
		p = strchr(p + 1, ' ');
	for (int i = 0; i < n; i++) {
		if (!p || *p != ' ')
			return -1;
		v[i] = strtoull(p + 1, &end, 10);
		if (end == p + 1)
			return -1;
		p = end;
	}
	return 0;
}

int procfs_cpu_ns(pid_t pid, uint64_t *ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t t[2];		/* utime, stime */

	if (hz <= 0 || procfs_stat_fields(pid, 14, 2, t) < 0)
		return -1;
	*ns = (t[0] + t[1]) * (1000000000ULL / (uint64_t)hz);
	return 0;
}

/*
 * The program break as far as /proc shows it: the end of [heap], or
 * start_brk (field 47 of stat) when the heap was never grown.  Exact up
 * to page rounding; used only for the first brk seen after attaching.
 */
/* A number in base, then the character sep; moves *p past both. */
static int maps_field(char **p, int base, char sep, uint64_t *value)
{
	char *end;

	*value = strtoull(*p, &end, base);
	if (end == *p || *end != sep)
		return -1;
	*p = end + 1;
	return 0;
}

/* "start-end perms offset major:minor inode   path" into m; -1 if not that. */
static int maps_line(char *line, char *eol, struct procfs_map *m)
{
	char *p = line, *end;
	uint64_t maj, min, ino;

	if (maps_field(&p, 16, '-', &m->start) < 0 || maps_field(&p, 16, ' ', &m->end) < 0)
		return -1;
	if (eol - p < 5 || p[4] != ' ')
		return -1;
	m->perms = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		   (p[2] == 'x' ? PROT_EXEC : 0) | (p[3] == 's' ? PROCFS_MAP_SHARED : 0);
	p += 5;
	if (maps_field(&p, 16, ' ', &m->offset) < 0 || maps_field(&p, 16, ':', &maj) < 0 ||
	    maps_field(&p, 16, ' ', &min) < 0)
		return -1;
	ino = strtoull(p, &end, 10);
	if (end == p || (*end && *end != ' '))
		return -1;
	m->dev = makedev(maj, min);
	m->ino = (ino_t)ino;
	for (p = end; *p == ' '; p++)
		;
	m->path = *p ? p : NULL;
	m->deleted = eol - p > 10 && strcmp(eol - 10, " (deleted)") == 0;
	if (m->deleted)
		eol[-10] = '\0';
	return 0;
}

int procfs_read_maps(pid_t pid, struct procfs_map **maps, size_t *n)
{
	char path[64], *buf, *text, *line, *eol;
	size_t len, lines = 1, head;
	struct procfs_map *m;

	*maps = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	buf = read_all(path, &len);
	if (!buf)
		return -1;
	if (!len && procfs_live_task(pid) != pid) {
		/* the leader exited: the address space is its threads' */
		free(buf);
		snprintf(path, sizeof(path), "/proc/%d/maps", procfs_live_task(pid));
		buf = read_all(path, &len);
		if (!buf)
			return -1;
	}
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	/* one block: the array, then the text its paths point into */
	head = lines * sizeof(*m);
	buf = xrealloc(buf, head + len + 1);
	memmove(buf + head, buf, len + 1);
	m = (struct procfs_map *)(void *)buf;
	text = buf + head;
	for (line = text; line < text + len; line = eol + 1) {
		eol = memchr(line, '\n', (size_t)(text + len - line));
		if (!eol)
			eol = text + len;
		*eol = '\0';
		if (maps_line(line, eol, &m[*n]) == 0)
			(*n)++;
	}
	*maps = m;
	return 0;
}

void procfs_maps_free(struct procfs_map *maps)
{
	free(maps);
}

/*
 * The program break as far as /proc shows it: the end of [heap], or
 * start_brk (field 47 of stat) when the heap was never grown.  Exact up
 * to page rounding; used only for the first brk seen after attaching.
 */
uint64_t procfs_heap_end(pid_t pid)
{
	uint64_t result = 0;
	struct procfs_map *maps;
	size_t n;

	if (procfs_read_maps(pid, &maps, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && !result; i++)
		if (maps[i].path && strstr(maps[i].path, "[heap]"))
			result = maps[i].end;
	procfs_maps_free(maps);
	if (!result && procfs_stat_fields(procfs_live_task(pid), 47, 1, &result) < 0)
		result = 0;	/* start_brk */
	return result;
}

/* The value of entry type of /proc/PID/auxv; 0 if unknown or absent. */
uint64_t procfs_auxv(pid_t pid, uint64_t type)
{
	char path[64];
	uint64_t av[2], value = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", procfs_live_task(pid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != AT_NULL)
		if (av[0] == type)
			value = av[1];
	close(fd);
	return value;
}

uint64_t procfs_auxv_entry(pid_t pid)
{
	return procfs_auxv(pid, AT_ENTRY);
}

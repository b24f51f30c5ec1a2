/*
 * detach-check.c - see detach-check.h.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detach-check.h"
#include "linux/memio.h"
#include "util/xmalloc.h"

int text_compare(pid_t pid, const char *path, uint64_t bias, struct text_diff *diff)
{
	char fpath[4096];
	int fd, bad = 0;
	Elf *elf;
	size_t phnum;

	snprintf(fpath, sizeof(fpath), "/proc/%d/root%s", pid, path);
	fd = open(fpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &phnum) < 0) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -2;
	}
	for (size_t i = 0; i < phnum && !bad; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		uint8_t *a = xmalloc(ph.p_filesz), *b = xmalloc(ph.p_filesz);

		if (pread(fd, a, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz ||
		    memio_read_all(pid, 0, bias + ph.p_vaddr, b, ph.p_filesz) < 0) {
			bad = -1;
		} else if (memcmp(a, b, ph.p_filesz) != 0) {
			for (size_t k = 0; k < ph.p_filesz; k++)
				if (a[k] != b[k]) {
					diff->addr = (size_t)(ph.p_vaddr + k);
					diff->file = a[k];
					diff->mem = b[k];
					break;
				}
			bad = 1;
		}
		free(a);
		free(b);
	}
	elf_end(elf);
	close(fd);
	return bad;
}

int traced_threads(pid_t pid)
{
	char path[320], line[256];
	int traced = 0;
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "State:", 6) == 0 && strstr(line, "tracing stop"))
				traced++;
			if (strncmp(line, "TracerPid:", 10) == 0 && atoi(line + 10) != 0)
				traced++;
		}
		fclose(f);
	}
	closedir(d);
	return traced;
}

/*
 * text-check.c - check that a process carries no trace of memtap:
 *
 *   text-check PID
 *
 * - the executable PT_LOAD segments of every ELF object it maps equal
 *   the files' bytes (no int3 left);
 * - no anonymous executable mapping (no scratch page left);
 * - no thread traced or in a tracing stop (waits up to a second).
 *
 * Prints "VERIFY ok", or one line per problem and "VERIFY failed" (exit
 * 1).  For processes without code of their own made at runtime (JIT).
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

#include "elfsym.h"
#include "remote.h"
#include "xmalloc.h"

static int compare_text(pid_t pid, const char *path, uint64_t bias)
{
	char fpath[4096];
	int fd, bad = 0;
	Elf *elf;
	size_t phnum;

	snprintf(fpath, sizeof(fpath), "/proc/%d/root%s", pid, path);
	fd = open(fpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* not a file we can read: not checked */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &phnum) < 0) {
		if (elf)
			elf_end(elf);
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < phnum && !bad; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		uint8_t *a = xmalloc(ph.p_filesz), *b = xmalloc(ph.p_filesz);

		if (pread(fd, a, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz ||
		    remote_read(pid, -1, bias + ph.p_vaddr, b, ph.p_filesz) < 0) {
			printf("cannot compare the text of %s\n", path);
			bad = 1;
		} else if (memcmp(a, b, ph.p_filesz) != 0) {
			for (size_t k = 0; k < ph.p_filesz; k++)
				if (a[k] != b[k]) {
					printf("text differs: %s +%#zx file %02x memory %02x\n", path,
					       (size_t)(ph.p_vaddr + k), a[k], b[k]);
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

static int anon_exec_mappings(pid_t pid)
{
	char path[64], line[4096];
	int bad = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "", name[4096] = "";
		unsigned long lo, hi, off, ino;
		unsigned dmaj, dmin;

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %4095s", &lo, &hi, perms, &off, &dmaj,
			   &dmin, &ino, name) < 7)
			continue;
		if (perms[2] != 'x' || ino != 0 || name[0] == '[')
			continue;
		printf("anonymous executable mapping left: %s", line);
		bad = 1;
	}
	fclose(f);
	return bad;
}

static int threads_stopped(pid_t pid)
{
	char path[320], line[256];
	int stopped = 0;
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
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
				stopped++;
			if (strncmp(line, "TracerPid:", 10) == 0 && atoi(line + 10) != 0)
				stopped++;
		}
		fclose(f);
	}
	closedir(d);
	return stopped;
}

int main(int argc, char **argv)
{
	struct elfsym_proc *ep;
	pid_t pid;
	int bad = 0, checked = 0;

	if (argc != 2)
		return 2;
	pid = atoi(argv[1]);
	elf_version(EV_CURRENT);
	for (int i = 0; threads_stopped(pid); i++) {
		if (i == 100) {
			printf("a thread is still traced or stopped\n");
			bad = 1;
			break;
		}
		usleep(10000);
	}
	ep = elfsym_proc_load(pid);
	if (!ep) {
		printf("cannot read the objects of %d\n", pid);
		return 1;
	}
	for (size_t i = 0; i < elfsym_proc_nmodules(ep); i++) {
		const struct elfsym_module *m = elfsym_proc_module(ep, i);

		bad |= compare_text(pid, m->path, m->bias);
		checked++;
	}
	elfsym_proc_free(ep);
	if (!checked) {
		printf("no object checked\n");
		bad = 1;
	}
	bad |= anon_exec_mappings(pid);
	printf("VERIFY %s\n", bad ? "failed" : "ok");
	return bad;
}

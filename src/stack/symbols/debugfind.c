/*
 * debugfind.c - separate debug files found by memtap itself, safely
 * (debugfind.h).  libelf only: the ELF symbols of probe/ use it as the
 * symbolizer's and the unwinder's Dwfls do (debugfind-dwfl.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/tfile.h"
#include "stack/symbols/debugfind.h"
#include "util/error.h"
#include "util/xmalloc.h"

#ifndef NT_GNU_BUILD_ID
# define NT_GNU_BUILD_ID 3
#endif

#define DEBUG_ROOT "/usr/lib/debug"
#define ID_MAX 64

uint32_t debugfind_crc32(int fd, int *ok)
{
	static uint32_t table[256];
	unsigned char buf[1 << 16];
	uint32_t crc = 0xffffffff;
	off_t at = 0;
	ssize_t n;

	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = (c & 1) ? 0xedb88320 ^ (c >> 1) : c >> 1;
			__atomic_store_n(&table[i], c, __ATOMIC_RELAXED);
		}
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
		at += n;
	}
	*ok = n == 0;
	return ~crc;
}

/* Is fd's ELF's build-id note id? */
static int has_build_id(int fd, const unsigned char *id, size_t len)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	int same = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	while (!same && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
				same = nh.n_descsz == len &&
				       memcmp((char *)d->d_buf + desc_off, id, len) == 0;
				break;
			}
	}
	elf_end(elf);
	return same;
}

/* Candidates said to be another file's, so that -v says it once each. */
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t said[64];
static unsigned nsaid;

/* -v: path is not the debug file sought (once per path). */
static void say_mismatch(const char *path, const char *what)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned i;
	int first;

	if (!verbose)
		return;
	for (const char *s = path; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	pthread_mutex_lock(&said_lock);
	for (i = 0; i < nsaid && said[i] != h; i++)
		;
	first = i == nsaid;	/* (past 64 paths, each is said each time) */
	if (first && nsaid < sizeof(said) / sizeof(said[0]))
		said[nsaid++] = h;
	pthread_mutex_unlock(&said_lock);
	if (first)
		verbose_msg("%s: not used: %s is not the binary's", path, what);
}

/*
 * Open candidate path under pid's root (own: memtap's) and keep it if it
 * is the file sought: build-id id, else (id NULL) the CRC crc.
 */
static int try_candidate(pid_t pid, int own, const char *path, const unsigned char *id,
			 size_t len, uint32_t crc, char **found)
{
	struct tfile_req req = {
		.pid = pid, .path = path, .kind = TF_DEBUG,
		.flags = (pid && !own) ? TF_IN_ROOT : 0,
	};
	int fd = tfile_open(&req), ok = 0;

	if (fd < 0)
		return -1;
	if (id && len)
		ok = has_build_id(fd, id, len);
	else if (debugfind_crc32(fd, &ok) != crc)
		ok = 0;
	if (!ok) {
		say_mismatch(path, id && len ? "its build-id" : "its CRC");
		close(fd);
		return -1;
	}
	*found = xstrdup(path);
	return fd;
}

/* /usr/lib/debug/.build-id/xx/rest.debug, under pid's root then memtap's. */
static int by_build_id(pid_t pid, const unsigned char *id, size_t len, char **found)
{
	char hex[2 * ID_MAX + 1], *path;
	int fd = -1;

	if (len < 2 || len > ID_MAX)
		return -1;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	path = xasprintf(DEBUG_ROOT "/.build-id/%.2s/%s.debug", hex, hex + 2);
	for (int own = 0; fd < 0 && own < (pid ? 2 : 1); own++)
		fd = try_candidate(pid, own, path, id, len, 0, found);
	free(path);
	return fd;
}

/* path's directory ("" for the root), malloc'd. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	char *d = xmalloc(n + 1);

	memcpy(d, path, n);
	d[n] = '\0';
	return d;
}

int debugfind_open(const struct debugfind_req *q, char **found)
{
	const unsigned char *id = q->build_id_len ? q->build_id : NULL;
	char *dir, *cand[3];
	int fd;

	*found = NULL;
	if (id && (fd = by_build_id(q->pid, id, q->build_id_len, found)) >= 0)
		return fd;
	if (!q->debuglink || !*q->debuglink || !q->path || q->path[0] != '/')
		return -1;
	if (strchr(q->debuglink, '/')) {
		debug_msg("%s: debuglink '%s' names no file in a directory; not looked for",
			  q->path, q->debuglink);
		return -1;
	}
	dir = dir_of(q->path);
	cand[0] = xasprintf("%s/%s", dir, q->debuglink);
	cand[1] = xasprintf("%s/.debug/%s", dir, q->debuglink);
	cand[2] = xasprintf(DEBUG_ROOT "%s/%s", dir, q->debuglink);
	fd = -1;
	for (int i = 0; i < 3 && fd < 0; i++)
		if (strcmp(cand[i], q->path) != 0)	/* never the module itself */
			fd = try_candidate(q->pid, 0, cand[i], id, q->build_id_len, q->crc, found);
	for (int i = 0; i < 3; i++)
		free(cand[i]);
	free(dir);
	return fd;
}

/* dir + "/" + rel with "." and ".." taken out as words (no link is followed). */
static char *join_clean(const char *dir, const char *rel)
{
	char *all = xasprintf("%s/%s", dir, rel), *out = xmalloc(strlen(all) + 2);
	size_t n = 0;

	for (char *c = all, *next; *c; c = next) {
		size_t len;

		while (*c == '/')
			c++;
		len = strcspn(c, "/");
		next = c + len;
		if (!len || (len == 1 && c[0] == '.'))
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			continue;
		}
		out[n++] = '/';
		memcpy(out + n, c, len);
		n += len;
	}
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
	free(all);
	return out;
}

int debugfind_open_alt(pid_t pid, const char *debug_path, const char *altname,
		       const unsigned char *id, size_t len, char **found)
{
	char *dir, *path;
	int fd;

	*found = NULL;
	if (!id || !len)
		return -1;
	if ((fd = by_build_id(pid, id, len, found)) >= 0)
		return fd;
	if (!altname || !*altname)
		return -1;
	if (altname[0] == '/') {
		path = join_clean("", altname);
	} else {
		if (!debug_path || debug_path[0] != '/')
			return -1;
		dir = dir_of(debug_path);
		path = join_clean(dir, altname);
		free(dir);
	}
	fd = try_candidate(pid, 0, path, id, len, 0, found);
	free(path);
	return fd;
}

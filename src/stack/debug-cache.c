/*
 * debug-cache.c - uncompressed copies of compressed debug files
 * (debug-cache.h).  Called from the symbolizer's Dwfls, on memtap's main
 * thread or on the store's (symbolize-store.c): the directory is found
 * once, under a pthread_once, and the counters are atomic.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <sys/stat.h>
#include <elfutils/libdwelf.h>

#include "stack/debug-cache.h"
#include "stack/modules.h"
#include "util/error.h"
#include "util/xmalloc.h"

#define ID_MAX 64

static char *cache_dir;		/* NULL: none */
static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static unsigned n_written, n_used;

/* mkdir -p, mode 0700; 0 when dir is a directory of the effective user. */
static int make_dir(char *dir)
{
	struct stat st;

	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() ? 0 : -1;
}

static void find_dir(void)
{
	const char *env = getenv("MEMTAP_DEBUG_CACHE"), *base;
	char *dir;

	if (env)
		dir = *env && strcmp(env, "0") != 0 ? xstrdup(env) : NULL;
	else if ((base = getenv("XDG_CACHE_HOME")) && base[0] == '/')
		dir = xasprintf("%s/memtap/debug", base);
	else if ((base = getenv("HOME")) && base[0] == '/')
		dir = xasprintf("%s/.cache/memtap/debug", base);
	else
		dir = NULL;
	if (dir && (dir[0] != '/' || make_dir(dir) < 0)) {
		debug_msg("no cache of uncompressed debug files: %s unusable", dir);
		free(dir);
		dir = NULL;
	}
	cache_dir = dir;
}

/* Are elf's .debug_* sections compressed (ELF's way; GNU's .zdebug left alone)? */
static int compressed(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int any = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strncmp(name, ".zdebug", 7) == 0)
			return 0;
		if ((sh.sh_flags & SHF_COMPRESSED) && strncmp(name, ".debug_", 7) == 0)
			any = 1;
	}
	return any;
}

/* Is the file at fd an ELF with build-id id? */
static int same_id(int fd, const unsigned char *id, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got;
	int same = elf && dwelf_elf_gnu_build_id(elf, &got) == (ssize_t)len &&
		   memcmp(got, id, len) == 0;

	if (elf)
		elf_end(elf);
	return same;
}

/* fd's bytes into out. */
static int copy_file(int fd, int out)
{
	char buf[1 << 16];
	off_t at = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		for (ssize_t done = 0; done < n; ) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0)
				return -1;
			done += w;
		}
		at += n;
	}
	return n < 0 ? -1 : 0;
}

/* Write path: fd's ELF with its sections inflated, by a temporary name. */
static int write_copy(int fd, const char *path)
{
	char *tmp = xasprintf("%s.XXXXXX", path);
	int out = mkstemp(tmp), ok = 0;
	Elf *elf = NULL;

	if (out >= 0 && copy_file(fd, out) == 0 && (elf = elf_begin(out, ELF_C_RDWR, NULL))) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		ok = 1;
		while (ok && (scn = elf_nextscn(elf, scn)) != NULL)
			if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
			    elf_compress(scn, 0, 0) < 0)
				ok = 0;
		if (ok && elf_update(elf, ELF_C_WRITE) < 0)
			ok = 0;
	}
	if (elf)
		elf_end(elf);
	if (out >= 0 && close(out) < 0)
		ok = 0;
	if (ok && rename(tmp, path) < 0)
		ok = 0;
	if (!ok && out >= 0)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}

/* The copy's path for build-id id. */
static char *copy_path(const unsigned char *id, size_t len)
{
	char hex[2 * ID_MAX + 1];

	return xasprintf("%s/%s.debug", cache_dir, build_id_hex(id, len, hex, sizeof(hex)));
}

/* The copy of build-id id, opened if it is one: its fd, or -1. */
static int open_copy(const char *path, const unsigned char *id, size_t len)
{
	int cfd = open(path, O_RDONLY | O_CLOEXEC);

	if (cfd >= 0 && !same_id(cfd, id, len)) {
		close(cfd);
		cfd = -1;
	}
	return cfd;
}

/* fd (a debug file) compressed: its copy written, for the runs after. */
static void write_for_later(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id = NULL;
	ssize_t len = elf && compressed(elf) ? dwelf_elf_gnu_build_id(elf, &id) : 0;
	char *path = len > 0 && len <= ID_MAX ? copy_path(id, (size_t)len) : NULL;

	if (elf)
		elf_end(elf);
	if (!path)
		return;
	/* a copy there already that is not one (cut short, say): written again */
	if (write_copy(fd, path) == 0)
		__atomic_add_fetch(&n_written, 1, __ATOMIC_RELAXED);
	free(path);
}

/*
 * The copy is looked up by the module's build-id before the standard
 * search: dwfl_standard_find_debuginfo() may keep the file it found for
 * the module (by build-id), and libdwfl would then read that one.
 */
int debug_cache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, fd;

	pthread_once(&dir_once, find_dir);
	len = cache_dir ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	if (len > 0 && len <= ID_MAX) {
		char *path = copy_path(bits, (size_t)len);
		int cfd = open_copy(path, bits, (size_t)len);

		if (cfd >= 0) {
			debug_msg("%s: debug information from %s", modname, path);
			__atomic_add_fetch(&n_used, 1, __ATOMIC_RELAXED);
			*debuginfo_file_name = path;
			return cfd;
		}
		free(path);
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					  debuglink_file, debuglink_crc, debuginfo_file_name);
	if (fd >= 0 && len > 0)
		write_for_later(fd);
	return fd;
}

void debug_cache_counts(unsigned *written, unsigned *used)
{
	*written = __atomic_load_n(&n_written, __ATOMIC_RELAXED);
	*used = __atomic_load_n(&n_used, __ATOMIC_RELAXED);
}

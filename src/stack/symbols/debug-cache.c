/*
 * debug-cache.c - uncompressed copies of compressed debug files
 * (debug-cache.h).  Called from the symbolizer's Dwfls, on memtap's main
 * thread or on the store's (symbolize-store.c): the directory is found
 * once, under a pthread_once, and the counters are atomic.
 *
 * The directory may sit under a home that another user owns (sudo keeps
 * HOME): it is held open once checked (a directory of memtap's effective
 * user, writable by no one else), and every copy is opened, written and
 * renamed relative to that descriptor, so that a path swapped since
 * leads nowhere else; a copy is opened without following a link or
 * waiting (O_NOFOLLOW, O_NONBLOCK), used only if it is a regular file
 * within the debug file cap with the module's build-id.
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

#include "linux/tfile.h"
#include "stack/symbols/debug-cache.h"
#include "stack/symbols/debugfind-dwfl.h"
#include "stack/modules.h"
#include "util/error.h"
#include "util/xmalloc.h"

#define ID_MAX 64

static char *cache_dir;		/* NULL: none; for messages */
static int cache_fd = -1;	/* the directory, held open */
static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static unsigned n_written, n_used;

/*
 * mkdir -p, mode 0700; the directory's descriptor when it is a directory
 * of the effective user that no one else can write to, else -1.
 */
static int make_dir(char *dir)
{
	struct stat st;
	int fd;

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
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
			(st.st_mode & 022))) {
		close(fd);
		fd = -1;
	}
	return fd;
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
	if (dir && (dir[0] != '/' || (cache_fd = make_dir(dir)) < 0)) {
		debug_msg("no cache of uncompressed debug files: %s unusable "
			  "(not a directory of memtap's user that only it can write to)", dir);
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

/* A new file of the cache, name.XXXXXX: its fd, the name in *tmp. */
static int make_temp(const char *name, char **tmp)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	unsigned long r = (unsigned long)getpid() * 2654435761UL ^ (unsigned long)(uintptr_t)tmp;

	for (int tries = 0; tries < 100; tries++) {
		char suffix[7];
		int fd;

		r = r * 6364136223846793005UL + 1442695040888963407UL + (unsigned long)tries;
		for (int i = 0; i < 6; i++)
			suffix[i] = digits[(r >> (6 * i + 16)) % 36];
		suffix[6] = '\0';
		*tmp = xasprintf("%s.%s", name, suffix);
		fd = openat(cache_fd, *tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
		free(*tmp);
	}
	*tmp = NULL;
	return -1;
}

/* Write name (in the cache): fd's ELF with its sections inflated, by a temporary name. */
static int write_copy(int fd, const char *name)
{
	char *tmp = NULL;
	int out = make_temp(name, &tmp), ok = 0;
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
	if (ok && renameat(cache_fd, tmp, cache_fd, name) < 0)
		ok = 0;
	if (!ok && out >= 0)
		unlinkat(cache_fd, tmp, 0);
	free(tmp);
	return ok ? 0 : -1;
}

/* The copy's name in the cache for build-id id. */
static char *copy_name(const unsigned char *id, size_t len)
{
	char hex[2 * ID_MAX + 1];

	return xasprintf("%s.debug", build_id_hex(id, len, hex, sizeof(hex)));
}

/* The copy of build-id id, opened if it is one: its fd, or -1. */
static int open_copy(const char *name, const unsigned char *id, size_t len)
{
	int cfd = openat(cache_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	if (cfd >= 0 && (fstat(cfd, &st) < 0 || !S_ISREG(st.st_mode) ||
			 (uint64_t)st.st_size > tfile_max_size(TF_DEBUG) || !same_id(cfd, id, len))) {
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
	char *path = len > 0 && len <= ID_MAX ? copy_name(id, (size_t)len) : NULL;

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
 * The copy is looked up by the module's build-id before memtap's search
 * (debugfind-dwfl.h).  The module's userdata is the pid whose root its
 * path is in (symbolize.c).
 */
int debug_cache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, fd;

	pthread_once(&dir_once, find_dir);
	len = cache_dir && !debugfind_dwfl_is_alt(mod, debuglink_file) ?
	      dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	if (len > 0 && len <= ID_MAX) {
		char *name = copy_name(bits, (size_t)len);
		int cfd = open_copy(name, bits, (size_t)len);

		if (cfd >= 0) {
			*debuginfo_file_name = xasprintf("%s/%s", cache_dir, name);
			debug_msg("%s: debug information from %s", modname, *debuginfo_file_name);
			__atomic_add_fetch(&n_used, 1, __ATOMIC_RELAXED);
			free(name);
			return cfd;
		}
		free(name);
	}
	(void)base;
	fd = debugfind_dwfl(mod, (pid_t)(intptr_t)*userdata, file_name, debuglink_file,
			    debuglink_crc, debuginfo_file_name);
	if (fd >= 0 && len > 0)
		write_for_later(fd);
	return fd;
}

void debug_cache_counts(unsigned *written, unsigned *used)
{
	*written = __atomic_load_n(&n_written, __ATOMIC_RELAXED);
	*used = __atomic_load_n(&n_used, __ATOMIC_RELAXED);
}

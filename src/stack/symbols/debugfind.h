/*
 * debugfind.h - memtap's own search for a module's separate debug file
 * (and a DWARF file's dwz alternate file), every candidate opened with
 * tfile_open() (linux/tfile.h): no symbolic link followed, nothing but a
 * regular file within the debug file cap, never blocking.
 *
 * Candidates, in order, the target's paths under its root (pid's
 * /proc/PID/root; pid 0: memtap's own):
 *   - by build-id: /usr/lib/debug/.build-id/xx/rest.debug under the
 *     target's root, then under memtap's own;
 *   - by .gnu_debuglink name: the module's directory, its .debug/
 *     subdirectory, /usr/lib/debug/<the module's directory>/.
 * A candidate that is merely absent is skipped in silence; one refused
 * (FIFO, symbolic link, device, too large...) is warned about once,
 * naming it.  A candidate is used only if it is one of the module: the
 * same build-id when the module has one, else the CRC32 the debuglink
 * gives (a mismatch: one debug line under -v, and the next candidate).
 * No debuginfod server is ever asked.
 */
#ifndef MEMTAP_DEBUGFIND_H
#define MEMTAP_DEBUGFIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct debugfind_req {
	pid_t pid;			/* whose root path is in; 0: memtap's */
	const char *path;		/* the module's file, absolute */
	const unsigned char *build_id;	/* the module's build-id, or NULL */
	size_t build_id_len;
	const char *debuglink;		/* its .gnu_debuglink name, or NULL */
	uint32_t crc;			/* the debuglink's CRC32 */
};

/*
 * The debug file of q's module: an fd open for reading (tfile_open()'s),
 * and its path as the target sees it in *found (malloc'd), or -1.
 */
int debugfind_open(const struct debugfind_req *q, char **found);

/*
 * The alternate (dwz) file named by a debug file's .gnu_debugaltlink:
 * altname (absolute, or relative to the directory of debug_path) with
 * build-id id; by build-id first.  Used only with that build-id.  An fd,
 * its path in *found, or -1.
 */
int debugfind_open_alt(pid_t pid, const char *debug_path, const char *altname,
		       const unsigned char *id, size_t len, char **found);

/* The CRC32 of a .gnu_debuglink (zlib's) of fd's whole file; 0 on error. */
uint32_t debugfind_crc32(int fd, int *ok);

#endif /* MEMTAP_DEBUGFIND_H */

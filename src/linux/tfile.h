/*
 * tfile.h - the one way memtap opens a file on a target's behalf.
 *
 * memtap runs as root beside processes and users it does not trust.
 * Every file it opens for a target (the ELF files it maps, their debug
 * files, perf maps and jitdumps) can be planted or replaced by the
 * target's user, and those in /tmp by any local user: a FIFO whose
 * open() never returns, a symbolic link to a root-only file, a device,
 * a sparse file of many GiB, a file swapped between a check and the
 * open.  The tracer thread is the only one that can resume a stopped
 * target, so a blocked open freezes the traced service with it.
 *
 * tfile_open() therefore never opens anything but a regular file, and
 * never follows a symbolic link that the target's side could plant:
 *   - the path is looked up with O_PATH (which opens nothing: no FIFO
 *     waits, no device driver runs), without following a symbolic link
 *     anywhere in it: openat2() with RESOLVE_NO_SYMLINKS where the
 *     kernel has it (5.6), else one component at a time with
 *     O_NOFOLLOW and ".." refused;
 *   - a target's path is looked up under its /proc/PID/root, so that it
 *     cannot leave the target's root (RESOLVE_IN_ROOT, or the walk);
 *   - the inode found is checked on the descriptor, not the path: a
 *     regular file, within the size cap of its kind, not on a FUSE file
 *     system (whose reads its owner can make block forever), and for
 *     files found by name in a shared place (perf maps, jitdumps) owned
 *     by one of the target's uids, as perf requires (tfile_trust_owner
 *     lifts that rule only: --trust-files);
 *   - only then is that same inode opened for reading, through
 *     /proc/self/fd, with O_NONBLOCK.
 * A /proc magic link (/proc/PID/map_files/...) is the kernel's own and
 * is followed (TF_MAGIC); the inode it names is checked the same way.
 *
 * A refusal is one warning naming the file and why (once per path), and
 * the caller goes on without the file.  A file that simply is not there
 * is no warning.
 */
#ifndef MEMTAP_TFILE_H
#define MEMTAP_TFILE_H

#include <stdint.h>
#include <sys/types.h>

/* What the file is for: its name in warnings and its size cap. */
enum tfile_kind {
	TF_ELF,		/* a mapped ELF file (symbols, CFI, probes) */
	TF_DEBUG,	/* a separate debug file */
	TF_PERFMAP,	/* /tmp/perf-PID.map */
	TF_JITDUMP,	/* jit-PID.dump */
	TF_NKINDS
};

/* Flags of struct tfile_req. */
#define TF_IN_ROOT	0x1	/* path is the target's: looked up under /proc/PID/root */
#define TF_MAGIC	0x2	/* path is a /proc magic link: followed */
#define TF_OWNED	0x4	/* owned by one of the target's uids (unless trusted) */
#define TF_QUIET	0x8	/* refuse without a warning, uncounted (tests) */

struct tfile_req {
	pid_t pid;		/* the target: its root (TF_IN_ROOT) and uids (TF_OWNED) */
	const char *path;	/* absolute; shown in warnings as given, or .shown */
	const char *shown;	/* the name to warn with (NULL: path) */
	enum tfile_kind kind;
	unsigned flags;
};

/*
 * Open r's file for reading: a descriptor (O_RDONLY | O_CLOEXEC |
 * O_NONBLOCK) of a regular file that passed every check above, or -1
 * with errno set.  ENOENT, ENOTDIR, EACCES, ESRCH: not there (no
 * warning).  Anything refused: -1 with errno EPERM (owner), ELOOP
 * (a symbolic link), EFBIG (over the cap), EINVAL (not a regular file,
 * "..", a relative path), EXDEV (FUSE); the reason is then warned
 * about once for that path (unless TF_QUIET) and kept for
 * tfile_last_why().
 */
int tfile_open(const struct tfile_req *r);

/* Why the last tfile_open() refused its file, in words; "" if it did not. */
const char *tfile_last_why(void);

/* Files refused so far, each counted once per path (not TF_QUIET ones). */
unsigned long tfile_refused(void);

/* The size cap of a kind, in bytes. */
uint64_t tfile_max_size(enum tfile_kind kind);

/* The kind's name for messages ("perf map"). */
const char *tfile_kind_name(enum tfile_kind kind);

/* --trust-files: accept perf maps and jitdumps whoever owns them. */
void tfile_trust_owner(int yes);

/*
 * Tests: yes makes the next tfile_open()s use the component walk, as
 * if the kernel lacked openat2() (so does MEMTAP_DISABLE=openat2).
 */
void tfile_force_walk(int yes);

#endif /* MEMTAP_TFILE_H */

/*
 * push-spool.h - the spool directory of push.c: one file per profile,
 * named memtap-push-SEQ.prof (SEQ in 20 decimal digits), holding
 *
 *	memtap-push 1\n
 *	QUERY\n		(the request's "/ingest?..." path, printable ASCII)
 *	UNTIL\n		(the interval's end, Unix seconds)
 *	BODY		(the gzipped pprof, the rest of the file)
 *
 * Every function takes the directory's descriptor and works relative to
 * it; no name is followed as a symbolic link, and a file is read only if
 * it is a regular file of memtap's user within PUSH_SPOOL_FILE_MAX.
 */
#ifndef MEMTAP_PUSH_SPOOL_H
#define MEMTAP_PUSH_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define PUSH_SPOOL_FILE_MAX (80ULL << 20)

/* One spooled profile, as the scan finds it. */
struct spool_entry {
	uint64_t seq;
	int64_t until;
	char *query;		/* allocated */
	uint64_t size;		/* of the file */
};

/*
 * Create dir (0700, and its parents) unless it exists, open it and check
 * it: a directory owned by the effective user, not writable by group or
 * others, and not in use by another memtap (an exclusive flock() on it,
 * held until the descriptor is closed: two writers would reuse each
 * other's sequence numbers).  The descriptor, or -1 with a one-line
 * message in err.
 */
int spool_open(const char *dir, char *err, size_t errsize);

/*
 * The well-formed spool files in dfd, sorted by seq (*n of them,
 * allocated); stale temporary files are removed; *ignored counts the
 * other entries (not memtap's, malformed, not regular, links).
 */
struct spool_entry *spool_scan(int dfd, size_t *n, size_t *ignored);

/* Write one file atomically; its size, or -1 with errno. */
int64_t spool_write(int dfd, uint64_t seq, const char *query, int64_t until,
		    const void *body, size_t len);

/* Read seq's body (allocated, *len bytes); NULL with errno if unusable. */
void *spool_read(int dfd, uint64_t seq, size_t *len);

void spool_remove(int dfd, uint64_t seq);

#endif /* MEMTAP_PUSH_SPOOL_H */

/*
 * outfile.h - output files written safely (outfile.c).
 *
 * outfile_open() creates a new file beside PATH, with O_CREAT|O_EXCL, a
 * random name and mode 0644 less the umask; the output goes there, and
 * outfile_commit() renames it over PATH once complete.  So PATH is
 * never truncated before its new content is whole, an existing PATH
 * stays as it was when memtap fails, and a symbolic link at PATH (one
 * planted in /tmp, say) is replaced, never followed.  An unwritable
 * directory is found at outfile_open(), before anything is traced.
 *
 * Exceptions: a character device or FIFO at PATH (or behind a symbolic
 * link that memtap may trust: one owned by memtap's user or by the
 * owner of a directory that is not sticky) is written in place, as
 * /dev/null and /dev/stdout are.
 *
 * A temporary file not committed when the program exits is removed.
 */
#ifndef MEMTAP_OUTFILE_H
#define MEMTAP_OUTFILE_H

#include <stdio.h>

struct outfile;

/* A new output for path; NULL with errno set (nothing created). */
struct outfile *outfile_open(const char *path);
/* The stream to write to; owned by the outfile. */
FILE *outfile_stream(const struct outfile *of);
/*
 * Flush, close and rename the file over its path; frees of.  0, or -1
 * with errno set, and then the temporary file is removed and the path
 * left as it was.
 */
int outfile_commit(struct outfile *of);
/* Close and remove the temporary file, leave the path alone; frees of. */
void outfile_abort(struct outfile *of);
/*
 * One whole output: write(f, arg) to a new file for path, committed
 * when write returns 0 (path NULL or "-": standard output, flushed).
 * 0, or -1 after one error line naming path (write's errno, or the
 * open, write or rename that failed).
 */
int outfile_write(const char *path, int (*write)(FILE *f, const void *arg),
		  const void *arg);
/*
 * Whether outputs can be created beside path: creates and removes a
 * temporary file there.  0, or -1 with errno set.
 */
int outfile_check(const char *path);

#endif /* MEMTAP_OUTFILE_H */

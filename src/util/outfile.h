/*
 * outfile.h - output files written safely (outfile.c), and the run's
 * output failing (output_check()).
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
 *
 * The first call that fails on an outfile (the write(2) of its stream,
 * its close, the rename) is kept with its errno, and the messages name
 * it: "cannot write output file 'PATH': No space left on device".
 */
#ifndef MEMTAP_OUTFILE_H
#define MEMTAP_OUTFILE_H

#include <stdio.h>

struct outfile;

/* A new output for path; NULL with errno set (nothing created). */
struct outfile *outfile_open(const char *path);
/* The stream to write to; owned by the outfile. */
FILE *outfile_stream(const struct outfile *of);
/* The descriptor under f, an outfile's stream or another; -1 if none. */
int outfile_fileno(FILE *f);
/*
 * Flush, close and rename the file over its path; frees of.  0, or -1
 * with errno set (also when a write to its stream failed before, even
 * if later ones did not), and then the temporary file is removed and
 * the path left as it was.
 */
int outfile_commit(struct outfile *of);
/* Close and remove the temporary file, leave the path alone; frees of. */
void outfile_abort(struct outfile *of);
/*
 * One whole output: write(f, arg) to a new file for path, committed
 * when write returns 0 (path NULL or "-": standard output, flushed).
 * 0, or -1 after one error line naming path and the call that failed
 * (open, write, close, rename; write's own errno when it failed alone).
 */
int outfile_write(const char *path, int (*write)(FILE *f, const void *arg),
		  const void *arg);
/*
 * Whether outputs can be created beside path: creates and removes a
 * temporary file there.  0, or -1 with errno set.
 */
int outfile_check(const char *path);

/*
 * The output of a run failing: every output written while tracing, -o
 * (a report, -i's reports, --trace's lines; -i's numbered files),
 * --record's and --at-peak's files, and --trace's standard error.
 * Call output_check() after writing to f, the output (or --trace's
 * stderr); path names it, NULL for the output's own name
 * (output_set_path()).  When a write to f failed (EPIPE: the reader is
 * gone; ENOSPC, EIO...), it says so once, in one line naming the file
 * and the call that failed, and the output is gone: while tracing
 * (output_set_tracing(1)) the tracer polls output_gone() and ends the
 * session, detaching in attach mode (launch mode: the command runs on,
 * unrecorded), and memtap's exit status is then 1; otherwise memtap
 * exits 1 at once.  Returns 0, or -1 when the output is gone (what f
 * holds still is dropped).
 */
int output_check(FILE *f, const char *path);
/* The same for f known gone (err: EPIPE when its reader left). */
void output_fail(FILE *f, const char *path, int err);
/*
 * Commit an output file of the run (outfile_commit()), frees of: 0, or
 * -1 when its close or rename failed (the output failing) or when the
 * output is gone already: then the file is removed, its path left as
 * it was.
 */
int output_commit(struct outfile *of);
/*
 * One whole output file of the run, as outfile_write() (what names it
 * in messages: "recording file"): 0, or -1 when it failed (the output
 * failing; the path left as it was) or the output is gone already.
 */
int output_write(const char *path, const char *what, int (*write)(FILE *f, const void *arg),
		 const void *arg);
/* An output file of the run (what) could not be created: the output failing. */
void output_open_failed(const char *what, const char *path, int err);
/* The errno of the output's first failed write, or 0. */
int output_gone(void);
/* The -o path, named in messages about the output (NULL: stdout). */
void output_set_path(const char *path);
/* 1 while the tracer loop runs (a failure ends it), 0 after. */
void output_set_tracing(int on);

#endif /* MEMTAP_OUTFILE_H */

/*
 * output.c - a failed write to the output (EPIPE: the reader is gone;
 * ENOSPC...): said once, recording stops, and the loop ends tracing
 * (detaching in attach mode; a command runs on, unrecorded); memtap's
 * exit status is then 1.  Outside the loop memtap exits at once.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "trace/memtap.h"
#include "util/error.h"

static const char *output_path;	/* -o, or NULL for stdout */
static int in_loop;		/* the loop ends tracing after a failure */
static int output_err;		/* errno of the output's first failed write */

void output_init(const char *path)
{
	output_path = path;
}

void output_in_loop(int on)
{
	in_loop = on;
}

int output_gone(void)
{
	return output_err != 0;
}

void output_fail(FILE *f, const char *path, int err)
{
	if (output_err)
		return;
	output_err = err ? err : EIO;
	if (f)
		__fpurge(f);
	recording = 0;
	if (!path)
		path = f == stdout ? NULL : f == stderr ? "standard error" : output_path;
	error_msg("cannot write output%s%s: %s", path ? " to " : "", path ? path : "",
		  strerror(output_err));
	if (!in_loop)
		exit(EXIT_RUNTIME);
}

int output_check(FILE *f, const char *path)
{
	int err = errno;

	if (output_err) {
		__fpurge(f);	/* written since: it goes nowhere */
		return -1;
	}
	if (!ferror(f))
		return 0;
	output_fail(f, path, err);
	return -1;
}

int output_closed(const char *path, int err)
{
	output_fail(NULL, path, err);
	return -1;
}

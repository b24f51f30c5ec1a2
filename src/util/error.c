/*
 * error.c - stderr messages and the tracer-aware die path.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

const char *program_name = "memtap";
int verbose;
int quiet;
void (*die_hook)(void);

/* Format "memtap: <prefix><msg>[: strerror]\n" and write it at once. */
static void vmsg(const char *prefix, int err, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s: %s", program_name, prefix);

	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	int m = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (m > 0)
		n += m;
	if ((size_t)n >= sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (err)
		n += snprintf(buf + n, sizeof(buf) - n, ": %s", strerror(err));
	if ((size_t)n >= sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nothing left to report to */
	}
}

void error_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", 0, fmt, ap);
	va_end(ap);
}

void perror_msg(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg("", err, fmt, ap);
	va_end(ap);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", 0, fmt, ap);
	va_end(ap);
}

void info_msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg("", 0, fmt, ap);
	va_end(ap);
}

void debug_msg(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 2)
		return;
	va_start(ap, fmt);
	vmsg("debug: ", 0, fmt, ap);
	va_end(ap);
}

static void __attribute__((noreturn)) die(int code)
{
	void (*hook)(void) = die_hook;

	die_hook = NULL;
	if (hook)
		hook();
	exit(code);
}

void error_msg_and_die_code(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", 0, fmt, ap);
	va_end(ap);
	die(code);
}

void perror_msg_and_die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg("", err, fmt, ap);
	va_end(ap);
	die(EXIT_RUNTIME);
}

void usage_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	error_msg("%s (try '%s --help')", buf, program_name);
	exit(EXIT_USAGE);
}

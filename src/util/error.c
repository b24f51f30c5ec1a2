/*
 * error.c - stderr messages and the tracer-aware die path.
 *
 * When stderr is the journal (systemd's JOURNAL_STREAM names its device
 * and inode), each line of a message starts with its sd-daemon priority
 * ("<3>" error, "<4>" warning, "<6>" info, "<7>" -v and debug) instead
 * of "memtap: ", which the journal shows itself; the rest is the same.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/error.h"

const char *program_name = "memtap";
int verbose;
int quiet;
void (*die_hook)(void);

/* sd-daemon's priorities (syslog's), as the journal reads them. */
enum { PRI_ERR = 3, PRI_WARNING = 4, PRI_INFO = 6, PRI_DEBUG = 7 };

static int journal_known;

/* Is stderr the stream JOURNAL_STREAM ("DEV:INODE") names? */
static int journal_detect(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char *end;

	if (!env || *env < '0' || *env > '9')
		return 0;
	errno = 0;
	dev = strtoull(env, &end, 10);
	if (errno || *end != ':' || end[1] < '0' || end[1] > '9')
		return 0;
	ino = strtoull(end + 1, &end, 10);
	if (errno || *end)
		return 0;
	return fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/*
 * journal_detect(), once: 0 not known yet, 1 no, 2 yes.  Threads that
 * ask at once compute the same answer; no lock, so that a forked child
 * may say why it failed whatever another thread was doing.
 */
static int to_journal(void)
{
	int known = __atomic_load_n(&journal_known, __ATOMIC_RELAXED);

	if (!known) {
		int saved = errno;

		known = journal_detect() ? 2 : 1;
		errno = saved;
		__atomic_store_n(&journal_known, known, __ATOMIC_RELAXED);
	}
	return known == 2;
}

/* Write the n bytes of text, one or more lines, each with "<pri>" first. */
static void write_journal(int pri, const char *text, size_t n)
{
	char out[4 * 1024 + 8];
	size_t o = 0;

	for (size_t i = 0; i < n && o + 4 < sizeof(out); i++) {
		if (i == 0 || text[i - 1] == '\n') {
			out[o++] = '<';
			out[o++] = (char)('0' + pri);
			out[o++] = '>';
		}
		out[o++] = text[i];
	}
	if (o && out[o - 1] != '\n')
		out[o++] = '\n';
	if (write(STDERR_FILENO, out, o) < 0) {
		/* nothing left to report to */
	}
}

/*
 * Format "memtap: <prefix><msg>[: strerror]\n" and write it at once; to
 * the journal, every line with "<pri>" instead of the program's name.
 */
static void vmsg(int pri, const char *prefix, int err, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s: %s", program_name, prefix);
	size_t skip = strlen(program_name) + 2;

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
	if (to_journal() && (size_t)n >= skip) {
		write_journal(pri, buf + skip, n - skip);
		return;
	}
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nothing left to report to */
	}
}

void error_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(PRI_ERR, "", 0, fmt, ap);
	va_end(ap);
}

void perror_msg(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg(PRI_ERR, "", err, fmt, ap);
	va_end(ap);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(PRI_WARNING, "warning: ", 0, fmt, ap);
	va_end(ap);
}

void info_msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg(PRI_INFO, "", 0, fmt, ap);
	va_end(ap);
}

void verbose_msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet || !verbose)
		return;
	va_start(ap, fmt);
	vmsg(PRI_DEBUG, "", 0, fmt, ap);
	va_end(ap);
}

void debug_msg(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 2)
		return;
	va_start(ap, fmt);
	vmsg(PRI_DEBUG, "debug: ", 0, fmt, ap);
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
	vmsg(PRI_ERR, "", 0, fmt, ap);
	va_end(ap);
	die(code);
}

void perror_msg_and_die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg(PRI_ERR, "", err, fmt, ap);
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

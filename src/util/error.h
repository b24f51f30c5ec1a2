/*
 * error.h - messages on stderr, one write per message so that lines from
 * the tracer never interleave, in the strace error_prints.h style.
 *
 * Wording: lowercase, no trailing period, the failing call first, the
 * subject quoted where it helps; say how to fix it where we know.
 * Lower layers return errors; only the top level calls the *_and_die
 * variants, which detach from every tracee before exiting.
 *
 * Under systemd, when stderr is the journal (JOURNAL_STREAM gives its
 * "DEV:INODE"), every line of a message starts with its priority as
 * sd-daemon(3) has it instead of "memtap: ": "<3>" for error_msg() and
 * the *_and_die variants, "<4>" warn_msg(), "<6>" info_msg(), "<7>"
 * verbose_msg() and debug_msg().  Otherwise the format is unchanged.
 */
#ifndef MEMTAP_ERROR_H
#define MEMTAP_ERROR_H

#include <stdarg.h>

/* Exit codes, documented in memtap(1) EXIT STATUS. */
enum {
	EXIT_RUNTIME = 1,	/* a runtime failure (attach refused, ...) */
	EXIT_USAGE = 64,	/* bad command line (sysexits EX_USAGE) */
	EXIT_NOEXEC = 126,	/* the command exists but cannot be run */
	EXIT_NOTFOUND = 127,	/* the command was not found */
};

extern const char *program_name;
extern int verbose;		/* -v count */

void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void perror_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void debug_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void info_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A -v message: printed (as info_msg() would) with -v and without -q. */
void verbose_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print the message, clean up every tracee (see die()), exit with code. */
void error_msg_and_die_code(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
#define error_msg_and_die(...) error_msg_and_die_code(EXIT_RUNTIME, __VA_ARGS__)
void perror_msg_and_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* A usage error: message, a hint to --help, exit EXIT_USAGE. */
void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Set by -q: info_msg() prints nothing. */
extern int quiet;

/*
 * die_hook, when set, is called once by the *_and_die functions before
 * exit: the tracer uses it to put targets back as they were.
 */
extern void (*die_hook)(void);

#endif /* MEMTAP_ERROR_H */

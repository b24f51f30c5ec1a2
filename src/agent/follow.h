/*
 * follow.h - the processes memtap agent follows (follow.c): its
 * selectors, matched against /proc at every poll; each new match is
 * attached (trace/tracer.h's tracer_attach_soft()), each that went is
 * forgotten, so that a service restarted is followed again.
 *
 * What a selector matches (man memtap, RUNNING AS AN AGENT):
 *   pid=N     that process only (not a later one given the same number)
 *   comm=NAME /proc/PID/comm, whole (the kernel keeps 15 bytes)
 *   exe=PATH  /proc/PID/exe, the whole path
 *   cgroup=P  a cgroup path of /proc/PID/cgroup: P or below it
 * memtap itself, kernel threads and zombies never match.  A process that
 * matches several selectors is the first one's.
 */
#ifndef MEMTAP_FOLLOW_H
#define MEMTAP_FOLLOW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum sel_kind { SEL_PID, SEL_COMM, SEL_EXE, SEL_CGROUP };

struct selector {
	enum sel_kind kind;
	const char *value;	/* as given (a cgroup: without /sys/fs/cgroup) */
	pid_t pid;		/* SEL_PID */
	char *name;		/* "comm=redis-server": the target label */
	char *service;		/* the Pyroscope name by default: redis-server */
};

/*
 * Parse "--comm" etc.'s value into sel (kind given); -1 with a one-line
 * reason in err.
 */
int selector_parse(struct selector *sel, enum sel_kind kind, const char *value, char *err,
		   size_t size);

/* Once, before the first follow_scan(). */
void follow_init(const struct selector *sel, size_t nsel, unsigned max_targets, double poll);

/*
 * One pass: forget the processes that went, attach the new matches
 * (up to max_targets processes followed at once).  Says once per
 * selector that it matches nothing yet, once per process why it could
 * not be attached.
 */
void follow_scan(void);

/*
 * Forget the followed processes that exited or were let go since the
 * last call: until then follow_selector_of() still knows them, so that
 * the interval in which they went is theirs when it is pushed.  Call it
 * once an interval's profile is out.
 */
void follow_forget_ended(void);

/* How many processes are followed now. */
unsigned follow_count(void);

/*
 * The selector index a traced process belongs to: its own match, or
 * that of the followed process it was forked from (ppid chain through
 * parent()); -1 when none.  A process gone keeps its selector until
 * follow_forget_ended().
 */
int follow_selector_of(pid_t pid, pid_t (*parent)(pid_t pid));

#endif /* MEMTAP_FOLLOW_H */

/*
 * out-prom.h - the Prometheus text exposition format (version 0.0.4)
 * of what `memtap agent` serves at /metrics: a pure function of the
 * structs below, which the agent fills every interval.
 *
 * Families come in a fixed order, each with its HELP and TYPE lines
 * even when it has no series (memtap(1), RUNNING AS AN AGENT, Metrics,
 * lists them).  Label values are made safe whatever the strings hold
 * (a function name is the target's to choose): bytes that are not
 * UTF-8 and control characters become '?', a value longer than
 * PROM_LABEL_MAX bytes is cut at a character boundary and ends in
 * "...", then backslash, double quote and newline are escaped.
 * Integers are printed exactly, doubles with %.17g, NaN and infinities
 * as the format spells them.
 */
#ifndef MEMTAP_OUT_PROM_H
#define MEMTAP_OUT_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PROM_LABEL_MAX 128	/* bytes of a label value, before escaping */
/* The Content-Type of what prom_write() writes, for http_server_publish(). */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Bytes captured by event kind ("malloc", "mmap", "brk", ...). */
struct prom_kind_bytes {
	const char *event;
	uint64_t bytes;
};

struct prom_proc {
	const char *target;	/* the selector it matched, e.g. "comm=redis-server" */
	pid_t pid;
	const char *comm;
	uint64_t rss, vmsize;	/* bytes, /proc/PID/status */
	uint64_t held;		/* bytes held now as memtap sees them */
	size_t nkinds;
	const struct prom_kind_bytes *kinds;
};

struct prom_stack {
	const char *target;
	uint64_t id;		/* stable stack id (same across restarts): label stack_id as 16 hex digits */
	const char *frame;	/* the first frame outside the allocator */
	const char *event;	/* "malloc", "mmap", ... */
	uint64_t held;		/* bytes */
	double growth;		/* bytes per second over the last interval */
	double slope;		/* leak-suspect slope, bytes per second; NAN: none (series left out) */
};

struct prom_health {
	uint64_t records, lost, stops;
	double cpu_seconds;	/* memtap's own, user + system */
	uint64_t rss;		/* memtap's own */
	unsigned targets, max_targets;
	uint64_t stacks, stacks_folded;	/* stacks known; those folded into [other] */
	uint64_t pushed, push_failed, push_dropped, push_spooled;
	int push;		/* a push URL is set: emit the push series */
};

/*
 * Write the exposition of np processes, ns stacks and h (NULL: no
 * memtap_* health families) to f.  A NULL string is written as "".
 * Returns 0, or -1 with errno of the first write that failed (what was
 * written before stays in f).
 */
int prom_write(FILE *f, const struct prom_proc *p, size_t np, const struct prom_stack *s, size_t ns,
	       const struct prom_health *h);

/*
 * The label value of s as prom_write() writes it, between the quotes:
 * at most PROM_LABEL_MAX bytes of UTF-8 before escaping, so at most
 * PROM_LABEL_BUF bytes with the escapes and the NUL.  Returns buf.
 */
#define PROM_LABEL_BUF (2 * PROM_LABEL_MAX + 1)
char *prom_label_value(const char *s, char buf[PROM_LABEL_BUF]);

#endif /* MEMTAP_OUT_PROM_H */

/*
 * ring-code.h - which run-time code a ring's records ran, as far as the
 * process's perf map and jitdump tell it (ring-code.c).
 *
 * A JIT that rewrites code where code was says so in its files only (a
 * perf map's later line at the start of a range, a jitdump's CODE_LOAD
 * there or CODE_MOVE: jit_names_rewrites(), stack/runtimes/jitnames.h),
 * and without a stop at its mprotect (-e malloc alone) memtap learns
 * of the rewrite when it reads the file, while the records of the
 * in-target probes are read late.  The records' sequence numbers place
 * them against memtap's reads of the files:
 *
 *   - a record committed before a read that found no new rewrite ran
 *     the code of before it: the ring's records of a batch are
 *     committed before the read after the batch is counted (hi);
 *   - a record reserved after a read found the rewrite ran the code of
 *     after it: a JIT does not rewrite code that a frame still runs
 *     in, and a call's record is reserved at its return, so its call
 *     ended after the read.  After each read that finds a new count,
 *     HEAD is read: records from there on were reserved after it
 *     (a mark; RING_CODE_MARKS kept, a new one left for the next read
 *     when full: fewer records known, none misplaced).
 *
 * A record between the two, reserved before the read that found a
 * rewrite and committed after one that had not, may have run either
 * code: its event says so (EV_CODE_UNSURE, record/event.h) and the sink
 * names no run-time frame of it by either (sink.h).  Processes whose
 * files were never seen to rewrite code pay one fstat() a read (two a
 * batch).  main thread only.
 */
#ifndef MEMTAP_RING_CODE_H
#define MEMTAP_RING_CODE_H

#include <stdint.h>
#include <sys/types.h>

#define RING_CODE_MARKS 8

struct ring_code {
	struct {
		uint64_t seq;	/* records from this one on were reserved after */
		uint64_t rw;	/* a read that found this count */
	} mark[RING_CODE_MARKS];
	unsigned nmarks;
	uint64_t read;		/* the count the last read found */
	uint64_t hi;		/* the read after the batch was counted */
};

/*
 * Read pid's files now (the batch counted: after, 1); a new count is
 * marked with HEAD read at head_addr in pid's memory.
 */
void ring_code_read(struct ring_code *c, pid_t pid, uint64_t head_addr, int after);

/*
 * The code that record seq of the batch ran, for its event's code
 * field (record/event.h): EV_CODE_KNOWN | the count, or EV_CODE_UNSURE.
 * Records are asked for in order.
 */
uint64_t ring_code_of(struct ring_code *c, uint64_t seq);

#endif /* MEMTAP_RING_CODE_H */

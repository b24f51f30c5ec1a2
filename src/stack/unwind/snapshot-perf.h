/*
 * snapshot-perf.h - a struct stack_snapshot from a perf sample
 * (snapshot-perf.c), for the unwinders of unwind.h.
 */
#ifndef MEMTAP_SNAPSHOT_PERF_H
#define MEMTAP_SNAPSHOT_PERF_H

#include <sys/types.h>

struct stack_snapshot;
struct perf_sample;

/*
 * Fill s (initialized as for stack_snapshot_take(), its buffer reused)
 * from sample ps of a thread of process pid: registers and the stack
 * copy.  Returns 0, or -1 (errno ENODATA) when the sample has no user
 * registers: s then holds the sample's ip alone, and unwinders give
 * that one frame.
 */
int stack_snapshot_from_perf(struct stack_snapshot *s, pid_t pid,
			     const struct perf_sample *ps);

#endif /* MEMTAP_SNAPSHOT_PERF_H */

/*
 * faults-int.h - what the page-fault source's files share (faults.c:
 * the events and their rings; faults-credit.c: crediting each thread's
 * counted faults to the stacks of its samples).  Not for other files.
 */
#ifndef MEMTAP_FAULTS_INT_H
#define MEMTAP_FAULTS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "linux/perf.h"
#include "record/event.h"
#include "record/sink.h"

struct thread;

/* One stack of a kind's samples, for spreading the uncredited faults. */
struct fault_stack {
	uint32_t stack;
	uint64_t samples;
	uint64_t units;		/* bytes / UNIT of those samples */
};

#define UNIT 4096u

/* The events of one kind on one thread. */
struct fault_kind {
	struct fault_thread *ft;
	enum event_kind kind;
	struct perf_thread pt;
	uint64_t credited;	/* faults credited: samples + spread */
	uint64_t said_samples, said_lost, said_throttles;	/* told the sink */
	uint64_t lost_seen;	/* lost samples credited to a stack */
	struct fault_stack *stacks;	/* open addressing on the stack id */
	size_t size, used;
	uint64_t samples;	/* in stacks */
	int full_seen;		/* a drain found the ring full */
	uint32_t last_stack;	/* of the last sample recorded */
	uint64_t last_page;	/* its page size */
};

struct fault_thread {
	struct thread *tcp;
	int nkinds;
	struct fault_kind k[PERF_FAULTS_NKINDS];
	int interrupted;	/* PTRACE_INTERRUPT sent: hold its stop */
	int held;		/* kept stopped until faults_round_end() */
	uint64_t trip_stops;	/* --exact: tripwire stops */
	int trip_told;		/* --exact: said that it blocks the tripwire's signal */
	struct fault_thread *next, **prevp;
};

/*
 * The slot of stack in fk's table of sample stacks (added with no
 * samples when new); the table grows as needed.
 */
struct fault_stack *fault_stack_slot(struct fault_kind *fk, uint32_t stack);

/*
 * Put faults (bytes) whose samples were lost on the stack of fk's last
 * sample, counted as put there by neighbour for the report.
 */
void fault_neighbour_weight(struct sink_proc *sp, const struct fault_kind *fk, uint64_t faults,
			    uint64_t bytes);

/*
 * Credit fk's counted faults not yet credited (count), lost: samples
 * lost after the last one read; final: the thread is gone; period: the
 * sampling period (--fault-period).  See faults-credit.c.
 */
void fault_spread(struct fault_kind *fk, struct sink_proc *sp, uint64_t count, uint64_t lost,
		  int final, uint64_t period);

#endif /* MEMTAP_FAULTS_INT_H */

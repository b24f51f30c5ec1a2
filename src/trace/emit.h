/*
 * emit.h - how a source hands an event to the sink (emit.c).
 */
#ifndef MEMTAP_EMIT_H
#define MEMTAP_EMIT_H

#include "trace/memtap.h"

struct stack_snapshot;

/* ev zeroed, with tcp's pid, tid and comm, and the time since the start. */
void source_event_init(struct event *ev, const struct thread *tcp);

/*
 * ev happened at this stop of tcp (still stopped); regs are the
 * registers to unwind from: the thread's, or for a function's return
 * the caller's pc and sp (NULL: no stack).  When the sink records it
 * and stacks are on, the top of the stack is copied now; the sink
 * unwinds after the thread runs again.
 */
void source_emit(struct thread *tcp, const struct event *ev, const arch_regs_t *regs);

/*
 * The same for a source that has its own copy of the stack (a perf
 * sample, a record of an in-target probe), taken when ev happened:
 * snap (NULL: none) is handed to the sink, which leaves another buffer
 * in its place (see sink_emit()).  tcp need not be stopped.
 */
void source_emit_snapshot(struct thread *tcp, const struct event *ev,
			  struct stack_snapshot *snap);

/*
 * The same for a record read from the target's memory with no thread at
 * hand (the in-target rings): ev's pid, tid and comm filled by the caller.
 */
void source_emit_proc(struct proc *p, const struct event *ev, struct stack_snapshot *snap);

#endif /* MEMTAP_EMIT_H */

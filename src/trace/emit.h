/*
 * emit.h - how a source hands an event to the sink (emit.c).
 */
#ifndef MEMTAP_EMIT_H
#define MEMTAP_EMIT_H

#include "trace/memtap.h"

/* ev zeroed, with tcp's pid, tid and comm, and the time since the start. */
void source_event_init(struct event *ev, const struct thread *tcp);

/*
 * ev happened at this stop of tcp (still stopped); regs are the
 * registers to unwind from: the thread's, or for a function's return
 * the caller's pc and sp.  The sink counts it and copies what it needs
 * of the stack now; it unwinds after the thread runs again.
 */
void source_emit(struct thread *tcp, struct event *ev, const arch_regs_t *regs);

#endif /* MEMTAP_EMIT_H */

/*
 * emit.c - the one way from a source to the sink: every source fills a
 * struct event begun by source_event_init() and hands it over with
 * source_emit(), at the stop where it happened.
 */
#include "config.h"

#include <string.h>

#include "trace/emit.h"

void source_event_init(struct event *ev, const struct thread *tcp)
{
	memset(ev, 0, sizeof(*ev));
	ev->pid = tcp->proc->pid;
	ev->tid = tcp->tid;
	ev->comm = tcp->comm;
	ev->time_ns = now_ns() - start_ns;
}

void source_emit(struct thread *tcp, struct event *ev, const arch_regs_t *regs)
{
	event_emit(tcp, ev, regs);
}

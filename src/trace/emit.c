/*
 * emit.c - the one way from a source to the sink (record/sink.h): every
 * source fills a struct event begun by source_event_init() and hands it
 * over with source_emit(), at the stop where it happened.  When the
 * sink records it and stacks are on, the top of the thread's stack is
 * copied then, with one read (and one more when the walk will need
 * more: sink_stack_extend()), and the return addresses memtap's
 * breakpoints replaced are put back in the copy; the sink unwinds it
 * after the thread runs again.
 */
#include "config.h"

#include <string.h>

#include "stack/unwind/unwind.h"
#include "trace/emit.h"
#include "trace/source.h"

void source_event_init(struct event *ev, const struct thread *tcp)
{
	memset(ev, 0, sizeof(*ev));
	ev->pid = tcp->proc->pid;
	ev->tid = tcp->tid;
	ev->comm = tcp->comm;
	/* the stop's time (when waitpid() gave it), not the moment it is served */
	ev->time_ns = (tcp->stop_ns >= start_ns ? tcp->stop_ns : now_ns()) - start_ns;
}

void source_emit_snapshot(struct thread *tcp, const struct event *ev,
			  struct stack_snapshot *snap)
{
	sink_emit(tcp->proc->rec, ev, snap);
}

void source_emit_proc(struct proc *p, const struct event *ev, struct stack_snapshot *snap)
{
	sink_emit(p->rec, ev, snap);
}

void source_emit(struct thread *tcp, const struct event *ev, const arch_regs_t *regs)
{
	static struct stack_snapshot snap;	/* a buffer the sink swaps */
	struct sink_proc *sp = tcp->proc->rec;
	struct stack_snapshot *s = NULL;

	if (regs && sink_stacks_wanted() && sink_wants(sp, ev) == SINK_RECORD &&
	    stack_snapshot_take(&snap, sp->pid, tcp->tid, regs, sink_stack_size()) == 0) {
		/* a copy too short for the walk grows, the thread still stopped */
		sink_stack_extend(sp, &snap);
		/* return addresses replaced by memtap's trampoline: the real ones */
		sources_fix_stack(tcp, &snap);
		s = &snap;
	}
	source_emit_snapshot(tcp, ev, s);
}

/*
 * emit.c - an event of a stopped thread to the sink (record/sink.h):
 * when the sink records it and stacks are on, the top of the thread's
 * stack is copied now, with one process_vm_readv, and the return
 * addresses memtap's breakpoints replaced are put back in the copy;
 * the sink unwinds it after the thread runs again.
 */
#include "config.h"

#include "probe/breakpoint.h"
#include "stack/unwind.h"
#include "trace/alloc.h"
#include "trace/memtap.h"

void source_emit(struct thread *tcp, const struct event *ev, const arch_regs_t *regs)
{
	static struct stack_snapshot snap;	/* a buffer the sink swaps */
	struct sink_proc *sp = tcp->proc->rec;
	struct stack_snapshot *s = NULL;

	if (regs && sink_stacks_wanted() && sink_wants(sp, ev) == SINK_RECORD &&
	    stack_snapshot_take(&snap, sp->pid, tcp->tid, regs, sink_stack_size()) == 0) {
		struct bp_set *bps = alloc_bp_set(tcp->proc);

		/* return addresses replaced by memtap's trampoline: the real ones */
		if (bps)
			bp_fix_stack(bps, snap.start, snap.data, snap.len);
		s = &snap;
	}
	sink_emit(sp, ev, s);
}

/*
 * snapshot-perf.c - a stack snapshot from a perf sample: the user
 * registers the kernel saved at the fault (in perf's order, the arch's)
 * and its copy of the user stack from the stack pointer upward, so that
 * every unwinder walks it as one taken at a ptrace stop.
 *
 * The thread has run on since the sample: reads beyond the copy (code,
 * unwind tables) go to the process as for any snapshot, and a frame
 * deeper than the copy is read from the stack as it is now.  The copy
 * should cover the deepest stacks wanted (perf_fault_config.stack_bytes).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "linux/perf.h"
#include "stack/unwind/snapshot-perf.h"
#include "stack/unwind/unwind.h"
#include "util/xmalloc.h"

int stack_snapshot_from_perf(struct stack_snapshot *s, pid_t pid,
			     const struct perf_sample *ps)
{
	arch_regs_t *r = &s->regs;
	const uint64_t *v = ps->regs;

	s->pid = pid;
	s->tid = ps->tid;
	s->len = 0;
	s->asked = 0;	/* the sample's copy is all there is */
	s->cut = 0;
	s->go_len = 0;
	s->go_g0 = 0;
	memset(r, 0, sizeof(*r));
	if (!ps->have_regs) {
		/* ip alone: the unwinders give one frame */
		arch_set_pc(r, ps->ip);
		s->start = 0;
		errno = ENODATA;
		return -1;
	}
	arch_regs_from_perf(r, v);
	s->start = arch_sp(r);
	if (!ps->stack_len)
		return 0;
	if (s->cap < ps->stack_len) {
		free(s->data);
		s->data = xmalloc(ps->stack_len);
		s->cap = ps->stack_len;
	}
	memcpy(s->data, ps->stack, ps->stack_len);
	s->len = ps->stack_len;
	return 0;
}

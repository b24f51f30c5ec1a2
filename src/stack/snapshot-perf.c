/*
 * snapshot-perf.c - a stack snapshot from a perf sample: the user
 * registers the kernel saved at the fault (perf's PERF_REG_X86_* order)
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
#include "stack/snapshot-perf.h"
#include "stack/unwind.h"
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
		r->rip = ps->ip;
		s->start = 0;
		errno = ENODATA;
		return -1;
	}
	r->rax = v[PERF_REG_AX];
	r->rbx = v[PERF_REG_BX];
	r->rcx = v[PERF_REG_CX];
	r->rdx = v[PERF_REG_DX];
	r->rsi = v[PERF_REG_SI];
	r->rdi = v[PERF_REG_DI];
	r->rbp = v[PERF_REG_BP];
	r->rsp = v[PERF_REG_SP];
	r->rip = v[PERF_REG_IP];
	r->eflags = v[PERF_REG_FLAGS];
	r->cs = v[PERF_REG_CS];
	r->ss = v[PERF_REG_SS];
	r->r8 = v[PERF_REG_R8];
	r->r9 = v[PERF_REG_R9];
	r->r10 = v[PERF_REG_R10];
	r->r11 = v[PERF_REG_R11];
	r->r12 = v[PERF_REG_R12];
	r->r13 = v[PERF_REG_R13];
	r->r14 = v[PERF_REG_R14];
	r->r15 = v[PERF_REG_R15];
	r->orig_rax = (unsigned long long)-1;
	s->start = r->rsp;
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

/*
 * gostack.c - Go stacks across the runtime's stack switches (unwind.h,
 * goruntime.h).
 *
 * At the stop: the running g where the CPU keeps it (arch/go.h); if it is its m's
 * g0 and the m runs a goroutine (m.curg), that goroutine's sched (the
 * pc, sp and bp its switch saved) and the top of its stack are copied
 * into the snapshot, while the thread is stopped: unwinding comes
 * after it runs again, when the goroutine may be running and its stack
 * changed, so that no frame of it is read then (a walk that needs more
 * than the copy ends cut).  For a Go program's stops only: none on a goroutine's stack
 * (once the thread's g0 is known), four on g0.
 *
 * At the walk: a frame of g0 that returns into a switch function
 * (runtime.systemstack, mcall, morestack, asmcgocall: the return
 * address of their call on g0, goruntime.h) is followed by the
 * goroutine's frame, and the walk goes on from there with the
 * ordinary rules (morestack's: the function at its entry, then its
 * caller, whose frame it has not made).  systemstack and asmcgocall save
 * runtime.systemstack_switch as the goroutine's pc, its sp theirs:
 * the frame is their caller's, at the return address the CPU says
 * (arch_go_switch_caller()).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "linux/memio.h"
#include "stack/runtimes/goruntime.h"
#include "stack/modules.h"
#include "stack/unwind/unwind.h"
#include "util/xmalloc.h"

/* A goroutine's stack is 1 GiB at most (runtime.maxstacksize). */
#define GO_STACK_MAX (1ULL << 30)
/* m.g0 and m.curg read at once when this close. */
#define M_SPAN 512

static int rd(const struct stack_snapshot *s, uint64_t addr, void *buf, size_t len)
{
	return memio_read_all(s->pid, s->tid, addr, buf, len) == 0 ? 0 : -1;
}

/* read(ctx, ...) of arch/go.h, ctx the snapshot: from the stopped thread. */
static int rd_thread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return rd(ctx, addr, buf, len);
}

/* The same, from the snapshot (stack_snapshot_read()). */
static int rd_snapshot(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return stack_snapshot_read(ctx, addr, buf, len);
}

/* The goroutine's stack as copied at the stop: len bytes at data from start. */
struct go_copy {
	const unsigned char *data;
	uint64_t start;
	size_t len;
};

static int rd_copy(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct go_copy *c = ctx;

	if (addr < c->start || addr - c->start > c->len || len > c->len - (addr - c->start))
		return -1;
	memcpy(buf, c->data + (addr - c->start), len);
	return 0;
}

static uint64_t word(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* The running g's m's g0 and curg, read from m: 0, or -1. */
static int m_fields(const struct stack_snapshot *s, const struct go_runtime *rt, uint64_t m,
		    uint64_t *g0, uint64_t *curg)
{
	unsigned char b[M_SPAN + 8];
	uint32_t m_g0 = rt->off.m_g0, m_curg = rt->off.m_curg;
	uint32_t lo = m_g0 < m_curg ? m_g0 : m_curg;
	uint32_t hi = m_g0 < m_curg ? m_curg : m_g0;

	if (hi - lo > M_SPAN)
		return rd(s, m + m_g0, g0, 8) < 0 || rd(s, m + m_curg, curg, 8) < 0 ? -1 : 0;
	if (rd(s, m + lo, b, hi - lo + 8) < 0)
		return -1;
	*g0 = word(b, m_g0 - lo);
	*curg = word(b, m_curg - lo);
	return 0;
}

/*
 * The g0, its stack and the m of the threads seen last, by thread and
 * thread pointer (a tid used again by another thread has another): an
 * m is a thread's for its life, and its g0 the m's, so that a stop
 * outside g0's stack costs no read at all.  A thread whose m
 * changes (a C thread's callbacks into Go, cgo's extra m's) may be
 * taken for one on a goroutine's stack: its stack ends at the switch.
 */
#define SEEN 64

static struct seen {
	pid_t pid, tid;
	uint64_t tp, g0, m, lo, hi;
} seen[SEEN];

void go_snapshot_take(struct stack_snapshot *s, const struct proc_modules *pm,
		      size_t max_bytes)
{
	const struct go_runtime *rt = pm->go;
	unsigned char cg[4096 + 56];
	uint64_t g, m, g0, curg, lo, hi, sp, pc, bp, st[2], tp = arch_tp(&s->regs);
	struct arch_go_sched sched;
	struct go_copy copy;
	struct seen *e = &seen[(unsigned)s->tid % SEEN];
	size_t max, off;
	ssize_t n;

	s->go_len = 0;
	s->go_g0 = 0;
	if (!rt || s->borrowed || !max_bytes || rt->off.g_sched > sizeof(cg) - 56)
		return;
	if (e->pid == s->pid && e->tid == s->tid && e->tp == tp) {
		sp = arch_sp(&s->regs);
		if (sp < e->lo || sp >= e->hi)
			return;	/* not on g0's stack */
		if (arch_go_running_g(&s->regs, &rt->off, rd_thread, s, &g) < 0 || g != e->g0)
			return;
		m = e->m;
	} else if (arch_go_running_g(&s->regs, &rt->off, rd_thread, s, &g) < 0 || !g || (g & 7) ||
		   rd(s, g + rt->off.g_m, &m, 8) < 0 || !m || (m & 7)) {
		return;
	}
	if (m_fields(s, rt, m, &g0, &curg) < 0)
		return;
	if (e->g0 != g0 || e->pid != s->pid || e->tid != s->tid || e->tp != tp) {
		/* a thread not seen: its g0's stack */
		e->pid = 0;
		if (g0 && !(g0 & 7) && rd(s, g0 + GO_G_STACK_LO, st, sizeof(st)) == 0 &&
		    st[0] < st[1]) {
			e->pid = s->pid;
			e->tid = s->tid;
			e->tp = tp;
			e->g0 = g0;
			e->m = m;
			e->lo = st[0];
			e->hi = st[1];
		}
	}
	/* on a goroutine's own stack, or the signal stack: no switch to follow */
	if (g0 != g)
		return;
	s->go_g0 = 1;
	if (!curg || curg == g || (curg & 7))
		return;
	if (rd(s, curg, cg, rt->off.g_sched + 56) < 0)
		return;
	lo = word(cg, GO_G_STACK_LO);
	hi = word(cg, GO_G_STACK_HI);
	sched.sp = sp = word(cg, rt->off.g_sched + GO_GOBUF_SP);
	sched.pc = word(cg, rt->off.g_sched + GO_GOBUF_PC);
	sched.bp = word(cg, rt->off.g_sched + GO_GOBUF_BP);
	sched.lr = word(cg, rt->off.g_sched + GO_GOBUF_LR);
	if (lo >= hi || hi - lo > GO_STACK_MAX || sp < lo || sp >= hi || (sp & 7) || !sched.pc)
		return;
	/* the whole stack when it fits: no frame of it is read later */
	max = hi - sp < max_bytes ? hi - sp : max_bytes;
	off = (s->len + 7) & ~(size_t)7;
	if (s->cap < off + max) {
		s->data = xrealloc(s->data, off + max);
		s->cap = off + max;
	}
	n = memio_read(s->pid, s->tid, sp, s->data + off, max);
	if (n < 8)
		return;
	pc = sched.pc;
	bp = sched.bp;
	if (pc - pm->go_bias >= rt->sw_pc.start && pc - pm->go_bias <= rt->sw_pc.end) {
		/* systemstack_switch: the frame is the caller's */
		copy.data = s->data + off;
		copy.start = sched.sp;
		copy.len = (size_t)n;
		if (arch_go_switch_caller(&sched, rd_copy, &copy, &pc, &sp, &bp) < 0 || !pc)
			return;
	}
	s->go_start = sched.sp;
	s->go_off = off;
	s->go_len = (size_t)n;
	s->go_hi = hi;
	s->go_pc = pc;
	s->go_sp = sp;
	s->go_bp = bp;
	s->go_lr = sched.lr;
}

int unwind_go_step_frame(const struct proc_modules *pm, const struct stack_snapshot *s,
			 arch_regs_t *regs)
{
	const struct go_runtime *rt = pm ? pm->go : NULL;
	struct arch_go_sched sched;
	uint64_t rel, ra, sp = arch_sp(regs);

	/* on the goroutine's stack already */
	if (!rt || (s->go_len && sp >= s->go_start && sp < s->go_hi))
		return 0;
	rel = arch_pc(regs) - pm->go_bias;
	for (int i = 0; i < GO_NSWITCH; i++) {
		if (!rt->sw_ret[i] || rel != rt->sw_ret[i])
			continue;
		if (!s->go_len)
			return -1;	/* g0's bottom, and no goroutine to go on into */
		arch_set_pc(regs, s->go_pc);
		arch_set_sp(regs, s->go_sp);
		arch_set_fp(regs, s->go_bp);
		/*
		 * morestack: called from the prologue of the function that needs
		 * the stack, before it made its frame: the frame pointer its
		 * caller's.  The caller's frame, whatever the unwind tables (a
		 * stripped program has none).
		 */
		sched.sp = s->go_sp;
		sched.pc = s->go_pc;
		sched.bp = s->go_bp;
		sched.lr = s->go_lr;
		if (i == GO_SW_MORESTACK &&
		    arch_go_morestack_caller(&sched, rd_snapshot, (void *)s, &ra, &sp) == 0 && ra) {
			arch_set_pc(regs, ra);
			arch_set_sp(regs, sp);
			return 2;
		}
		return 1;
	}
	return 0;
}

/*
 * gostack-test - Go's stack switches followed (src/stack/runtimes/gostack.c) on
 * a runtime made in this process: a TLS word, a g0, its m, a goroutine
 * and its stack, read as memtap reads a stopped Go thread's.
 *
 * The goroutine's frame is taken at the "stop" (later changes of its
 * stack are not seen), with its sched's lr, and the walk's step: from a frame returning into
 * systemstack (the pc systemstack_switch popped), into morestack (two
 * frames), none elsewhere nor on the goroutine's stack; the end of the
 * walk at the switch on g0 without a goroutine; no goroutine for a
 * thread without a thread pointer.  Then every
 * link broken (a NULL, odd, unmapped or wrong g, m or curg, a sched or
 * stack out of bounds): no goroutine taken; and 20000 runs over random
 * words: copies within the goroutine's stack and the buffer, no read
 * outside them (run under the sanitizers).  Prints "ok" and exits 0, or says what is
 * wrong and exits 1.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stack/runtimes/goruntime.h"
#include "stack/modules.h"
#include "stack/unwind/unwind.h"

static int bad;

#define CHECK(c, ...) do { if (!(c)) { printf(__VA_ARGS__); printf("\n"); bad = 1; } } while (0)

#define SS_RET 0x401000u	/* return address of systemstack's call on g0 */
#define MS_RET 0x402000u	/* morestack's */
#define SWITCH 0x403000u	/* systemstack_switch */
#define UNMAPPED 0x1000u

static uint64_t tls[2], g0[32], m[32], cg[32], g0stack[64], gstack[512];
static struct go_runtime rt = {
	.off = { .tls_g = -8, .g_m = 48, .g_sched = 56, .m_g0 = 0, .m_curg = 192 },
	.sw_ret = { [GO_SW_SYSTEMSTACK] = SS_RET, [GO_SW_MORESTACK] = MS_RET },
	.sw_pc = { SWITCH, SWITCH + 8 },
};

#define U(p) ((uint64_t)(uintptr_t)(p))

/* A goroutine that called systemstack: its caller's return address at sched.sp. */
static void build(void)
{
	memset(g0, 0, sizeof(g0));
	memset(m, 0, sizeof(m));
	memset(cg, 0, sizeof(cg));
	tls[0] = U(g0);
	g0[GO_G_STACK_LO / 8] = U(g0stack);
	g0[GO_G_STACK_HI / 8] = U(g0stack + 64);
	g0[rt.off.g_m / 8] = U(m);
	m[rt.off.m_g0 / 8] = U(g0);
	m[rt.off.m_curg / 8] = U(cg);
	cg[GO_G_STACK_LO / 8] = U(gstack);
	cg[GO_G_STACK_HI / 8] = U(gstack + 512);
	cg[(rt.off.g_sched + GO_GOBUF_SP) / 8] = U(&gstack[100]);
	cg[(rt.off.g_sched + GO_GOBUF_PC) / 8] = SWITCH;
	cg[(rt.off.g_sched + GO_GOBUF_BP) / 8] = U(&gstack[120]);
	cg[(rt.off.g_sched + GO_GOBUF_LR) / 8] = 0x406000u;
	for (int i = 0; i < 512; i++)
		gstack[i] = 0x500000u + (uint64_t)i;
}

/*
 * A thread of its own for each take unless same: memtap keeps a
 * thread's g0, m and g0's stack.  Its thread pointer &tls[1] (g in TLS,
 * as x86-64's runtime keeps it), or none.
 */
static void take_tp(struct stack_snapshot *s, struct proc_modules *pm, int same, int tp)
{
	static pid_t tid = 1 << 22;
	arch_regs_t regs;

	memset(&regs, 0, sizeof(regs));
	arch_set_sp(&regs, U(g0stack));
	arch_set_pc(&regs, 0x404000u);
	regs.fs_base = tp ? U(&tls[1]) : 0;
	if (!same)
		tid++;
	if (stack_snapshot_take(s, getpid(), tid, &regs, 4096) < 0)
		CHECK(0, "no snapshot");
	go_snapshot_take(s, pm, s->asked);
}

static void take_as(struct stack_snapshot *s, struct proc_modules *pm, int same)
{
	take_tp(s, pm, same, 1);
}

static void take(struct stack_snapshot *s, struct proc_modules *pm)
{
	take_as(s, pm, 0);
}

/* The step from a g0 frame returning at ra; its result. */
static int step(struct proc_modules *pm, struct stack_snapshot *s, uint64_t ra, uint64_t sp,
		arch_regs_t *r)
{
	*r = s->regs;
	arch_set_pc(r, ra);
	arch_set_sp(r, sp);
	arch_set_fp(r, 0);
	return unwind_go_step(pm, s, r);
}

/* One link broken: no goroutine taken. */
static void broken(struct proc_modules *pm, uint64_t *word, uint64_t v, const char *what)
{
	struct stack_snapshot s = STACK_SNAPSHOT_INIT;
	uint64_t keep;

	build();
	keep = *word;
	*word = v;
	take(&s, pm);
	CHECK(s.go_len == 0, "%s = %#llx: a goroutine taken", what, (unsigned long long)v);
	*word = keep;
	stack_snapshot_release(&s);
}

int main(void)
{
	struct proc_modules *pm = proc_modules_new(getpid());
	struct stack_snapshot s = STACK_SNAPSHOT_INIT;
	arch_regs_t r;
	uint64_t w;
	int k;

	pm->go = &rt;
	build();
	take(&s, pm);
	CHECK(s.go_len > 0, "no goroutine taken");
	CHECK(s.go_pc == gstack[100] && s.go_sp == U(&gstack[101]) && s.go_bp == U(&gstack[120]),
	      "goroutine frame %#llx %#llx %#llx", (unsigned long long)s.go_pc,
	      (unsigned long long)s.go_sp, (unsigned long long)s.go_bp);
	CHECK(s.go_lr == 0x406000u, "the goroutine's sched.lr: %#llx", (unsigned long long)s.go_lr);
	/* the copy is the stop's */
	gstack[110] = 1;
	CHECK(stack_snapshot_read(&s, U(&gstack[110]), &w, 8) == 0 && w == 0x500000u + 110,
	      "goroutine's stack read after the stop: %#llx", (unsigned long long)w);
	k = step(pm, &s, SS_RET, U(&g0stack[8]), &r);
	CHECK(k == 1 && arch_pc(&r) == s.go_pc && arch_sp(&r) == s.go_sp && arch_fp(&r) == s.go_bp,
	      "systemstack step: %d", k);
	CHECK(step(pm, &s, SS_RET + 1, U(&g0stack[8]), &r) == 0, "a step elsewhere");
	CHECK(step(pm, &s, SS_RET, U(&gstack[300]), &r) == 0, "a step on the goroutine's stack");
	k = step(pm, &s, MS_RET, U(&g0stack[8]), &r);
	CHECK(k == 2 && arch_pc(&r) == 0x500000u + 101 && arch_sp(&r) == U(&gstack[102]) &&
	      arch_fp(&r) == s.go_bp, "morestack step: %d %#llx", k,
	      (unsigned long long)arch_pc(&r));
	stack_snapshot_release(&s);

	/* a sched.pc that is no systemstack_switch: the frame as saved */
	build();
	cg[(rt.off.g_sched + GO_GOBUF_PC) / 8] = 0x405000u;
	take(&s, pm);
	CHECK(s.go_len > 0 && s.go_pc == 0x405000u && s.go_sp == U(&gstack[100]), "mcall's frame");
	stack_snapshot_release(&s);

	/* the same thread again: its m kept, g.m not read */
	build();
	take(&s, pm);
	g0[rt.off.g_m / 8] = UNMAPPED;
	take_as(&s, pm, 1);
	CHECK(s.go_len > 0, "the same thread: no goroutine taken");
	/* and on its goroutine's stack, g its goroutine */
	tls[0] = U(cg);
	take_as(&s, pm, 1);
	CHECK(!s.go_g0 && !s.go_len, "the same thread on a goroutine: %d %zu", s.go_g0, s.go_len);
	stack_snapshot_release(&s);

	/* on g0 without a goroutine: the walk ends at the switch */
	build();
	m[rt.off.m_curg / 8] = 0;
	take(&s, pm);
	CHECK(s.go_g0 && !s.go_len, "no goroutine: %d %zu", s.go_g0, s.go_len);
	CHECK(step(pm, &s, SS_RET, U(&g0stack[8]), &r) == -1, "no goroutine: the walk goes on");
	CHECK(step(pm, &s, SS_RET + 1, U(&g0stack[8]), &r) == 0, "no goroutine: a step elsewhere");
	stack_snapshot_release(&s);
	/* no thread pointer: nothing, and nothing kept of the thread */
	build();
	take_tp(&s, pm, 0, 0);
	CHECK(!s.go_g0 && !s.go_len, "no thread pointer: %d %zu", s.go_g0, s.go_len);
	take_tp(&s, pm, 1, 0);
	CHECK(!s.go_g0 && !s.go_len, "no thread pointer again: %d %zu", s.go_g0, s.go_len);
	stack_snapshot_release(&s);
	/* on a goroutine's stack: nothing */
	build();
	m[rt.off.m_g0 / 8] = U(cg);
	take(&s, pm);
	CHECK(!s.go_g0 && !s.go_len, "on a goroutine: %d %zu", s.go_g0, s.go_len);
	CHECK(step(pm, &s, SS_RET, U(&g0stack[8]), &r) == 0, "on a goroutine: a step");
	stack_snapshot_release(&s);

	broken(pm, &tls[0], 0, "g");
	broken(pm, &tls[0], U(g0) + 4, "g");
	broken(pm, &tls[0], UNMAPPED, "g");
	broken(pm, &g0[rt.off.g_m / 8], 0, "g.m");
	broken(pm, &g0[rt.off.g_m / 8], UNMAPPED, "g.m");
	broken(pm, &m[rt.off.m_g0 / 8], U(cg), "m.g0");
	broken(pm, &m[rt.off.m_curg / 8], 0, "m.curg");
	broken(pm, &m[rt.off.m_curg / 8], U(g0), "m.curg");
	broken(pm, &m[rt.off.m_curg / 8], U(cg) + 1, "m.curg");
	broken(pm, &m[rt.off.m_curg / 8], UNMAPPED, "m.curg");
	broken(pm, &cg[GO_G_STACK_LO / 8], U(gstack + 512), "stack.lo");
	broken(pm, &cg[GO_G_STACK_LO / 8], 0, "stack.lo");
	broken(pm, &cg[GO_G_STACK_HI / 8], U(&gstack[100]), "stack.hi");
	broken(pm, &cg[(rt.off.g_sched + GO_GOBUF_SP) / 8], U(&gstack[100]) + 4, "sched.sp");
	broken(pm, &cg[(rt.off.g_sched + GO_GOBUF_SP) / 8], U(gstack) - 8, "sched.sp");
	broken(pm, &cg[(rt.off.g_sched + GO_GOBUF_PC) / 8], 0, "sched.pc");
	broken(pm, &gstack[100], 0, "the caller's return address");

	/* random words, some of them the structures' addresses */
	srand(7);
	for (int it = 0; it < 20000; it++) {
		uint64_t ptrs[] = { U(g0), U(m), U(cg), U(gstack), U(gstack + 512),
				    U(&gstack[100]), SWITCH, 0, UNMAPPED };
		uint64_t *words[] = { &tls[0], g0, m, cg };
		size_t nwords[] = { 1, 32, 32, 32 };

		build();
		for (int j = 0; j < 8; j++) {
			int a = rand() % 4;
			uint64_t v = rand() % 2 ? ptrs[rand() % 9] + (uint64_t)(rand() % 3) * 8 :
						  ((uint64_t)rand() << 32) ^ (uint64_t)rand();

			words[a][(size_t)rand() % nwords[a]] = v;
		}
		take(&s, pm);
		if (s.go_len) {
			CHECK(s.go_start + s.go_len <= s.go_hi && s.go_len <= s.asked &&
			      s.go_off >= s.len && s.go_off + s.go_len <= s.cap,
			      "run %d: a copy out of its stack", it);
			(void)step(pm, &s, SS_RET, U(&g0stack[8]), &r);
			(void)step(pm, &s, MS_RET, U(&g0stack[8]), &r);
		}
		stack_snapshot_release(&s);
	}
	proc_modules_free(pm);
	if (!bad)
		printf("ok\n");
	return bad;
}

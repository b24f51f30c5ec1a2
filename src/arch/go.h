/*
 * go.h - the CPU's part of a Go program's runtime
 * (src/arch/$(arch)/go.c), for stack/runtimes/goruntime.c and stack/runtimes/gostack.c:
 * the offsets of the runtime's fields that lead from the running g to
 * the goroutine its g0 runs for, as runtime.systemstack's own code
 * reads them; where the switch functions call on g0; where a stopped
 * thread's running g is; and the frame a goroutine's switch to g0 left
 * (the return address into its caller, and the caller's sp).
 *
 * The runtime's assembly is its CPU's (asm_amd64.s, asm_arm64.s): amd64
 * keeps g in TLS, at the thread pointer + runtime.tls_g, and a call
 * pushes the return address; arm64 keeps g in a register (R28) and a
 * call leaves the return address in the link register, which a
 * function's prologue stores at 0(sp) of its frame and
 * runtime.morestack, called before that, saves in the gobuf's lr.
 * The layout of g and gobuf that every CPU shares (g.stack, gobuf's
 * sp, pc, lr and bp) is stack/runtimes/goruntime.h's.
 *
 * A read(ctx, addr, buf, len) callback reads the traced process's
 * memory (or a copy of it): 0, or < 0 when the bytes are not read.
 */
#ifndef MEMTAP_ARCH_GO_H
#define MEMTAP_ARCH_GO_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

typedef int arch_go_read_fn(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * The offsets runtime.systemstack's code reads, which change between Go
 * versions: g.m, m.g0, m.curg and g.sched; and tls_g, where the
 * running g is in TLS from the thread pointer, on a CPU whose
 * arch_go_running_g() reads it there (0 on one that keeps g in a
 * register).
 */
struct arch_go_offsets {
	int64_t tls_g;
	uint32_t g_m;		/* g.m */
	uint32_t g_sched;	/* g.sched, a gobuf */
	uint32_t m_g0;		/* m.g0 */
	uint32_t m_curg;	/* m.curg */
};

/*
 * The offsets from the code of runtime.systemstack (code[0, len), as
 * in the program's file), into *off: 0, or -1 when the code is not
 * understood (*off then undefined).  The offsets are only those the
 * code says; their plausibility against g's fixed fields is the
 * caller's.
 */
int arch_go_decode_systemstack(const uint8_t *code, size_t len, struct arch_go_offsets *off);

/*
 * The return address of the call a switch function (runtime.systemstack,
 * mcall, morestack, asmcgocall; code[0, len) at file address start)
 * makes on g0, once it has switched its sp there: a frame of g0 that
 * returns there is the bottom of the g0 stack.  Its file address, or 0
 * when the code has none.
 */
uint64_t arch_go_switch_return(const uint8_t *code, size_t len, uint64_t start);

/*
 * The running g of a thread of a Go program stopped with registers r,
 * the runtime's offsets off, its memory read with read(ctx, ...): 0
 * with *g, or -1 when it has none to say (no TLS set up yet, a read
 * that fails).  *g may be anything the thread holds: the caller checks
 * it.
 */
int arch_go_running_g(const arch_regs_t *r, const struct arch_go_offsets *off,
		      arch_go_read_fn *read, void *ctx, uint64_t *g);

/* A goroutine's registers as its switch to g0 saved them (its g.sched). */
struct arch_go_sched {
	uint64_t sp, pc, bp, lr;
};

/*
 * The caller of the goroutine's frame that runtime.systemstack or
 * asmcgocall saved (sched.pc in runtime.systemstack_switch, sched.sp
 * theirs): the return address into their caller, *ra, the caller's
 * sp, *sp, and its frame pointer, *fp (sched.bp where they keep their
 * caller's, as amd64's frameless ones; arm64's made a frame of their
 * own), the goroutine's stack read with read(ctx, ...).  0, or -1
 * when the stack is not read there.
 */
int arch_go_switch_caller(const struct arch_go_sched *sched, arch_go_read_fn *read, void *ctx,
			  uint64_t *ra, uint64_t *sp, uint64_t *fp);

/*
 * The same for the frame runtime.morestack saved: called from the
 * prologue of the function that needs a larger stack (sched.pc in it,
 * sched.sp its sp at its entry), before that function made its frame;
 * *ra the return address into that function's caller, *sp the caller's
 * sp.  0, or -1.
 */
int arch_go_morestack_caller(const struct arch_go_sched *sched, arch_go_read_fn *read,
			     void *ctx, uint64_t *ra, uint64_t *sp);

#endif /* MEMTAP_ARCH_GO_H */

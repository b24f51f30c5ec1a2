/*
 * tramp.c (aarch64) - the code and block of the trampoline that puts a
 * thread back by itself after a syscall memtap injected (arch.h;
 * probe/remote-tramp.c places it and says what it is for).  The `svc #0`
 * memtap looks for in a process is syscalls.c's.
 *
 * The invariant: when the code after the injected syscall runs (memtap
 * died before the syscall's exit stop), the thread goes on at the
 * block's pc with the block's x0-x30, sp and pstate (NZCV, and BTYPE
 * and SSBS with them), its own FP/SIMD registers and FPSR/FPCR, and the
 * block's signal mask, as if it had never left.
 *
 * Why rt_sigreturn.  x86-64's trampoline ends with `jmp [rip + block]`,
 * a jump through memory that needs no register.  A64 has none: every
 * jump to an address beyond B's 128 MiB goes through a register (BR,
 * RET), and no register is free at an arbitrary stop.  x16 and x17 are
 * the linker's scratch registers only between a call and its callee's
 * entry: a thread stopped inside a PLT stub, between its `ldr x17` and
 * its `br x17`, or at a signal-delivery stop anywhere, has live values
 * in them.  The kernel, though, loads every register at once on its way
 * back to user mode, and rt_sigreturn makes it load them from memory:
 * x0-x30, sp, pc and pstate from a signal frame's sigcontext, the
 * FP/SIMD registers from its FPSIMD record, and the signal mask from
 * uc_sigmask, which makes x86-64's rt_sigprocmask unneeded.  So the code
 * builds such a frame below the thread's sp and calls rt_sigreturn.
 * The frame, as arch/arm64/kernel/signal.c reads it (Linux 3.7 to 6.x):
 *
 *   sp must be 16-aligned, and the whole struct rt_sigframe (4688
 *   bytes; 4704 before 4.13, which kept fp and lr after it) below
 *   TASK_SIZE: the frame starts 4704 bytes below sp rounded down to 16,
 *   so it ends below the thread's sp, as a signal's frame would.
 *   uc_sigmask (frame + 168): the block's mask.
 *   uc_mcontext.regs, sp, pc, pstate (frame + 312 ... 584): the block's
 *   34 words, which are in that order; a pstate that is not a valid
 *   user one makes the kernel refuse the frame (SIGSEGV), and the
 *   block's comes from the thread.
 *   uc_mcontext.__reserved (frame + 592): the FPSIMD record (magic
 *   0x46508001, size 528, FPSR, FPCR, v0-v31), which the kernel
 *   requires, first (kernels before 4.13 look for it only there), then
 *   the terminating record {0, 0}.  The code stores the thread's own
 *   v0-v31, FPSR and FPCR into it before any instruction of its own
 *   touches them (the injected syscall does not), so they come back as
 *   they are.  No SVE, ZA or other record: the kernel then leaves the
 *   rest of the thread's state as it is.
 *   uc_stack (frame + 144): ss_flags 3 (SS_ONSTACK | SS_DISABLE), which
 *   no kernel accepts: restore_altstack() ignores every error but
 *   EFAULT, so the thread's sigaltstack stays as it is.
 *
 * The rest of the frame (siginfo, fault_address) is not read.  The
 * kernel also makes sure that rt_sigreturn itself is never restarted
 * and returns the restored x0.
 *
 * The code, at at, ARCH_TRAMP_SIZE bytes (words[] below):
 *
 *   svc #0                          the injected syscall
 *   x9 = (sp & ~15) - 4704; sp = x9
 *   copy the block's 34 words to frame + 312, its mask to frame + 168
 *   uc_stack.ss_flags = 3
 *   the FPSIMD record and the terminator, at frame + 592
 *   x8 = rt_sigreturn; svc #0
 *
 * then BRK #0 up to the block, at ARCH_TRAMP_BLOCK_OFF.  Its one
 * pc-relative instruction is the ADR of the block, so the code is the
 * same at every address (4-aligned).  The sp is moved before anything
 * is written below it.  What the code changes and nothing restores:
 * the 4704 bytes below the thread's sp (the stack a signal would use;
 * a thread with less stack left dies of SIGSEGV there, as it would of a
 * signal), the exclusive monitor (as every exception does), and the
 * restart of a syscall the thread was about to make with x8 =
 * restart_syscall: rt_sigreturn makes that return EINTR.  Left as they
 * are because nothing here touches them: TPIDR_EL0, TPIDR2_EL0, the
 * sigaltstack, POR_EL0.  What the injected syscall itself loses (SVE's
 * bits above v0-v31's 128, its predicates, streaming mode) is lost with
 * or without the trampoline.  A thread with arm64's guarded control
 * stack on (Linux 6.13) cannot use it: its rt_sigreturn wants a token
 * on that stack, as x86-64's CET shadow stacks would.
 *
 * The block: x0-x30, sp, pc, pstate, the signal mask.  No restart to
 * work out: arm64's do_signal() rewinds a syscall to restart (pc back to
 * its svc, x0 its first argument again) before the signal-delivery or
 * interrupt stop a tracer sees, so the registers of such a stop already
 * are the restart's.  One difference with the kernel's own: a
 * restart_syscall (ERESTART_RESTARTBLOCK: nanosleep, a futex wait with
 * a timeout) gets x8 = restart_syscall only after that stop, if no
 * handler runs; the registers of the stop, and so the block, rerun the
 * interrupted syscall from its start, as memtap's own restore of them
 * does (probe/remote.c).
 */
#include "config.h"

#include <string.h>

#include "arch/arch.h"
#include "insn.h"

/* block: x0-x30, sp, pc, pstate (sigcontext's order), mask */
enum { B_X0, B_SP = 31, B_PC, B_PSTATE, B_MASK, B_NWORDS };

_Static_assert(B_NWORDS == ARCH_TRAMP_BLOCK_WORDS, "the block's words");
_Static_assert(ARCH_TRAMP_BLOCK_OFF + B_NWORDS * 8 == ARCH_TRAMP_SIZE, "the block fits");
_Static_assert(ARCH_TRAMP_BLOCK_OFF % 8 == 0, "the block's words are aligned with at's");

#define W_ADR 6		/* words[W_ADR]: adr x10, block */

static const uint32_t words[] = {
	0xd4000001,	/* svc #0 */
	0x910003e9,	/* mov x9, sp */
	0x927ced29,	/* and x9, x9, #~15 */
	0xd1400529,	/* sub x9, x9, #1, lsl #12 */
	0xd1098129,	/* sub x9, x9, #608: 4704 in all */
	0x9100013f,	/* mov sp, x9 */
	0x1000000a,	/* adr x10, block (its offset filled in) */
	0x9104e3eb,	/* add x11, sp, #312: uc_mcontext.regs */
	0xd280022e,	/* mov x14, #17 */
	0xa8c1354c,	/* 1: ldp x12, x13, [x10], #16 */
	0xa881356c,	/* stp x12, x13, [x11], #16 */
	0xf10005ce,	/* subs x14, x14, #1 */
	0x54ffffa1,	/* b.ne 1b */
	0xf940014c,	/* ldr x12, [x10]: the mask */
	0xf90057ec,	/* str x12, [sp, #168]: uc_sigmask */
	0x5280006c,	/* mov w12, #3 */
	0xb9009bec,	/* str w12, [sp, #152]: uc_stack.ss_flags */
	0x910943eb,	/* add x11, sp, #592: uc_mcontext.__reserved */
	0xd290002c,	/* mov x12, #0x8001 */
	0xf2a8ca0c,	/* movk x12, #0x4650, lsl #16: FPSIMD_MAGIC */
	0xf2c0420c,	/* movk x12, #0x210, lsl #32: its size, 528 */
	0xf900016c,	/* str x12, [x11] */
	0xd53b442c,	/* mrs x12, fpsr */
	0xd53b440d,	/* mrs x13, fpcr */
	0x2901356c,	/* stp w12, w13, [x11, #8] */
	0xad008560,	/* stp q0, q1, [x11, #16] */
	0xad018d62,	/* stp q2, q3, [x11, #48] */
	0xad029564,	/* stp q4, q5, [x11, #80] */
	0xad039d66,	/* stp q6, q7, [x11, #112] */
	0xad04a568,	/* stp q8, q9, [x11, #144] */
	0xad05ad6a,	/* stp q10, q11, [x11, #176] */
	0xad06b56c,	/* stp q12, q13, [x11, #208] */
	0xad07bd6e,	/* stp q14, q15, [x11, #240] */
	0xad08c570,	/* stp q16, q17, [x11, #272] */
	0xad09cd72,	/* stp q18, q19, [x11, #304] */
	0xad0ad574,	/* stp q20, q21, [x11, #336] */
	0xad0bdd76,	/* stp q22, q23, [x11, #368] */
	0xad0ce578,	/* stp q24, q25, [x11, #400] */
	0xad0ded7a,	/* stp q26, q27, [x11, #432] */
	0xad0ef57c,	/* stp q28, q29, [x11, #464] */
	0xad0ffd7e,	/* stp q30, q31, [x11, #496] */
	0xf901097f,	/* str xzr, [x11, #528]: the terminator */
	0xd2801168,	/* mov x8, #139: rt_sigreturn */
	0xd4000001,	/* svc #0 */
};

_Static_assert(sizeof(words) <= ARCH_TRAMP_BLOCK_OFF, "the code fits before the block");

size_t arch_tramp_code(uint8_t *code, uint64_t at)
{
	uint32_t off = ARCH_TRAMP_BLOCK_OFF - W_ADR * A64_INSN_LEN;

	if (at % A64_INSN_LEN)
		return 0;
	for (size_t k = 0; k < ARCH_TRAMP_SIZE; k += A64_INSN_LEN)
		a64_put(code + k, A64_BRK0);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		a64_put(code + i * A64_INSN_LEN, words[i]);
	/* ADR: immlo in bits 29-30, immhi in bits 5-23 */
	a64_put(code + W_ADR * A64_INSN_LEN,
		words[W_ADR] | (off & 3) << 29 | (off >> 2 & 0x7ffff) << 5);
	return ARCH_TRAMP_SIZE;
}

void arch_tramp_block(uint64_t block[ARCH_TRAMP_BLOCK_WORDS], const arch_regs_t *r,
		      uint64_t mask)
{
	memcpy(block + B_X0, r->r.regs, sizeof(r->r.regs));
	block[B_SP] = r->r.sp;
	block[B_PC] = r->r.pc;
	block[B_PSTATE] = r->r.pstate;
	block[B_MASK] = mask;
}

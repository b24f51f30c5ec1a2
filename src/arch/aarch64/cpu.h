/*
 * cpu.h (aarch64) - registers, syscall numbers and the ABI of arm64
 * Linux (included through arch/arch.h).
 *
 * One ABI: a 64-bit process makes syscalls with `svc #0`, the number in
 * x8, the arguments in x0-x5, the result in x0 (AArch32 tasks are not
 * traced: a memtap binary traces its own CPU's processes).  The kernel
 * gives a tracer the registers only through PTRACE_GETREGSET and
 * PTRACE_SETREGSET: NT_PRSTATUS (x0-x30, sp, pc, pstate), NT_ARM_TLS
 * (TPIDR_EL0) and NT_ARM_SYSTEM_CALL (the number of the syscall the
 * thread is in, which a write of x8 does not change).  arch_regs_t
 * holds all three, so that above this folder the thread pointer and the
 * syscall number are registers as on x86-64.
 *
 * Not in this folder yet: the in-target stubs (detour-stubs.S in A64),
 * their frame (arch_stub_frame()) and Go's runtime; memtap's aarch64
 * build takes the stub arch's for them (README.md).
 */
#ifndef MEMTAP_ARCH_CPU_H
#define MEMTAP_ARCH_CPU_H

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <linux/audit.h>

#include "arch/stop.h"

#define ARCH_NAME "aarch64"
/* The smallest page a kernel may use; 16K and 64K kernels exist. */
#define ARCH_PAGE_SIZE 4096UL
/*
 * Length of `svc #0` (0xd4000001, 4-byte aligned); the pc of a syscall
 * stop and seccomp_data's instruction_pointer are the address after it.
 */
#define ARCH_SYSCALL_INSN_LEN 4
#define ARCH_SVC0 0xd4000001u

/*
 * NT_PRSTATUS of an arm64 thread: the kernel's struct user_pt_regs
 * (<asm/ptrace.h>), spelled out here so that this folder compiles on
 * any host, as its unit tests do (tests/unit/a64-*); checked against
 * the kernel's header where memtap is built for arm64.
 */
struct a64_pt_regs {
	uint64_t regs[31];	/* x0-x30 */
	uint64_t sp;
	uint64_t pc;
	uint64_t pstate;
};

#ifdef __aarch64__
#include <asm/ptrace.h>
_Static_assert(sizeof(struct a64_pt_regs) == sizeof(struct user_pt_regs),
	       "struct a64_pt_regs is NT_PRSTATUS");
#endif

/*
 * A thread's registers: the general ones (NT_PRSTATUS), the thread
 * pointer (NT_ARM_TLS) and the syscall number (NT_ARM_SYSTEM_CALL: -1
 * at a stop in no syscall, and where set, no syscall run).  The thread
 * pointer is read when first asked (arch_tp()), from tp_tid, the
 * thread arch_regs_get() read: 0 once read, and in registers made
 * otherwise (zeroed, from perf or a record), whose tp is as set.
 */
typedef struct {
	struct a64_pt_regs r;
	uint64_t tp;
	int64_t nr;
	pid_t tp_tid;
} arch_regs_t;

enum abi {
	ABI_AARCH64,
	ABI_COUNT
};

/* The audit architecture seccomp_data.arch carries for memtap's own ABI. */
#define ARCH_AUDIT_NATIVE AUDIT_ARCH_AARCH64

static inline int arch_abi_bits(enum abi abi) { (void)abi; return 64; }

static inline uint64_t arch_pc(const arch_regs_t *r) { return r->r.pc; }
static inline uint64_t arch_sp(const arch_regs_t *r) { return r->r.sp; }

static inline int arch_regset_get(pid_t tid, int type, void *buf, size_t len);

/*
 * The thread pointer (TPIDR_EL0): 0 until the loader or libc sets up
 * TLS.  Of registers arch_regs_get() read, asked of the thread at the
 * first call (one PTRACE_GETREGSET, NT_ARM_TLS; 0 if it fails: the
 * thread is no longer stopped), then kept in r: so r must be one that
 * may be written (none is defined const), and the thread still at the
 * stop it was read at, or at a later one (its TLS is its own for its
 * life).
 */
static inline uint64_t arch_tp(const arch_regs_t *r)
{
	if (__builtin_expect(r->tp_tid != 0, 0)) {
		arch_regs_t *w = (arch_regs_t *)r;

		if (arch_regset_get(r->tp_tid, NT_ARM_TLS, &w->tp, sizeof(w->tp)))
			w->tp = 0;
		w->tp_tid = 0;
	}
	return r->tp;
}

/*
 * arm64's TLS is variant I: tp points to the TCB at the start of the
 * static TLS, which glibc and musl put at the top of a thread's stack
 * block, so the stack ends at or below tp as on x86-64 (the TCB's few
 * words between it and tp are not stack); a thread whose tp is not
 * above its sp in the mapping has its stack elsewhere.
 */
static inline uint64_t arch_stack_top_from_tp(uint64_t tp) { return tp; }

static inline int arch_regset_get(pid_t tid, int type, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)type, &iov) < 0)
		return -errno;
	return iov.iov_len == len ? 0 : -EIO;
}

static inline int arch_regset_set(pid_t tid, int type, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return ptrace(PTRACE_SETREGSET, tid, (void *)(long)type, &iov) < 0 ? -errno : 0;
}

/*
 * A ptrace-stopped thread's registers: 0 or -errno.  Two requests: the
 * general registers and the syscall number, which at a seccomp or
 * syscall-entry stop is the one the kernel will run and at an exit stop
 * the one it ran (what PTRACE_GET_SYSCALL_INFO says, at every kind of
 * stop; x8 where the kernel lacks NT_ARM_SYSTEM_CALL, < 3.19).  The
 * number is read now, not when asked, as arch_regs_set() writes it
 * back: registers saved at a stop and set back after a syscall of
 * memtap's (which set it to -1) bring back the stop's, and a restart
 * with it.  TPIDR_EL0 is read when asked (arch_tp()): most stops never
 * ask.
 */
/*
 * Pointer authentication: the bits of an instruction address that hold
 * a signature (NT_ARM_PAC_MASK's insn_mask, the same for every process
 * of the kernel; 0 where the CPU or the kernel has none), asked once,
 * at the first registers read (regs.c).  A return address that PACIASP
 * signed, in x30 or stored in a frame, is the address with them
 * cleared: arch_ra_strip().
 */
extern uint64_t arch_pac_insn_mask;
extern int arch_pac_asked;
void arch_pac_ask(pid_t tid);

static inline uint64_t arch_ra_strip(uint64_t ra) { return ra & ~arch_pac_insn_mask; }

static inline int arch_regs_get(pid_t tid, arch_regs_t *r)
{
	int nr, err;

	err = arch_regset_get(tid, NT_PRSTATUS, &r->r, sizeof(r->r));
	if (err)
		return err;
	if (__builtin_expect(!arch_pac_asked, 0))
		arch_pac_ask(tid);
	r->tp = 0;
	r->tp_tid = tid;
	if (arch_regset_get(tid, NT_ARM_SYSTEM_CALL, &nr, sizeof(nr)) == 0)
		r->nr = nr;
	else
		r->nr = (int64_t)r->r.regs[8];
	return 0;
}

/*
 * Write a ptrace-stopped thread's registers back: 0 or -errno.  The
 * general registers, then the syscall number (at a seccomp or entry
 * stop, -1 skips the syscall: arch_set_syscall_nr()); the thread pointer
 * is not written.  At a PTRACE_SYSCALL stop the kernel ignores a change
 * of x7 (it holds the stop's direction there).
 */
static inline int arch_regs_set(pid_t tid, const arch_regs_t *r)
{
	int nr = (int)r->nr;
	int err;

	err = arch_regset_set(tid, NT_PRSTATUS, &r->r, sizeof(r->r));
	if (err)
		return err;
	return arch_regset_set(tid, NT_ARM_SYSTEM_CALL, &nr, sizeof(nr));
}

/* The syscall the thread is in (NT_ARM_SYSTEM_CALL), -1 for none. */
static inline long arch_syscall_nr(const arch_regs_t *r) { return (long)r->nr; }

/*
 * The syscall the kernel runs when r is written back at a seccomp or
 * syscall-entry stop: -1 runs none, and the thread sees x0 as it is then
 * (its first argument, unless x0 is set too; Linux 6.1).
 */
static inline void arch_set_syscall_nr(arch_regs_t *r, long nr) { r->nr = nr; }

/*
 * Argument i (0..5) of the syscall in progress: x0-x5.  x0 is the
 * result once the syscall ran: at an exit stop argument 0 is gone (the
 * kernel keeps it as orig_x0 and gives it to no tracer but through
 * PTRACE_GET_SYSCALL_INFO at entry).
 */
static inline uint64_t arch_syscall_arg(const arch_regs_t *r, enum abi abi, int i)
{
	(void)abi;
	return r->r.regs[i];
}

static inline int64_t arch_syscall_ret(const arch_regs_t *r, enum abi abi)
{
	(void)abi;
	return (int64_t)r->r.regs[0];
}

/*
 * Is the thread, stopped at a stop of kind (arch.h), at a syscall's
 * entry (1) or at its exit (0)?  -1 where its registers cannot say.  At
 * a PTRACE_SYSCALL stop the kernel puts the direction in x7 for the
 * tracer: 0 at entry, 1 at exit.  A seccomp stop is always an entry,
 * and there x7 is the thread's own, as at every other stop, where this
 * says -1.  trace/syscalls.c asks at PTRACE_SYSCALL stops, where
 * PTRACE_GET_SYSCALL_INFO is missing (Linux < 5.3).
 */
static inline int arch_at_syscall_entry(const arch_regs_t *r, enum arch_stop kind)
{
	switch (kind) {
	case ARCH_STOP_SYSCALL:
		return r->r.regs[7] == 0;
	case ARCH_STOP_SECCOMP:
		return 1;
	default:
		return -1;
	}
}

/* One ABI: every stop is of it (read and ctx are not used). */
static inline enum abi
arch_abi_of_stop(const arch_regs_t *r,
		 int (*read)(void *ctx, uint64_t addr, void *buf, size_t len), void *ctx)
{
	(void)r, (void)read, (void)ctx;
	return ABI_AARCH64;
}

static inline void arch_set_pc(arch_regs_t *r, uint64_t pc) { r->r.pc = pc; }
static inline void arch_set_sp(arch_regs_t *r, uint64_t sp) { r->r.sp = sp; }

/* Integer argument i (0..5; AAPCS64 has 0..7) of a function at its entry. */
static inline uint64_t arch_call_arg(const arch_regs_t *r, int i) { return r->r.regs[i]; }

/* A function's integer return value, right after it returned: x0. */
static inline uint64_t arch_call_ret(const arch_regs_t *r) { return r->r.regs[0]; }

/*
 * Reach: an unconditional B reaches +-128 MiB in one 4-byte word, the
 * patch memtap can write atomically; kept a page short of it.
 */
#define ARCH_NEAR_REACH 0x7fff000ULL

static inline int arch_in_reach(uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	return d > -(int64_t)ARCH_NEAR_REACH && d < (int64_t)ARCH_NEAR_REACH;
}

/* The frame pointer: x29, which a frame record chains ([x29] = caller's x29, [x29+8] = lr). */
static inline uint64_t arch_fp(const arch_regs_t *r) { return r->r.regs[29]; }
static inline void arch_set_fp(arch_regs_t *r, uint64_t fp) { r->r.regs[29] = fp; }
#define ARCH_SP_NAME "sp"
#define ARCH_FP_NAME "x29"

/*
 * The callee-saved registers of AAPCS64 the unwinders carry from frame
 * to frame, numbered 0..ARCH_NSAVED-1: x19-x28, then x29 (the frame
 * pointer).  The order of arch_dw_saved[] and arch_unw_saved[].
 */
enum {
	STUB_X19, STUB_X20, STUB_X21, STUB_X22, STUB_X23,
	STUB_X24, STUB_X25, STUB_X26, STUB_X27, STUB_X28,
	STUB_X29, ARCH_NSAVED
};
#define STUB_NSAVED ARCH_NSAVED

static inline uint64_t arch_saved_reg(const arch_regs_t *r, int i) { return r->r.regs[19 + i]; }
static inline void arch_set_saved_reg(arch_regs_t *r, int i, uint64_t v) { r->r.regs[19 + i] = v; }

/*
 * DWARF's register numbers (DWARF for the Arm 64-bit architecture):
 * x0-x30 are 0-30, sp 31; the return address column is x30 (lr).  A
 * walk's registers are 0..31, the pc given apart (as elfutils'
 * aarch64_initreg does).
 */
#define ARCH_DW_FP 29
#define ARCH_DW_SP 31
#define ARCH_DW_RA 30
#define ARCH_DW_NREGS 32

#define ARCH_ELF_MACHINE EM_AARCH64

/*
 * perf's user registers (PERF_SAMPLE_REGS_USER) in the kernel's order,
 * <asm/perf_regs.h>'s PERF_REG_ARM64_*: x0-x29, lr, sp, pc, every one
 * asked for.
 */
#define ARCH_PERF_LR 30
#define ARCH_PERF_SP 31
#define ARCH_PERF_PC 32
#define ARCH_PERF_NREGS 33
#define ARCH_PERF_REGS_MASK (((uint64_t)1 << ARCH_PERF_NREGS) - 1)

/* A ptrace-stopped thread goes on at pc: 0 or -errno (no PEEKUSER/POKEUSER on arm64). */
static inline int arch_thread_set_pc(pid_t tid, uint64_t pc)
{
	struct a64_pt_regs r;
	int err = arch_regset_get(tid, NT_PRSTATUS, &r, sizeof(r));

	if (err)
		return err;
	r.pc = pc;
	return arch_regset_set(tid, NT_PRSTATUS, &r, sizeof(r));
}

/* The ABI of memtap's own syscalls, which remote syscalls use. */
#define ARCH_ABI_NATIVE ABI_AARCH64

/* PSTATE.BTYPE, bits 11:10 of NT_PRSTATUS's pstate (the kernel's PSR_BTYPE_MASK). */
#define A64_PSTATE_BTYPE 0xc00ull

/*
 * r set up to run syscall nr with args from the `svc #0` at insn: pc =
 * insn, x8 = nr, x0-x5 the arguments, PSTATE.BTYPE 0; the other
 * registers as they were (the stop's own syscall number too:
 * arch_suppress_restart()).  BTYPE is the one of the branch that
 * reached the stop's pc (a BRK on a landing pad reached by BLR: 01);
 * kept, it would make the `svc #0` in a PROT_BTI page, which is no
 * landing pad, fault with a Branch Target exception (SIGILL).  The
 * registers of the stop, set back, bring it back.
 */
static inline void arch_setup_syscall(arch_regs_t *r, uint64_t insn, long nr,
				      const uint64_t args[6])
{
	r->r.pc = insn;
	r->r.pstate &= ~A64_PSTATE_BTYPE;
	r->r.regs[8] = (uint64_t)nr;
	for (int i = 0; i < 6; i++)
		r->r.regs[i] = args[i];
}

/*
 * Registers r made so that the kernel does not restart over them a
 * syscall that the stop interrupted: the syscall number -1, written by
 * arch_regs_set() through NT_ARM_SYSTEM_CALL.  Unlike x86-64, arm64's
 * do_signal() rewinds a restart (pc back to the svc, x0 its first
 * argument again) before the signal-delivery stop a tracer sees, so the
 * registers of such a stop already are the restart's, and a pc of
 * memtap's written over them is no restart (read in Linux 6.1's
 * arch/arm64/kernel/signal.c; not tested here).  The registers of the
 * stop set back bring the restart back.
 */
static inline void arch_suppress_restart(arch_regs_t *r) { r->nr = -1; }

/*
 * The trampoline (tramp.c): ARCH_TRAMP_SIZE bytes, its code first (44
 * words, ending in rt_sigreturn), and at ARCH_TRAMP_BLOCK_OFF a block of
 * ARCH_TRAMP_BLOCK_WORDS words that memtap writes before each syscall
 * run from it and the code reads: x0-x30, sp, pc, pstate, the mask.
 */
#define ARCH_TRAMP_SIZE 456
#define ARCH_TRAMP_BLOCK_OFF 176
#define ARCH_TRAMP_BLOCK_WORDS 35
/*
 * Its code puts the thread back with rt_sigreturn (139), which takes no
 * argument (x0-x5 then are what the injected syscall left).
 */
#define ARCH_TRAMP_RESTORE_NR 139
#define ARCH_TRAMP_RESTORE_ARGS { 0, 0, 0, 0, 0, 0 }

/*
 * Frame records (AAPCS64): x29 points at the pair x29, x30 its function
 * stored, the caller's fp at fp + ARCH_FRAME_FP_OFF and the return
 * address at fp + ARCH_FRAME_RA_OFF; the caller's sp is fp +
 * ARCH_FRAME_SIZE or above (the record is at the bottom of its frame).
 */
#define ARCH_FRAME_FP_OFF 0
#define ARCH_FRAME_RA_OFF 8
#define ARCH_FRAME_SIZE 16

/* A return (ret: to x30) takes nothing off the stack. */
#define ARCH_RET_POP 0

/*
 * A function's return address at its first instruction, before it has
 * a frame: x30, where bl left it (0 with *ra), signed or not (a leaf
 * past its PACIASP).  The caller's sp is sp.
 */
static inline int arch_entry_ra(const arch_regs_t *r, uint64_t *ra)
{
	*ra = arch_ra_strip(r->r.regs[30]);
	return 0;
}

/*
 * The optional features the in-target stubs may use: none asked here
 * (the A64 stubs' PRFM needs none); the bit is the name
 * linux/features.c asks.
 */
#define ARCH_CPU_PREFETCHW 0x1u
/*
 * The counter the stubs stamp a call with (stub-abi.h R_TIME): the
 * virtual counter, cntvct_el0, of a constant rate (cntfrq_el0) and the
 * same on every CPU.  Linux lets EL0 read both registers (or traps and
 * emulates the reads on CPUs with an erratum).  ARCH_CPU_COUNTER when
 * memtap read both without a SIGILL and cntfrq_el0 is not 0
 * (a64_counter_features(), regs.c, probed once; 0 on another host).
 * The times are converted at the rate measured against CLOCK_MONOTONIC
 * (stub-clock.c), not at cntfrq_el0's: firmware writes that register,
 * and some firmware writes it wrong.
 */
#define ARCH_CPU_COUNTER 0x2u
unsigned a64_counter_features(void);

static inline unsigned arch_cpu_features(void) { return a64_counter_features(); }

static inline uint64_t arch_counter_read(void)
{
#ifdef __aarch64__
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
#else
	return 0;
#endif
}

/*
 * memtap traces here: syscall events with their stacks, and breakpoints.
 * What needs detours or the stubs fails with one line until this folder
 * has them (src/arch/none/probes.c stands in).
 */
static inline int arch_supported(void) { return 0; }

#endif /* MEMTAP_ARCH_CPU_H */

/*
 * cpu.h (x86_64) - registers, syscall numbers and ABIs of x86-64 Linux
 * (included through arch/arch.h).
 *
 * A 64-bit process can make syscalls through three ABIs: x86-64
 * (`syscall`), x32 (`syscall` with bit 30 set in the number) and i386
 * (`int $0x80`, also what 32-bit processes use).  The seccomp filter and
 * the decoder both work from the table in syscalls.c.
 */
#ifndef MEMTAP_ARCH_CPU_H
#define MEMTAP_ARCH_CPU_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <linux/audit.h>

#include "arch/stop.h"

#define ARCH_NAME "x86_64"
#define X32_SYSCALL_BIT 0x40000000UL
/*
 * Length of the `syscall` instruction (0f 05); seccomp_data's
 * instruction_pointer is the address after it (verified on Linux 6.18).
 */
#define ARCH_SYSCALL_INSN_LEN 2

typedef struct user_regs_struct arch_regs_t;

enum abi {
	ABI_X86_64,
	ABI_X32,
	ABI_I386,
	ABI_COUNT
};

/* The audit architecture seccomp_data.arch carries for memtap's own ABI. */
#define ARCH_AUDIT_NATIVE AUDIT_ARCH_X86_64

/*
 * The width of a syscall's result in abi: 32 for i386, whose results
 * are 32-bit addresses or -errno; x32 enters the kernel as x86-64 does.
 */
static inline int arch_abi_bits(enum abi abi) { return abi == ABI_I386 ? 32 : 64; }

static inline uint64_t arch_pc(const arch_regs_t *r) { return r->rip; }
static inline uint64_t arch_sp(const arch_regs_t *r) { return r->rsp; }
/* The thread pointer (fs_base): 0 until the loader or libc sets up TLS. */
static inline uint64_t arch_tp(const arch_regs_t *r) { return r->fs_base; }

/*
 * Where the stack of a thread that libc made ends, from its thread
 * pointer tp: x86-64's TLS is variant II, and glibc and musl put the
 * TCB (which tp points to) and the static TLS at the top of the
 * thread's stack block, so the stack ends at tp (a thread whose tp is
 * not above its sp in the mapping has its stack elsewhere).
 */
static inline uint64_t arch_stack_top_from_tp(uint64_t tp) { return tp; }

/* A ptrace-stopped thread's registers: 0 or -errno. */
static inline int arch_regs_get(pid_t tid, arch_regs_t *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0L, r) < 0 ? -errno : 0;
}

static inline long arch_syscall_nr(const arch_regs_t *r) { return (long)r->orig_rax; }

/* Argument i (0..5) of the syscall in progress, as the ABI passes it. */
static inline uint64_t arch_syscall_arg(const arch_regs_t *r, enum abi abi, int i)
{
	if (abi == ABI_I386) {
		const unsigned long long a[6] = { r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp };
		return (uint32_t)a[i];
	}
	const unsigned long long a[6] = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 };
	return a[i];
}

/* The syscall's return value, sign-extended for 32-bit ABIs. */
static inline int64_t arch_syscall_ret(const arch_regs_t *r, enum abi abi)
{
	if (abi == ABI_I386)
		return (int32_t)r->rax;
	return (int64_t)r->rax;
}

/*
 * Is the thread, stopped at a stop of kind (arch.h), at a syscall's
 * entry (1) or at its exit (0)?  -1 where its registers cannot say.  At
 * a PTRACE_SYSCALL stop rax holds -ENOSYS at entry and the result at
 * exit; a seccomp stop is always an entry; another stop's rax is no
 * syscall's.  Asked at PTRACE_SYSCALL stops only where
 * PTRACE_GET_SYSCALL_INFO is missing (Linux < 5.3).
 */
static inline int arch_at_syscall_entry(const arch_regs_t *r, enum arch_stop kind)
{
	switch (kind) {
	case ARCH_STOP_SYSCALL:
		return (int64_t)r->rax == -38 /* -ENOSYS */;
	case ARCH_STOP_SECCOMP:
		return 1;
	default:
		return -1;
	}
}

/*
 * The ABI of the syscall a thread stopped in (registers r) makes: i386
 * for a 32-bit code segment or for the two bytes before rip "cd 80"
 * (int $0x80 from 64-bit code), read with read(ctx, ...) (0 or -errno;
 * not read in 32-bit code; a failed read is no int $0x80); x32 for the
 * x32 bit in the number; else x86-64.
 */
static inline enum abi
arch_abi_of_stop(const arch_regs_t *r,
		 int (*read)(void *ctx, uint64_t addr, void *buf, size_t len), void *ctx)
{
	uint16_t insn = 0;

	if (r->cs != 0x23 && read(ctx, r->rip - 2, &insn, sizeof(insn)) < 0)
		insn = 0;
	if (r->cs == 0x23 || insn == 0x80cd)
		return ABI_I386;
	if (r->orig_rax & X32_SYSCALL_BIT)
		return ABI_X32;
	return ABI_X86_64;
}

/*
 * Registers as the breakpoints see them (probe/breakpoint.c): the pc
 * moved, the function's arguments at its entry and its return value at
 * its return, the registers written back.
 */
static inline void arch_set_pc(arch_regs_t *r, uint64_t pc) { r->rip = pc; }
static inline void arch_set_sp(arch_regs_t *r, uint64_t sp) { r->rsp = sp; }

/* Integer argument i (0..5) of a function at its first instruction. */
static inline uint64_t arch_call_arg(const arch_regs_t *r, int i)
{
	const unsigned long long a[6] = { r->rdi, r->rsi, r->rdx, r->rcx, r->r8, r->r9 };

	return a[i];
}

/* A function's integer return value, right after it returned. */
static inline uint64_t arch_call_ret(const arch_regs_t *r) { return r->rax; }

/* Write a ptrace-stopped thread's registers back: 0 or -errno. */
static inline int arch_regs_set(pid_t tid, const arch_regs_t *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0L, r) < 0 ? -errno : 0;
}

/*
 * Reach: how far one branch or patch memtap writes can go.  Code memtap
 * puts in a target (scratch pages, detour stubs and far pages) lies
 * within ARCH_NEAR_REACH of the code it serves: rel32, a little short of
 * +-2 GiB, so that an instruction's own length never tips it over.
 */
#define ARCH_NEAR_REACH 0x7fff0000ULL

/* Does a branch or displacement at from reach to? */
static inline int arch_in_reach(uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	return d > -(int64_t)ARCH_NEAR_REACH && d < (int64_t)ARCH_NEAR_REACH;
}

/*
 * Unwinding: the registers a walk speaks of, and
 * the numberings of the tools that name them: DWARF, libunwind, perf
 * (their tables in regs.c and regs-libunwind.c, declared in arch.h).
 */

/* The frame pointer: rbp, the register a -fno-omit-frame-pointer frame chains. */
static inline uint64_t arch_fp(const arch_regs_t *r) { return r->rbp; }
static inline void arch_set_fp(arch_regs_t *r, uint64_t fp) { r->rbp = fp; }
/* The names of sp and fp, for messages. */
#define ARCH_SP_NAME "rsp"
#define ARCH_FP_NAME "rbp"

/*
 * The callee-saved registers of the SysV ABI that the stubs keep and
 * the unwinders carry from frame to frame, numbered 0..ARCH_NSAVED-1:
 * rbx rbp r12 r13 r14 r15.  The order of a stub frame's saved[]
 * (stack/modules.h) and of arch_dw_saved[] and arch_unw_saved[]; the
 * stubs' frame analysis names them STUB_*.
 */
enum { STUB_RBX, STUB_RBP, STUB_R12, STUB_R13, STUB_R14, STUB_R15, ARCH_NSAVED };
#define STUB_NSAVED ARCH_NSAVED

/* The callee-saved register i (0..ARCH_NSAVED-1) of r. */
static inline uint64_t arch_saved_reg(const arch_regs_t *r, int i)
{
	switch (i) {
	case STUB_RBX: return r->rbx;
	case STUB_RBP: return r->rbp;
	case STUB_R12: return r->r12;
	case STUB_R13: return r->r13;
	case STUB_R14: return r->r14;
	default: return r->r15;
	}
}

static inline void arch_set_saved_reg(arch_regs_t *r, int i, uint64_t v)
{
	switch (i) {
	case STUB_RBX: r->rbx = v; break;
	case STUB_RBP: r->rbp = v; break;
	case STUB_R12: r->r12 = v; break;
	case STUB_R13: r->r13 = v; break;
	case STUB_R14: r->r14 = v; break;
	default: r->r15 = v; break;
	}
}

/*
 * DWARF's register numbers (the x86-64 psABI's) of the frame pointer,
 * the stack pointer and the return address column; a walk's registers
 * are 0..ARCH_DW_NREGS-1 (arch_dw_initial()).
 */
#define ARCH_DW_FP 6
#define ARCH_DW_SP 7
#define ARCH_DW_RA 16
#define ARCH_DW_NREGS 17

/* The ELF machine of this CPU's objects (<elf.h>'s EM_). */
#define ARCH_ELF_MACHINE EM_X86_64

/*
 * perf's user registers (PERF_SAMPLE_REGS_USER) in its order, the
 * kernel's enum perf_event_x86_regs, and those asked for: all but DS,
 * ES, FS and GS, which x86-64 refuses.
 */
enum {
	PERF_REG_AX, PERF_REG_BX, PERF_REG_CX, PERF_REG_DX,
	PERF_REG_SI, PERF_REG_DI, PERF_REG_BP, PERF_REG_SP,
	PERF_REG_IP, PERF_REG_FLAGS, PERF_REG_CS, PERF_REG_SS,
	PERF_REG_DS, PERF_REG_ES, PERF_REG_FS, PERF_REG_GS,
	PERF_REG_R8, PERF_REG_R9, PERF_REG_R10, PERF_REG_R11,
	PERF_REG_R12, PERF_REG_R13, PERF_REG_R14, PERF_REG_R15,
	ARCH_PERF_NREGS
};
#define ARCH_PERF_REGS_MASK ((((uint64_t)1 << ARCH_PERF_NREGS) - 1) & \
			     ~((1ULL << PERF_REG_DS) | (1ULL << PERF_REG_ES) | \
			       (1ULL << PERF_REG_FS) | (1ULL << PERF_REG_GS)))

/* A ptrace-stopped thread goes on at pc: 0 or -errno. */
static inline int arch_thread_set_pc(pid_t tid, uint64_t pc)
{
	return ptrace(PTRACE_POKEUSER, tid, (void *)offsetof(struct user_regs_struct, rip),
		      (void *)pc) < 0 ? -errno : 0;
}

/*
 * Remote syscalls and their trampoline (probe/remote.c, remote-tramp.c;
 * the code in tramp.c).
 */

/* The ABI of memtap's own syscalls, which remote syscalls use. */
#define ARCH_ABI_NATIVE ABI_X86_64

/*
 * r set up to run syscall nr with args from the syscall instruction at
 * insn (pc = insn, the number in rax, the arguments in rdi rsi rdx r10
 * r8 r9); the other registers as they were.
 */
static inline void arch_setup_syscall(arch_regs_t *r, uint64_t insn, long nr,
				      const uint64_t args[6])
{
	r->rip = insn;
	r->rax = (uint64_t)nr;
	r->rdi = args[0];
	r->rsi = args[1];
	r->rdx = args[2];
	r->r10 = args[3];
	r->r8 = args[4];
	r->r9 = args[5];
}

/*
 * Registers r, about to be given to a stopped thread for a syscall of
 * memtap's (arch_regs_set()), made so that the kernel does not restart
 * over them a syscall that the stop interrupted (the stop's return
 * value is then -ERESTARTSYS or the like): orig_rax = -1.  The
 * registers of the stop (arch_regs_get()), set back, bring the restart
 * back: a CPU whose kernel keeps the syscall number out of its general
 * register set has it in arch_regs_t all the same, read and written by
 * arch_regs_get() and arch_regs_set().
 */
static inline void arch_suppress_restart(arch_regs_t *r)
{
	r->orig_rax = (uint64_t)-1;
}

/*
 * The trampoline (tramp.c): ARCH_TRAMP_SIZE bytes, its code first, and
 * at ARCH_TRAMP_BLOCK_OFF a block of ARCH_TRAMP_BLOCK_WORDS words that
 * memtap writes before each syscall run from it and the code reads.
 */
#define ARCH_TRAMP_SIZE 320
#define ARCH_TRAMP_BLOCK_OFF 168
#define ARCH_TRAMP_BLOCK_WORDS 18
/* Its code puts the mask back with rt_sigprocmask(SIG_SETMASK, &mask, NULL, 8). */
#define ARCH_TRAMP_RESTORE_NR SYS_rt_sigprocmask
#define ARCH_TRAMP_RESTORE_ARGS { SIG_SETMASK, 0, 0, 8, 0, 0 }

/*
 * The CPU's optional features, as CPUID says
 * (arch_cpu_features(), arch.h).
 */
#include <cpuid.h>

/* PREFETCHW (CPUID 0x80000001 ECX bit 8): Intel's lacked it before Broadwell. */
#define ARCH_CPU_PREFETCHW 0x1u
/*
 * The stubs' counter (arch_counter_read()): the TSC, invariant (CPUID
 * 0x80000007 EDX bit 8: a constant rate, in every P- and C-state, the
 * same on every CPU of the machine).  Without it the TSC may stop or
 * change its rate, and the stubs do not stamp calls with it.
 */
#define ARCH_CPU_COUNTER 0x2u

static inline unsigned arch_cpu_features(void)
{
	unsigned a, b, c, d, f = 0;

	if (__get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 8)))
		f |= ARCH_CPU_PREFETCHW;
	if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
		f |= ARCH_CPU_COUNTER;
	return f;
}

/* The counter the stubs stamp a call with (stub-abi.h R_TIME): the TSC. */
static inline uint64_t arch_counter_read(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* memtap traces on this CPU (arch.h). */
static inline int arch_supported(void) { return 0; }

/*
 * Frame records: where a frame pointer points, the caller's fp at fp +
 * ARCH_FRAME_FP_OFF and the return address at fp + ARCH_FRAME_RA_OFF;
 * the caller's sp is fp + ARCH_FRAME_SIZE or above.
 */
#define ARCH_FRAME_FP_OFF 0
#define ARCH_FRAME_RA_OFF 8
#define ARCH_FRAME_SIZE 16

/* What a return takes off the stack: the return address call pushed. */
#define ARCH_RET_POP 8

/*
 * A function's return address at its first instruction, before it has
 * a frame: 0 with *ra where a register holds it, 1 where it is the word
 * at sp (here: call pushed it).  Either way the caller's sp, once
 * returned, is sp + ARCH_RET_POP.
 */
static inline int arch_entry_ra(const arch_regs_t *r, uint64_t *ra)
{
	(void)r;
	(void)ra;
	return 1;
}

/* A return address as the unwinders read it: no signature to strip here. */
static inline uint64_t arch_ra_strip(uint64_t ra) { return ra; }

#endif /* MEMTAP_ARCH_CPU_H */

/*
 * cpu.h (x86_64) - registers, syscall numbers and ABIs of x86-64 Linux
 * (included through arch/arch.h).
 *
 * A 64-bit process can make syscalls through three ABIs: x86-64
 * (`syscall`), x32 (`syscall` with bit 30 set in the number) and i386
 * (`int $0x80`, also what 32-bit processes use).  The seccomp filter and
 * the decoder both work from the table in syscall_table.c.
 */
#ifndef MEMTAP_ARCH_CPU_H
#define MEMTAP_ARCH_CPU_H

#include <errno.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <linux/audit.h>

#define ARCH_NAME "x86_64"
#define ARCH_PAGE_SIZE 4096UL
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

/* The audit architecture seccomp_data.arch carries for each ABI. */
#define ARCH_AUDIT_NATIVE AUDIT_ARCH_X86_64
#define ARCH_AUDIT_COMPAT AUDIT_ARCH_I386

static inline uint64_t arch_pc(const arch_regs_t *r) { return r->rip; }
static inline uint64_t arch_sp(const arch_regs_t *r) { return r->rsp; }
/* The thread pointer (fs_base): 0 until the loader or libc sets up TLS. */
static inline uint64_t arch_tp(const arch_regs_t *r) { return r->fs_base; }

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
 * At a syscall-entry stop rax holds -ENOSYS; at an exit stop, the result.
 * Used only where PTRACE_GET_SYSCALL_INFO is missing (Linux < 5.3).
 */
static inline int arch_at_syscall_entry(const arch_regs_t *r)
{
	return (int64_t)r->rax == -38 /* -ENOSYS */;
}

/*
 * The ABI of the syscall a thread is in, from its code segment and from
 * the two bytes before rip ("cd 80" is int $0x80); insn holds them.
 */
static inline enum abi arch_abi_from_regs(const arch_regs_t *r, uint16_t insn)
{
	if (r->cs == 0x23 || insn == 0x80cd)
		return ABI_I386;
	if (r->orig_rax & X32_SYSCALL_BIT)
		return ABI_X32;
	return ABI_X86_64;
}

/*
 * Remote syscalls and their trampoline (probe/remote.c, remote-tramp.c;
 * the code in tramp.c).
 */

/* Set a ptrace-stopped thread's registers to *r: 0 or -errno. */
static inline int arch_regs_set(pid_t tid, const arch_regs_t *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0L, r) < 0 ? -errno : 0;
}

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

#endif /* MEMTAP_ARCH_CPU_H */

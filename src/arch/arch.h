/*
 * arch.h - the CPU memtap runs on and traces: the one header of the
 * arch layer the rest of src/ includes.
 *
 * The arch layer owns every fact of the instruction set and of the
 * kernel's view of it: the register file and how a stop reports it
 * (arch_regs_t, arch_pc(), arch_sp(), the syscall number, arguments and
 * result), the syscall ABIs a process can use (enum abi), their audit
 * arches and the numbers of the memory syscalls in each (syscalls.c),
 * the breakpoint instruction and how the instruction it replaces is run
 * out of line (bp_arch.h), and the in-target stubs with the layout
 * memtap shares with them (arch/stub-abi.h, its CPU's part stub-cpu.h,
 * detour-stubs.S; the registers a ring record carries,
 * arch_regs_from_record()).  Above it, code
 * speaks of pc, sp and arguments, never of a CPU's registers or
 * encodings (scripts/check-layers.sh fails on them).  It
 * sits right above util/ and includes nothing but util/ and itself, so
 * that every layer may ask it.
 *
 * One CPU is chosen at configure time: src/arch/$(arch)/ holds its
 * files, and the build finds them through -I src/arch/$(arch), as
 * strace's linux/<arch>/ does; this header includes that folder's
 * cpu.h (inline accessors and constants) and bp_arch.h, as
 * arch/stub-abi.h, the stub layout, includes its stub-cpu.h.  Not a
 * table of backends picked at run time, as libebl's in elfutils: a
 * memtap binary traces only the processes of its own CPU (the compat
 * ABIs of one, such as x86-64's i386 and x32, are enum abi's business
 * within its folder), and the register accessors are inline on the hot
 * path of every stop and every unwind step.
 */
#ifndef MEMTAP_ARCH_H
#define MEMTAP_ARCH_H

#include "cpu.h"
#include "bp_arch.h"

/*
 * Syscalls: the memory syscalls memtap traces, each by what it does
 * (enum sc_id, the same on every CPU) and by its number in each ABI of
 * this CPU (the table in syscalls.c); what a call means to the tracer,
 * its event kind, is trace/'s.
 */
enum sc_id {
	SC_BRK,
	SC_MMAP,		/* offset in bytes */
	SC_MMAP2,		/* offset in pages (i386) */
	SC_OLD_MMAP,		/* arguments in a struct in memory (i386) */
	SC_MUNMAP,
	SC_MREMAP,
	SC_MPROTECT,		/* also watched for code mappings */
	SC_MADVISE,
	SC_EXECVE,		/* execve, execveat: no event; the in-target rings
				   and the faults' are read at its entry */
	SC_SECCOMP,		/* seccomp, and */
	SC_PRCTL,		/* prctl (PR_SET_SECCOMP only): no event; with
				   probes, a filter the command adds to memtap's */
	SC_NIDS
};

/* A memory syscall in one ABI. */
struct arch_syscall {
	enum abi abi;
	long nr;		/* its number in that ABI, as the kernel sees it */
	enum sc_id id;
	const char *name;
};

/*
 * Every memory syscall of every ABI; the seccomp filter returns an
 * entry's index (trace/seccomp.c), so the order is part of its bytes.
 */
extern const struct arch_syscall arch_syscalls[];
extern const size_t arch_nsyscalls;
/* The entry of number nr in abi, or NULL: not a memory syscall there. */
const struct arch_syscall *arch_syscall_lookup(enum abi abi, long nr);
/* The first entry of id in abi (execve's, not execveat's), or NULL. */
const struct arch_syscall *arch_syscall_by_id(enum abi abi, enum sc_id id);

/*
 * The audit arches seccomp_data.arch carries (<linux/audit.h>), each with
 * the ABIs (1 << enum abi) whose syscalls come with it: one block of the
 * seccomp filter each, in this order.
 */
struct arch_audit {
	uint32_t audit_arch;
	unsigned abis;
};
extern const struct arch_audit arch_audits[];
extern const size_t arch_naudits;

/*
 * Unwinding: the register file in the numberings of
 * the tools memtap hands it to.  cpu.h gives the constants (ARCH_NSAVED,
 * ARCH_DW_*, ARCH_PERF_*, ARCH_ELF_MACHINE) and the accessors
 * (arch_fp(), arch_set_pc(), arch_saved_reg(), ...).
 */

/* DWARF: registers 0..ARCH_DW_NREGS-1 of r, by their DWARF numbers. */
void arch_dw_initial(const arch_regs_t *r, uint64_t out[ARCH_DW_NREGS]);
/* DWARF's numbers of the callee-saved registers, arch_saved_reg()'s order. */
extern const uint8_t arch_dw_saved[ARCH_NSAVED];

/*
 * libunwind (only with HAVE_LIBUNWIND): register reg of its numbering
 * (UNW_*) of r into *val: 0, or -1 for one r does not hold.
 */
int arch_unw_get(const arch_regs_t *r, int reg, uint64_t *val);
/* libunwind's numbers of the callee-saved registers, arch_saved_reg()'s order. */
extern const int arch_unw_saved[ARCH_NSAVED];

/*
 * perf: the registers of a sample, v[i] perf's register i (of
 * ARCH_PERF_REGS_MASK, the others 0), into r; the rest of r untouched.
 */
void arch_regs_from_perf(arch_regs_t *r, const uint64_t *v);

/*
 * Remote syscalls and their trampoline (probe/remote.c, remote-tramp.c;
 * the constants and inline parts in cpu.h, the code in tramp.c).
 *
 * memtap runs a syscall in a stopped thread from a syscall instruction
 * the process has (ARCH_SYSCALL_INSN_LEN bytes; arch_find_syscall_insn()
 * finds one in code read from it), with its registers set by
 * arch_setup_syscall() and arch_suppress_restart(), and reads the result
 * with arch_syscall_ret(, ARCH_ABI_NATIVE): the pc after the
 * instruction says it ran.  Or from a trampoline of its own, whose code
 * after the syscall puts the thread back where it was by itself
 * (probe/remote.h, remote_tramp_set()).
 */
#include <stddef.h>
#include <stdint.h>

/*
 * Where the first syscall instruction in buf[0, len) starts, or -1.
 * buf is code as read from a mapping's start (aligned as it was there).
 */
long arch_find_syscall_insn(const uint8_t *buf, size_t len);

/*
 * The ARCH_TRAMP_SIZE bytes of a trampoline at address at, into code:
 *
 *   the syscall instruction         (the syscall memtap runs)
 *   the block's signal mask, flags and general registers put back,
 *   and on at the block's pc
 *
 * (x86-64: rt_sigprocmask(SIG_SETMASK, &block's mask, NULL, 8), the
 * flags and every register but rsp, a jump through the block, the
 * thread's stack left as it was below the red zone; arm64: a signal
 * frame built below sp and rt_sigreturn, which puts back sp and the
 * mask too), the rest of the bytes traps.  ARCH_TRAMP_SIZE, or 0 if the
 * code would not fit before the block or cannot be at at.
 */
size_t arch_tramp_code(uint8_t *code, uint64_t at);

/*
 * The block for a thread stopped with registers r and signal mask mask:
 * those registers, but when the stop interrupted a syscall that the
 * kernel would restart, the pc and syscall number of the restart (the
 * syscall instruction again, or restart_syscall).
 */
void arch_tramp_block(uint64_t block[ARCH_TRAMP_BLOCK_WORDS], const arch_regs_t *r,
		      uint64_t mask);

/*
 * cpu.h gives ARCH_TRAMP_RESTORE_NR and ARCH_TRAMP_RESTORE_ARGS (an
 * initializer of six uint64_t): the syscall by which the trampoline's
 * code puts the thread back after the one memtap runs (x86-64:
 * rt_sigprocmask; arm64: rt_sigreturn) and its arguments as a seccomp
 * filter sees them, which probe/remote.c asks the thread's filters
 * about before it runs a syscall from the trampoline.
 */

/*
 * The page size and the CPU's optional features.
 */
#include <unistd.h>

/*
 * The size of a page, as the kernel running memtap (and its targets)
 * has it: asked at run time, as one CPU may have several (arm64: 4, 16
 * or 64 KiB).  The same on every CPU, so here and not in cpu.h.
 */
static inline size_t arch_page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/*
 * cpu.h gives arch_cpu_features(): the optional features of the CPU
 * memtap runs on (its ARCH_CPU_* bits) that the in-target stubs may
 * use, asked of the CPU itself, not of the kernel (linux/features.c).
 */

/*
 * cpu.h gives arch_counter_read(): the counter the in-target stubs stamp
 * each call with (stub-abi.h R_TIME), read in memtap; ARCH_CPU_COUNTER
 * of arch_cpu_features() says it runs at a constant rate and reads alike
 * on every CPU (none: never; aarch64: when memtap reads cntvct_el0 and
 * a cntfrq_el0 not 0).
 *
 * The stubs' times as CLOCK_MONOTONIC (stub-clock.c, the same on every
 * CPU): arch_stub_clock_start() finds the counter's rate against
 * clock_gettime (two readings some milliseconds apart); 0, or -1 with
 * *why saying what was wrong (no ARCH_CPU_COUNTER, a counter that does
 * not advance or at a rate no CPU has).  arch_stub_clock_sync() reads
 * both clocks again (at each batch of records memtap reads): a raw value
 * is converted from the last such pair, and the rate refined over the
 * time since the start; a pair that strays from the rate (by more than
 * 1% of the time since the start, and 1 ms) stops the clock: 0 while it
 * runs, -1 (with *why) from then on.  arch_stub_clock_ns(raw, &ns): the
 * CLOCK_MONOTONIC nanoseconds of a raw value; -1 when the clock does not
 * run.
 */
int arch_stub_clock_start(const char **why);
int arch_stub_clock_sync(const char **why);
int arch_stub_clock_ns(uint64_t raw, uint64_t *ns);

/*
 * cpu.h gives the frame rules every unwinder shares: the frame record's
 * layout (ARCH_FRAME_FP_OFF, ARCH_FRAME_RA_OFF, ARCH_FRAME_SIZE), what a
 * return takes off the stack (ARCH_RET_POP) and where a function's
 * return address is at its entry (arch_entry_ra()).
 */

/*
 * cpu.h gives arch_ra_strip(): a return address read from a frame or a
 * register, without the signature bits pointer authentication put in
 * it (arm64's PAC; the address itself elsewhere).
 */

/*
 * cpu.h gives arch_supported(): 0 where memtap can
 * trace, -ENOTSUP for the stub arch of configure --with-arch=none,
 * which builds memtap for a CPU it does not support yet.
 */

#endif /* MEMTAP_ARCH_H */

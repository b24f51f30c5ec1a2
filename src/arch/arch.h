/*
 * arch.h - the CPU memtap runs on and traces: the one header of the
 * arch layer the rest of src/ includes.
 *
 * The arch layer owns every fact of the instruction set and of the
 * kernel's view of it: the register file and how a stop reports it
 * (arch_regs_t, arch_pc(), arch_sp(), the syscall number, arguments and
 * result), the syscall ABIs a process can use (enum abi) and their
 * audit arches, the breakpoint instruction and how the instruction it
 * replaces is run out of line (bp_arch.h), and the in-target stubs with
 * the layout memtap shares with them (detour-abi.h, detour-stubs.S).
 * Above it, code speaks of pc, sp and arguments, never of a CPU's
 * registers or encodings (scripts/check-layers.sh fails on them).  It
 * sits right above util/ and includes nothing but util/ and itself, so
 * that every layer may ask it.
 *
 * One CPU is chosen at configure time: src/arch/$(arch)/ holds its
 * files, and the build finds them through -I src/arch/$(arch), as
 * strace's linux/<arch>/ does; this header includes that folder's
 * cpu.h (inline accessors and constants) and bp_arch.h, and a file
 * wanting the stub layout includes "detour-abi.h" the same way.  Not a
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
 *   rt_sigprocmask(SIG_SETMASK, &block's mask, NULL, 8)
 *   the flags, then every general register but sp, from the block
 *   a jump to the block's pc
 *
 * the thread's own stack left as it was (below the red zone), the rest
 * of the bytes traps.  ARCH_TRAMP_SIZE, or 0 if the code would not fit
 * before the block.
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

#endif /* MEMTAP_ARCH_H */

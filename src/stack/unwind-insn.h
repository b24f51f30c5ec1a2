/*
 * unwind-insn.h - the frame of code without CFI, from its instructions.
 *
 * Code built without unwind tables (musl's libc, hand-written assembly,
 * JIT code and trampolines in anonymous memory) has no FDE that would
 * say where a frame's return address is.  unwind_insn_rule() finds it
 * by following the code forward from the pc to a ret, along the paths
 * the code can take, and keeping count of what moves the stack pointer
 * on the way (push, pop, add, sub, lea, leave, mov %rbp,%rsp): at the
 * ret, the return address is at the stack pointer, so the frame's CFA
 * (the stack pointer before the call) is known relative to the %rsp or
 * %rbp of the pc.  A pop or load of %rbp on the way says where the
 * caller's %rbp is.  No function start is needed.
 *
 * Calls are stepped over (the callee returns to the next instruction);
 * a jmp is followed, also into another function (a tail call keeps the
 * count right); at a conditional branch the code falls through first,
 * and the other arm is tried when a path ends without a ret (a loop, an
 * indirect jump, an unknown write to %rsp, undecodable bytes).  A jmp
 * to a function memtap probes (an int3 or a jump into the in-target
 * probes' stubs at its entry, never followed) ends the path as a ret
 * would.  Bounded in instructions and branches.
 */
#ifndef MEMTAP_UNWIND_INSN_H
#define MEMTAP_UNWIND_INSN_H

#include <stddef.h>
#include <stdint.h>

struct proc_modules;

/* The registers of a rule: x86-64 DWARF numbers. */
#define INSN_REG_RBP 6
#define INSN_REG_RSP 7

/*
 * A frame's rule at a pc: CFA = cfa_reg + cfa_off (the registers' values
 * at the pc), the return address at CFA - 8, the caller's %rbp at CFA +
 * rbp_off, or still in %rbp when rbp_off is 0.
 */
struct insn_rule {
	int32_t cfa_off;
	int32_t rbp_off;
	uint8_t cfa_reg;
};

/*
 * How the analysis reads the target's code: read() copies len bytes at
 * addr into buf, 0 or -1 (never partial).  pm (may be NULL) gives the
 * stub ranges (stack/modules.h), never followed into.
 */
struct insn_code {
	int (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	void *arg;
	const struct proc_modules *pm;
};

/*
 * The rule of the frame at pc: exact (the pc of an interrupted thread,
 * at an instruction's start) or not (a return address: the analysis
 * starts there, the state just after the call).  A first instruction of
 * int3 at an exact pc (a breakpoint at a function's entry) gives the
 * entry's rule, CFA = %rsp + 8.
 * Returns 0 and fills *rule, or -1 when no path to a ret was found
 * within the bounds (unreadable or undecodable code included).  Every
 * read goes through code->read; never fails otherwise.
 */
int unwind_insn_rule(const struct insn_code *code, uint64_t pc, int exact,
		     struct insn_rule *rule);

#endif /* MEMTAP_UNWIND_INSN_H */

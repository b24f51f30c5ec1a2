/*
 * unwind-insn.h - the frame of code without CFI, from its instructions.
 *
 * Code built without unwind tables (musl's libc, hand-written assembly,
 * JIT code and trampolines in anonymous memory) has no FDE that would
 * say where a frame's return address is.  unwind_insn_rule() finds it
 * by following the code forward from the pc to a return, along the
 * paths the code can take, and keeping count of what moves the stack
 * pointer on the way (on x86-64: push, pop, add, sub, lea, leave, mov
 * fp to sp): at the return, the place of the return address is known,
 * so the frame's CFA (the stack pointer before the call) is known
 * relative to the sp or the fp of the pc.  A pop or load of fp on the
 * way says where the caller's fp is.  No function start is needed.
 * The instructions are the CPU's: the arch follows them
 * (arch/insn-unwind.h, which also defines struct insn_rule and struct
 * insn_code).
 *
 * Calls are stepped over (the callee returns to the next instruction);
 * a jump is followed, also into another function (a tail call keeps the
 * count right); at a conditional branch the code falls through first,
 * and the other arm is tried when a path ends without a return (a loop,
 * an indirect jump, an unknown write to sp, undecodable bytes).  A jump
 * to a function memtap probes (a breakpoint or a jump into the
 * in-target probes' stubs at its entry, never followed) ends the path
 * as a return would.  Bounded in instructions and branches.
 */
#ifndef MEMTAP_UNWIND_INSN_H
#define MEMTAP_UNWIND_INSN_H

#include <stddef.h>
#include <stdint.h>

#include "arch/insn-unwind.h"

/*
 * struct insn_code's is_probe_entry() for a process's modules: probes
 * a struct proc_modules (stack/modules.h; may be NULL), addr in one of
 * its stub ranges.
 */
int unwind_insn_probe_entry(const void *probes, uint64_t addr);

/*
 * The rule of the frame at pc: exact (the pc of an interrupted thread,
 * at an instruction's start) or not (a return address: the analysis
 * starts there, the state just after the call).  A first instruction
 * of a breakpoint at an exact pc (at a function's entry) gives the
 * entry's rule (arch_insn_entry_rule(): on x86-64 CFA = sp + 8).
 * Returns 0 and fills *rule, or -1 when no path to a return was found
 * within the bounds (unreadable or undecodable code included).  Every
 * read goes through code->read; never fails otherwise.
 */
int unwind_insn_rule(const struct insn_code *code, uint64_t pc, int exact,
		     struct insn_rule *rule);

#endif /* MEMTAP_UNWIND_INSN_H */

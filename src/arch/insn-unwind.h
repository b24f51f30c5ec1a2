/*
 * insn-unwind.h - the frame of code without CFI, from its instructions:
 * the CPU's part (src/arch/$(arch)/insn-unwind.c), for
 * stack/unwind/unwind-insn.h, which says what the analysis does and is what
 * the unwinders call.
 *
 * The arch follows the code at a pc forward to a return, along the
 * paths the code can take, keeping count of what moves sp and of where
 * fp goes; at the return, the place of the return address gives the
 * frame's CFA (the caller's sp, after the return) relative to the sp or
 * the fp of the pc.  It reads code through the caller's function only,
 * and asks the caller which code is memtap's own probes'.
 */
#ifndef MEMTAP_ARCH_INSN_UNWIND_H
#define MEMTAP_ARCH_INSN_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* The registers a rule's CFA is relative to: sp and fp, by their DWARF numbers. */
#define INSN_REG_SP ARCH_DW_SP
#define INSN_REG_FP ARCH_DW_FP

/*
 * A frame's rule at a pc: CFA = cfa_reg + cfa_off (the registers'
 * values at the pc); the return address at CFA + ra_off, or still in
 * the CPU's return-address register when ra_off is 0 (on a CPU whose
 * calls put it there, until the callee saves it; never on x86-64, whose
 * calls push it: CFA - 8); the caller's fp at CFA + fp_off, or still in
 * fp when fp_off is 0.
 */
struct insn_rule {
	int32_t cfa_off;
	int32_t fp_off;
	int32_t ra_off;
	uint8_t cfa_reg;
};

/*
 * How the analysis reads the target's code: read() copies len bytes at
 * addr into buf, 0 or -1 (never partial).  is_probe_entry() (may be
 * NULL: there is none) says whether addr is in the code of memtap's
 * in-target probes, the stubs that the entry of a function memtap
 * probes jumps to (1) or not (0), given probes; that code is never
 * followed.
 */
struct insn_code {
	int (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	void *arg;
	int (*is_probe_entry)(const void *probes, uint64_t addr);
	const void *probes;
};

/*
 * The rule at a function's first instruction, the call just made (a
 * breakpoint there: stack/unwind/unwind-insn.h).
 */
void arch_insn_entry_rule(struct insn_rule *rule);

/*
 * The rule of the frame at pc, found by following its code: exact (the
 * pc of an interrupted thread, at an instruction's start) or not (a
 * return address: the state just after the call).  Returns 0 and fills
 * *rule, or -1 when no path to a return was found within the bounds
 * (unreadable or undecodable code included).  Every read goes through
 * code->read; never fails otherwise.
 */
int arch_insn_rule(const struct insn_code *code, uint64_t pc, int exact,
		   struct insn_rule *rule);

#endif /* MEMTAP_ARCH_INSN_UNWIND_H */

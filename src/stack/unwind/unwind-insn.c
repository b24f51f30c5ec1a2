/*
 * unwind-insn.c - the frame of code without CFI, from its instructions
 * (see unwind-insn.h): what is the same on every CPU.  A breakpoint at
 * the pc is at a function's entry, whose rule the arch knows; any other
 * code the arch follows (arch/insn-unwind.h).
 */
#include "config.h"

#include <string.h>

#include "arch/arch.h"
#include "arch/insn-unwind.h"
#include "stack/modules.h"
#include "stack/unwind/unwind-insn.h"

int unwind_insn_probe_entry(const void *probes, uint64_t addr)
{
	return modules_find_stubs(probes, addr) != NULL;
}

int unwind_insn_rule(const struct insn_code *code, uint64_t pc, int exact,
		     struct insn_rule *rule)
{
	uint8_t first[ARCH_BP_LEN], bp[ARCH_BP_LEN];

	arch_bp_fill(bp, sizeof(bp));
	if (exact && code->read(code->arg, pc, first, sizeof(first)) == 0 &&
	    memcmp(first, bp, sizeof(bp)) == 0) {
		/* a breakpoint at a function's entry */
		arch_insn_entry_rule(rule);
		return 0;
	}
	return arch_insn_rule(code, pc, exact, rule);
}

/*
 * cfi-rule.h - reading libdw's answer for one register of a CFI row, for
 * the walks that keep only simple rules (unwind-libdw.c's rule cache,
 * cfitab.c's tables).  Needs libdw (HAVE_LIBDW).
 */
#ifndef MEMTAP_CFI_RULE_H
#define MEMTAP_CFI_RULE_H

#include <stddef.h>
#include <stdint.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

/*
 * "Register saved at CFA + N" (DW_OP_call_frame_cfa, DW_OP_plus_uconst
 * N, N a nonzero int32): *off = N and 1; any other expression 0.
 */
static inline int cfi_saved_at(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	if (nops != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst)
		return 0;
	if ((int64_t)ops[1].number < INT32_MIN || (int64_t)ops[1].number > INT32_MAX ||
	    (int64_t)ops[1].number == 0)
		return 0;
	*off = (int32_t)(int64_t)ops[1].number;
	return 1;
}

#endif /* MEMTAP_CFI_RULE_H */

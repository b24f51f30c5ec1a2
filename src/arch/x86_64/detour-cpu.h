/*
 * detour-cpu.h (x86_64) - the CPU's half of the detour writer's
 * interface (arch/detour-plan.h, included through it): a detour is a
 * 5-byte `jmp rel32` at the entry, after endbr64 if the function starts
 * with one, and the instructions it displaces are decoded as
 * breakpoints decode theirs (bp_arch.h).
 */
#ifndef MEMTAP_ARCH_DETOUR_CPU_H
#define MEMTAP_ARCH_DETOUR_CPU_H

#include "bp_arch.h"

#define ARCH_PATCH_LEN 5		/* jmp rel32 */
#define ARCH_LANDING_PAD_NAME "endbr64"
#define ARCH_PLAN_MAX_INSNS 8

struct arch_plan_insns {
	struct bp_insn insn[ARCH_PLAN_MAX_INSNS];
};

#endif /* MEMTAP_ARCH_DETOUR_CPU_H */

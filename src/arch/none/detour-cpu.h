/*
 * detour-cpu.h (none) - the stub arch's half of the detour writer's
 * interface (arch/detour-plan.h): arch_detour_plan() refuses every
 * function, so no detour is written (see cpu.h).
 */
#ifndef MEMTAP_ARCH_DETOUR_CPU_H
#define MEMTAP_ARCH_DETOUR_CPU_H

#include "bp_arch.h"

#define ARCH_PATCH_LEN 4
#define ARCH_LANDING_PAD_NAME "landing pad"
#define ARCH_PLAN_MAX_INSNS 1

struct arch_plan_insns {
	struct bp_insn insn[ARCH_PLAN_MAX_INSNS];
};

#endif /* MEMTAP_ARCH_DETOUR_CPU_H */

/*
 * detour-cpu.h (aarch64) - the CPU's half of the detour writer's
 * interface (arch/detour-plan.h, included through it): a detour is one
 * 4-byte `B` at the entry, after its landing pad if it starts with one
 * (BTI c, BTI j, BTI jc, PACIASP, PACIBSP: a64_is_landing_pad()), so it
 * displaces exactly one instruction, decoded by insn.h's a64_decode().
 * A B reaches +-128 MiB: the stubs are mapped that near each patched
 * module (arch_in_reach(), cpu.h), and the patch is one aligned word,
 * which a thread sees whole.
 */
#ifndef MEMTAP_ARCH_DETOUR_CPU_H
#define MEMTAP_ARCH_DETOUR_CPU_H

#include <stdint.h>

#include "cpu.h"
#include "insn.h"

#define ARCH_PATCH_LEN 4		/* b */
#define ARCH_LANDING_PAD_NAME "BTI or PACIASP"
#define ARCH_PLAN_MAX_INSNS 1

struct arch_plan_insns {
	struct a64_insn insn[ARCH_PLAN_MAX_INSNS];
	uint32_t pad;		/* the landing pad left in place before the site, 0: none */
};

#endif /* MEMTAP_ARCH_DETOUR_CPU_H */

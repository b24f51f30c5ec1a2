/*
 * tables.c (none) - the stub arch's tables, all empty: no memory
 * syscall, no audit arch, no callee-saved register numbering (see
 * cpu.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

/* Of one unused entry (C has no empty arrays); the counts say none. */
const struct arch_syscall arch_syscalls[1];
const size_t arch_nsyscalls = 0;
const struct arch_audit arch_audits[1];
const size_t arch_naudits = 0;

const uint8_t arch_dw_saved[ARCH_NSAVED];
const int arch_unw_saved[ARCH_NSAVED];

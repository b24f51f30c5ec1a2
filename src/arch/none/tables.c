/*
 * tables.c (none) - the stub arch's tables, all empty: no memory
 * syscall, no audit arch, no callee-saved register numbering, no stub
 * routine (see cpu.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "arch/stub-abi.h"

/* Of one unused entry (C has no empty arrays); the counts say none. */
const struct arch_syscall arch_syscalls[1];
const size_t arch_nsyscalls = 0;
const struct arch_audit arch_audits[1];
const size_t arch_naudits = 0;

const struct arch_syscall *arch_syscall_lookup(enum abi abi, long nr)
{
	(void)abi;
	(void)nr;
	return NULL;
}

const struct arch_syscall *arch_syscall_by_id(enum abi abi, enum sc_id id)
{
	(void)abi;
	(void)id;
	return NULL;
}

const uint8_t arch_dw_saved[ARCH_NSAVED];
const int arch_unw_saved[ARCH_NSAVED];

/* The stub routines: none, dt_template_end at dt_template. */
const uint8_t dt_template[1];
extern const uint8_t dt_template_end[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_result[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_entry[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_sync[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_prefilter[1] __attribute__((alias("dt_template")));

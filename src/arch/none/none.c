/*
 * none.c (none) - the stub arch's own functions: registers (each fails,
 * as its contract allows, saying once that memtap supports no CPU in
 * this build: arch_unsupported()), the unwinders' numberings and the
 * instruction analysis (nothing to analyse).  The probes' functions
 * and Go's are in probes.c and go.c, which a CPU's build takes too
 * while its folder does not have them yet (Makefile.am).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/insn-unwind.h"
#include "unsupported.h"

/* cpu.h */

int arch_regs_get(pid_t tid, arch_regs_t *r)
{
	(void)tid;
	memset(r, 0, sizeof(*r));
	return arch_unsupported("reading a thread's registers");
}

int arch_regs_set(pid_t tid, const arch_regs_t *r)
{
	(void)tid;
	(void)r;
	return arch_unsupported("writing a thread's registers");
}

int arch_thread_set_pc(pid_t tid, uint64_t pc)
{
	(void)tid;
	(void)pc;
	return arch_unsupported("moving a thread's pc");
}

/* arch.h: registers in the unwinders' numberings */

void arch_dw_initial(const arch_regs_t *r, uint64_t out[ARCH_DW_NREGS])
{
	out[ARCH_DW_FP] = r->fp;
	out[ARCH_DW_SP] = r->sp;
	out[ARCH_DW_RA] = r->pc;
}

int arch_unw_get(const arch_regs_t *r, int reg, uint64_t *val)
{
	(void)r;
	(void)reg;
	(void)val;
	return -1;
}

void arch_regs_from_perf(arch_regs_t *r, const uint64_t *v)
{
	(void)r;
	(void)v;
}

/* arch.h: remote syscalls and their trampoline */

long arch_find_syscall_insn(const uint8_t *buf, size_t len)
{
	(void)buf;
	(void)len;
	arch_unsupported("running a syscall in a target");
	return -1;
}

/* insn-unwind.h: no code is ever analysed (nothing is traced). */
void arch_insn_entry_rule(struct insn_rule *rule)
{
	memset(rule, 0, sizeof(*rule));
	rule->cfa_reg = INSN_REG_SP;
}

int arch_insn_rule(const struct insn_code *code, uint64_t pc, int exact, struct insn_rule *rule)
{
	(void)code;
	(void)pc;
	(void)exact;
	(void)rule;
	return -1;
}

/*
 * none.c (none) - the stub arch's functions: each fails, as its
 * contract allows, and the first to be called says once, on one line,
 * that memtap supports no CPU in this build (see cpu.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/detour-plan.h"
#include "arch/go.h"
#include "arch/insn-unwind.h"
#include "arch/stub-frame.h"
#include "util/error.h"

/* One line, the first time memtap needs the CPU; fail = the failure value. */
static int unsupported(const char *what)
{
	static int said;

	if (!said)
		error_msg("%s: not supported on this CPU (memtap built with --with-arch=none)",
			  what);
	said = 1;
	return -ENOTSUP;
}

/* cpu.h */

int arch_regs_get(pid_t tid, arch_regs_t *r)
{
	(void)tid;
	memset(r, 0, sizeof(*r));
	return unsupported("reading a thread's registers");
}

int arch_regs_set(pid_t tid, const arch_regs_t *r)
{
	(void)tid;
	(void)r;
	return unsupported("writing a thread's registers");
}

int arch_thread_set_pc(pid_t tid, uint64_t pc)
{
	(void)tid;
	(void)pc;
	return unsupported("moving a thread's pc");
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
	unsupported("running a syscall in a target");
	return -1;
}

size_t arch_tramp_code(uint8_t *code, uint64_t at)
{
	(void)code;
	(void)at;
	return 0;
}

void arch_tramp_block(uint64_t block[ARCH_TRAMP_BLOCK_WORDS], const arch_regs_t *r,
		      uint64_t mask)
{
	(void)r;
	(void)mask;
	memset(block, 0, ARCH_TRAMP_BLOCK_WORDS * sizeof(*block));
}

/* bp_arch.h */

int bp_arch_decode(uint64_t addr, const uint8_t *buf, size_t n, struct bp_insn *insn)
{
	(void)addr;
	(void)buf;
	(void)n;
	memset(insn, 0, sizeof(*insn));
	return unsupported("decoding an instruction");
}

int bp_arch_relocate(const struct bp_insn *insn, uint64_t addr, uint64_t slot,
		     uint8_t *code, unsigned *resume_off)
{
	(void)insn;
	(void)addr;
	(void)slot;
	(void)code;
	(void)resume_off;
	return unsupported("relocating an instruction");
}

int arch_bp_emulate(const struct bp_insn *insn, uint64_t addr, arch_regs_t *regs,
		    arch_mem_write_fn write, void *ctx)
{
	(void)insn;
	(void)addr;
	(void)regs;
	(void)write;
	(void)ctx;
	return unsupported("running an instruction under a breakpoint");
}

uint64_t arch_caller_at_entry(const arch_regs_t *regs, arch_mem_read_fn read, void *ctx)
{
	(void)regs;
	(void)read;
	(void)ctx;
	return 0;
}

int arch_ret_hook(arch_regs_t *regs, uint64_t tramp, arch_mem_write_fn write, void *ctx)
{
	(void)regs;
	(void)tramp;
	(void)write;
	(void)ctx;
	return unsupported("hooking a function's return");
}

int arch_ret_hook_refused(pid_t pid)
{
	(void)pid;
	return 1;
}

/* detour-plan.h */

int arch_detour_plan(uint64_t func, const uint8_t *buf, size_t size, struct plan *p,
		     const char **why)
{
	(void)func;
	(void)buf;
	(void)size;
	memset(p, 0, sizeof(*p));
	*why = "not supported on this CPU";
	return -ENOTSUP;
}

size_t arch_detour_padded_size(uint64_t func, const uint8_t *buf, size_t got, size_t size)
{
	(void)func;
	(void)buf;
	(void)got;
	return size;
}

int arch_detour_relocate(struct plan *p, uint64_t at, uint8_t *code)
{
	(void)p;
	(void)at;
	(void)code;
	return unsupported("relocating a function's entry");
}

int arch_detour_moved_pc(const struct plan *p, uint64_t at, uint64_t pc, uint64_t *to)
{
	(void)p;
	(void)at;
	(void)pc;
	(void)to;
	return 0;
}

int arch_detour_in_reach(const struct plan *p, uint64_t slot)
{
	(void)p;
	(void)slot;
	return 0;
}

void arch_detour_glue(uint64_t base, uint64_t far, uint64_t s, int result, int sync,
		      uint32_t desc, uint8_t *code)
{
	(void)base;
	(void)far;
	(void)s;
	(void)result;
	(void)sync;
	(void)desc;
	(void)code;
}

void arch_detour_patch(uint8_t *patch, uint64_t site, uint64_t to)
{
	(void)patch;
	(void)site;
	(void)to;
}

size_t arch_landing_pad(const uint8_t *buf, size_t n)
{
	(void)buf;
	(void)n;
	return 0;
}

uint64_t arch_patched_target(const uint8_t *buf, size_t n, uint64_t addr, size_t *off)
{
	(void)buf;
	(void)n;
	(void)addr;
	(void)off;
	return 0;
}

/* stub-frame.h */

int arch_stub_frame(const uint8_t *slot, uint64_t off, struct arch_stub_frame *f)
{
	(void)slot;
	(void)off;
	memset(f, 0, sizeof(*f));
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

/* go.h: no Go runtime is understood. */
int arch_go_decode_systemstack(const uint8_t *code, size_t len, struct arch_go_offsets *off)
{
	(void)code;
	(void)len;
	(void)off;
	return -1;
}

uint64_t arch_go_switch_return(const uint8_t *code, size_t len, uint64_t start)
{
	(void)code;
	(void)len;
	(void)start;
	return 0;
}

int arch_go_running_g(const arch_regs_t *r, const struct arch_go_offsets *off,
		      arch_go_read_fn *read, void *ctx, uint64_t *g)
{
	(void)r;
	(void)off;
	(void)read;
	(void)ctx;
	(void)g;
	return -1;
}

int arch_go_switch_caller(const struct arch_go_sched *sched, arch_go_read_fn *read, void *ctx,
			  uint64_t *ra, uint64_t *sp)
{
	(void)sched;
	(void)read;
	(void)ctx;
	(void)ra;
	(void)sp;
	return -1;
}

int arch_go_morestack_caller(const struct arch_go_sched *sched, arch_go_read_fn *read,
			     void *ctx, uint64_t *ra, uint64_t *sp)
{
	return arch_go_switch_caller(sched, read, ctx, ra, sp);
}

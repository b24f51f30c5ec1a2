/*
 * bp.c (none) - breakpoints (bp_arch.h): none, each function failing
 * with arch_unsupported()'s one line, arch_bp_supported() 0.  Built for
 * the stub arch, and for a CPU whose memtap does not put breakpoints
 * yet (Makefile.am).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "unsupported.h"

int bp_arch_decode(uint64_t addr, const uint8_t *buf, size_t n, struct bp_insn *insn)
{
	(void)addr;
	(void)buf;
	(void)n;
	memset(insn, 0, sizeof(*insn));
	return arch_unsupported("decoding an instruction");
}

int bp_arch_relocate(const struct bp_insn *insn, uint64_t addr, uint64_t slot,
		     uint8_t *code, unsigned *resume_off)
{
	(void)insn;
	(void)addr;
	(void)slot;
	(void)code;
	(void)resume_off;
	return arch_unsupported("relocating an instruction");
}

int arch_bp_emulate(const struct bp_insn *insn, uint64_t addr, arch_regs_t *regs,
		    arch_mem_write_fn write, void *ctx)
{
	(void)insn;
	(void)addr;
	(void)regs;
	(void)write;
	(void)ctx;
	return arch_unsupported("running an instruction under a breakpoint");
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
	return arch_unsupported("hooking a function's return");
}

int arch_ret_hook_refused(pid_t pid)
{
	(void)pid;
	return 1;
}

int arch_bp_supported(void)
{
	return 0;
}

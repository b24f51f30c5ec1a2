/*
 * tramp.c (none) - the remote-syscall trampoline (arch.h): none, so
 * that memtap injects a syscall from a syscall instruction of the
 * process's own, or not at all.  Built for the stub arch, and for a CPU
 * whose folder has no tramp.c yet.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "arch/arch.h"

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

/*
 * syscalls.c (aarch64) - the memory syscalls' numbers in arm64's one
 * ABI (the generic table, <asm/unistd.h>) and the audit arch the seccomp
 * filter checks.
 */
#include "config.h"

#include <stddef.h>
#include <asm/unistd.h>

#include "arch/arch.h"

/* No old_mmap, mmap2, open or fork: the generic ABI has none. */
const struct arch_syscall arch_syscalls[] = {
	{ ABI_AARCH64, __NR_mmap, SC_MMAP, "mmap" },
	{ ABI_AARCH64, __NR_munmap, SC_MUNMAP, "munmap" },
	{ ABI_AARCH64, __NR_brk, SC_BRK, "brk" },
	{ ABI_AARCH64, __NR_mremap, SC_MREMAP, "mremap" },
	{ ABI_AARCH64, __NR_mprotect, SC_MPROTECT, "mprotect" },
	{ ABI_AARCH64, __NR_madvise, SC_MADVISE, "madvise" },
	{ ABI_AARCH64, __NR_execve, SC_EXECVE, "execve" },
	{ ABI_AARCH64, __NR_execveat, SC_EXECVE, "execveat" },
	{ ABI_AARCH64, __NR_seccomp, SC_SECCOMP, "seccomp" },
	{ ABI_AARCH64, __NR_prctl, SC_PRCTL, "prctl" },
};

const size_t arch_nsyscalls = sizeof(arch_syscalls) / sizeof(arch_syscalls[0]);

const struct arch_audit arch_audits[] = {
	{ AUDIT_ARCH_AARCH64, 1u << ABI_AARCH64 },
};

const size_t arch_naudits = sizeof(arch_audits) / sizeof(arch_audits[0]);

/*
 * `svc #0` is one aligned word: only offsets that are multiples of 4
 * are looked at (buf starts at a mapping's start, so 4-aligned there).
 */
long arch_find_syscall_insn(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i + ARCH_SYSCALL_INSN_LEN <= len; i += 4) {
		uint32_t w = (uint32_t)buf[i] | (uint32_t)buf[i + 1] << 8 |
			     (uint32_t)buf[i + 2] << 16 | (uint32_t)buf[i + 3] << 24;

		if (w == ARCH_SVC0)
			return (long)i;
	}
	return -1;
}

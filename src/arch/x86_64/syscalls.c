/*
 * syscalls.c (x86_64) - the memory syscalls memtap traces, by number,
 * in each ABI a 64-bit process can reach: x86-64, x32 (the x32 bit set
 * in the number) and i386 (int $0x80, and 32-bit processes); and the
 * audit arches seccomp_data.arch names them by.  What each call means
 * to the tracer (its event kind) is trace/'s, by its sc_id.
 *
 * The order of arch_syscalls[] is the seccomp filter's: the filter
 * returns an entry's index (trace/seccomp.c), so an entry moved changes
 * the filter's bytes (tests/unit/seccomp-unit.test).
 */
#include "config.h"

#include <stddef.h>

#include "arch/arch.h"

#define X32(n) ((long)(X32_SYSCALL_BIT | (n)))

const struct arch_syscall arch_syscalls[] = {
	{ ABI_X86_64, 9, SC_MMAP, "mmap" },
	{ ABI_X86_64, 11, SC_MUNMAP, "munmap" },
	{ ABI_X86_64, 12, SC_BRK, "brk" },
	{ ABI_X86_64, 25, SC_MREMAP, "mremap" },
	{ ABI_X86_64, 10, SC_MPROTECT, "mprotect" },
	{ ABI_X86_64, 28, SC_MADVISE, "madvise" },
	{ ABI_X86_64, 59, SC_EXECVE, "execve" },
	{ ABI_X86_64, 322, SC_EXECVE, "execveat" },
	{ ABI_X86_64, 317, SC_SECCOMP, "seccomp" },
	{ ABI_X86_64, 157, SC_PRCTL, "prctl" },
	{ ABI_X32, X32(9), SC_MMAP, "mmap" },
	{ ABI_X32, X32(11), SC_MUNMAP, "munmap" },
	{ ABI_X32, X32(12), SC_BRK, "brk" },
	{ ABI_X32, X32(25), SC_MREMAP, "mremap" },
	{ ABI_X32, X32(10), SC_MPROTECT, "mprotect" },
	{ ABI_X32, X32(28), SC_MADVISE, "madvise" },
	{ ABI_X32, X32(520), SC_EXECVE, "execve" },
	{ ABI_X32, X32(545), SC_EXECVE, "execveat" },
	{ ABI_X32, X32(317), SC_SECCOMP, "seccomp" },
	{ ABI_X32, X32(157), SC_PRCTL, "prctl" },
	{ ABI_I386, 45, SC_BRK, "brk" },
	{ ABI_I386, 90, SC_OLD_MMAP, "old_mmap" },
	{ ABI_I386, 91, SC_MUNMAP, "munmap" },
	{ ABI_I386, 163, SC_MREMAP, "mremap" },
	{ ABI_I386, 192, SC_MMAP2, "mmap2" },
	{ ABI_I386, 125, SC_MPROTECT, "mprotect" },
	{ ABI_I386, 219, SC_MADVISE, "madvise" },
	{ ABI_I386, 11, SC_EXECVE, "execve" },
	{ ABI_I386, 358, SC_EXECVE, "execveat" },
	{ ABI_I386, 354, SC_SECCOMP, "seccomp" },
	{ ABI_I386, 172, SC_PRCTL, "prctl" },
};

const size_t arch_nsyscalls = sizeof(arch_syscalls) / sizeof(arch_syscalls[0]);

/* x86-64 and x32 share an audit arch (x32 by the bit in the number); i386 has its own. */
const struct arch_audit arch_audits[] = {
	{ AUDIT_ARCH_X86_64, (1u << ABI_X86_64) | (1u << ABI_X32) },
	{ AUDIT_ARCH_I386, 1u << ABI_I386 },
};

const size_t arch_naudits = sizeof(arch_audits) / sizeof(arch_audits[0]);

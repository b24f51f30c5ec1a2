/*
 * syscall_table.c (x86_64) - the memory syscalls memtap traces, in each
 * ABI a 64-bit process can reach: x86-64, x32 and i386 (int $0x80, and
 * 32-bit processes).  mprotect is watched too when it makes memory
 * executable (a code mapping notice, see syscalls.c), whatever -e says.
 * execve and execveat make no event: with allocator probes or a fault
 * kind, they stop at their entry so that the rings are read while the
 * old image is there.  seccomp and prctl make no event either: with
 * probes they stop, as a filter of the command's own may follow (prctl
 * only for PR_SET_SECCOMP, seccomp.c).
 */
#include "config.h"

#include <stddef.h>

#include "trace/memtap.h"

#define X32(n) ((long)(X32_SYSCALL_BIT | (n)))

const struct syscall_def syscall_defs[] = {
	{ ABI_X86_64, 9, SC_MMAP, EV_MMAP, "mmap" },
	{ ABI_X86_64, 11, SC_MUNMAP, EV_MUNMAP, "munmap" },
	{ ABI_X86_64, 12, SC_BRK, EV_BRK, "brk" },
	{ ABI_X86_64, 25, SC_MREMAP, EV_MREMAP, "mremap" },
	{ ABI_X86_64, 10, SC_MPROTECT, EV_MPROTECT, "mprotect" },
	{ ABI_X86_64, 28, SC_MADVISE, EV_MADVISE, "madvise" },
	{ ABI_X86_64, 59, SC_EXECVE, EV_NKINDS, "execve" },
	{ ABI_X86_64, 322, SC_EXECVE, EV_NKINDS, "execveat" },
	{ ABI_X86_64, 317, SC_SECCOMP, EV_NKINDS, "seccomp" },
	{ ABI_X86_64, 157, SC_PRCTL, EV_NKINDS, "prctl" },
	{ ABI_X32, X32(9), SC_MMAP, EV_MMAP, "mmap" },
	{ ABI_X32, X32(11), SC_MUNMAP, EV_MUNMAP, "munmap" },
	{ ABI_X32, X32(12), SC_BRK, EV_BRK, "brk" },
	{ ABI_X32, X32(25), SC_MREMAP, EV_MREMAP, "mremap" },
	{ ABI_X32, X32(10), SC_MPROTECT, EV_MPROTECT, "mprotect" },
	{ ABI_X32, X32(28), SC_MADVISE, EV_MADVISE, "madvise" },
	{ ABI_X32, X32(520), SC_EXECVE, EV_NKINDS, "execve" },
	{ ABI_X32, X32(545), SC_EXECVE, EV_NKINDS, "execveat" },
	{ ABI_X32, X32(317), SC_SECCOMP, EV_NKINDS, "seccomp" },
	{ ABI_X32, X32(157), SC_PRCTL, EV_NKINDS, "prctl" },
	{ ABI_I386, 45, SC_BRK, EV_BRK, "brk" },
	{ ABI_I386, 90, SC_OLD_MMAP, EV_MMAP, "old_mmap" },
	{ ABI_I386, 91, SC_MUNMAP, EV_MUNMAP, "munmap" },
	{ ABI_I386, 163, SC_MREMAP, EV_MREMAP, "mremap" },
	{ ABI_I386, 192, SC_MMAP2, EV_MMAP, "mmap2" },
	{ ABI_I386, 125, SC_MPROTECT, EV_MPROTECT, "mprotect" },
	{ ABI_I386, 219, SC_MADVISE, EV_MADVISE, "madvise" },
	{ ABI_I386, 11, SC_EXECVE, EV_NKINDS, "execve" },
	{ ABI_I386, 358, SC_EXECVE, EV_NKINDS, "execveat" },
	{ ABI_I386, 354, SC_SECCOMP, EV_NKINDS, "seccomp" },
	{ ABI_I386, 172, SC_PRCTL, EV_NKINDS, "prctl" },
};

const size_t syscall_ndefs = sizeof(syscall_defs) / sizeof(syscall_defs[0]);

const struct syscall_def *syscall_lookup(enum abi abi, long nr)
{
	for (size_t i = 0; i < syscall_ndefs; i++)
		if (syscall_defs[i].abi == abi && syscall_defs[i].nr == nr)
			return &syscall_defs[i];
	return NULL;
}

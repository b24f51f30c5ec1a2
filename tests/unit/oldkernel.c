/*
 * oldkernel.c - run a command as on an older kernel: a seccomp filter
 * makes the calls that kernel lacks fail with the errno it returns.
 *
 *   oldkernel VERSION COMMAND [ARGS...]
 *
 * VERSION 3.10 (RHEL/CentOS 7):
 *   process_vm_readv, process_vm_writev  ENOSYS (as without
 *                                        CONFIG_CROSS_MEMORY_ATTACH)
 *   memfd_create (3.17)                  ENOSYS
 *   ptrace requests from 0x420a on       EIO, as for any request the
 *     (GETSIGMASK and SETSIGMASK 3.11,   kernel does not know
 *     SECCOMP_GET_FILTER 4.4,
 *     GET_SYSCALL_INFO 5.3, ...)
 * VERSION 3.7 also:
 *   PTRACE_SEIZE or PTRACE_SETOPTIONS    EINVAL, as for an unknown option
 *     with PTRACE_O_EXITKILL (3.8)
 *
 * What a filter cannot do is left out: an old kernel ignores an unknown
 * mmap flag (MAP_FIXED_NOREPLACE, 4.17) and maps elsewhere, which a
 * filter cannot imitate.  The filter is inherited by every child of the
 * command (the processes memtap launches too), and a process under a
 * filter cannot read another's filters (PTRACE_SECCOMP_GET_FILTER says
 * EACCES, or here EIO).  Exit status 99 when the filter cannot be set.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | (e))
#define PTRACE_NEW_FIRST 0x420a	/* PTRACE_GETSIGMASK: the first after 3.10 */
#define PTRACE_NEW_LAST 0x42ff
#define EXITKILL (1u << 20)

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		/* 2 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		/* 5 */ BPF_STMT(BPF_RET | BPF_K, RET_ERRNO(ENOSYS)),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 0, 1),
		/* 7 */ BPF_STMT(BPF_RET | BPF_K, RET_ERRNO(ENOSYS)),
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
		/* 9 */ BPF_STMT(BPF_RET | BPF_K, RET_ERRNO(ENOSYS)),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 1, 0),
		/* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 12 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		/* 13 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, PTRACE_NEW_FIRST, 0, 2),
		/* 14 */ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, PTRACE_NEW_LAST, 1, 0),
		/* 15 */ BPF_STMT(BPF_RET | BPF_K, RET_ERRNO(EIO)),
		/* 16: 3.10 ends here: allow; 3.7 goes on */
		/* 16 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 17 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x4206 /* SEIZE */, 1, 0),
		/* 18 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x4200 /* SETOPTIONS */, 0, 3),
		/* 19 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(3)),
		/* 20 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, EXITKILL, 0, 1),
		/* 21 */ BPF_STMT(BPF_RET | BPF_K, RET_ERRNO(EINVAL)),
		/* 22 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sock_fprog *p = &prog;

	if (argc < 3 || (strcmp(argv[1], "3.10") && strcmp(argv[1], "3.7"))) {
		fprintf(stderr, "usage: oldkernel 3.10|3.7 COMMAND [ARGS...]\n");
		return 99;
	}
	if (!strcmp(argv[1], "3.7")) {
		/* instruction 16 goes on to the EXITKILL checks: drop it */
		memmove(&f[16], &f[17], (prog.len - 17) * sizeof(f[0]));
		prog.len--;
	} else {
		prog.len = 17;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p, 0, 0) < 0) {
		fprintf(stderr, "oldkernel: cannot install the filter: %s\n", strerror(errno));
		return 99;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "oldkernel: cannot run '%s': %s\n", argv[2], strerror(errno));
	return 127;
}

/*
 * oldkernel.c - run a command as on an older kernel: a seccomp filter
 * makes the calls that kernel lacks fail with the errno it returns.
 *
 *   oldkernel [-t] VERSION COMMAND [ARGS...]
 *
 * VERSION 3.10 (RHEL/CentOS 7, whose kernels have process_vm_readv):
 *   memfd_create (3.17)                  ENOSYS
 *   ptrace requests from 0x420a on       EIO, as for any request the
 *     (GETSIGMASK and SETSIGMASK 3.11,   kernel does not know
 *     SECCOMP_GET_FILTER 4.4,
 *     GET_SYSCALL_INFO 5.3, ...)
 * VERSION 3.7 also:
 *   process_vm_readv, process_vm_writev  ENOSYS (as a kernel built
 *                                        without CONFIG_CROSS_MEMORY_ATTACH)
 *   PTRACE_SEIZE or PTRACE_SETOPTIONS    EINVAL, as for an unknown option
 *     with PTRACE_O_EXITKILL (3.8)
 *
 * What a filter cannot do is left out: an old kernel ignores an unknown
 * mmap flag (MAP_FIXED_NOREPLACE, 4.17) and maps elsewhere, which a
 * filter cannot imitate; nor can it hide the Seccomp_filters line of
 * /proc/PID/status (5.9): -t does both.  The filter is inherited by every child of
 * the command (the processes memtap launches too), and a process under
 * a filter cannot read another's filters (PTRACE_SECCOMP_GET_FILTER
 * says EACCES, or here EIO).
 *
 * With -t the filter is not installed: the command runs traced
 * (PTRACE_SYSCALL), each of its syscalls judged by the same filter here
 * (src/linux/bpf.c) and, where it says so, skipped and failed with its
 * errno; MAP_FIXED_NOREPLACE is taken out of its mmap flags, as an old
 * kernel ignores it (the address is then a hint); and the Seccomp_filters
 * line (5.9) out of what it reads of a /proc/PID/status.  Its children are not traced and inherit nothing, as on the
 * old kernel; the signals this process gets (SIGINT, SIGTERM...) are
 * passed on to the command.  The command's own threads are not judged.
 * Exit status 99 when the filter cannot be set (or the command traced),
 * else the command's.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "linux/bpf.h"

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | (e))
#define PTRACE_NEW_FIRST 0x420a	/* PTRACE_GETSIGMASK: the first after 3.10 */
#define PTRACE_NEW_LAST 0x42ff
#define EXITKILL (1u << 20)
#define MAP_FIXED_NOREPLACE 0x100000	/* 4.17: older kernels ignore it */

static pid_t command;
static unsigned char status_fd[1024];	/* the command's fds of /proc/.../status */

/* Is the command's string at addr a /proc/PID/status (of a thread too)? */
static int is_status(unsigned long long addr)
{
	char path[128] = "";
	struct iovec local = { path, sizeof(path) - 1 };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(path) - 1 };
	size_t n;

	if (process_vm_readv(command, &local, 1, &remote, 1, 0) <= 0)
		return 0;
	n = strlen(path);
	return !strncmp(path, "/proc/", 6) && n > 7 && !strcmp(path + n - 7, "/status");
}

/*
 * What the command read of a status file: its Seccomp_filters: line
 * (Linux 5.9) taken out.  The new length.
 */
static long long hide_lines(unsigned long long addr, long long len)
{
	static char buf[65536];
	struct iovec local = { buf, (size_t)len };
	struct iovec remote = { (void *)(uintptr_t)addr, (size_t)len };
	char *line, *end;

	if (len > (long long)sizeof(buf) || process_vm_readv(command, &local, 1, &remote, 1, 0) != len)
		return len;
	end = buf + len;
	for (line = buf; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *next = nl ? nl + 1 : end;

		if ((size_t)(end - line) > 16 && !memcmp(line, "Seccomp_filters:", 16)) {
			memmove(line, next, (size_t)(end - next));
			end -= next - line;
		} else {
			line = next;
		}
	}
	local.iov_len = remote.iov_len = (size_t)(end - buf);
	if (end - buf < len && process_vm_writev(command, &local, 1, &remote, 1, 0) == end - buf)
		return end - buf;
	return len;
}

/* At a syscall's exit (e: its registers at entry): what /proc shows. */
static void imitate_proc(const struct user_regs_struct *e, struct user_regs_struct *r)
{
	long long ret = (long long)r->rax;

	if (r->cs == 0x23)
		return;
	if ((e->orig_rax == SYS_openat || e->orig_rax == SYS_open) && ret >= 0 && ret < 1024)
		status_fd[ret] = is_status(e->orig_rax == SYS_open ? e->rdi : e->rsi);
	else if (e->orig_rax == SYS_close && e->rdi < 1024)
		status_fd[e->rdi] = 0;
	else if (e->orig_rax == SYS_read && e->rdi < 1024 && status_fd[e->rdi] && ret > 0 &&
		 (r->rax = (unsigned long long)hide_lines(e->rsi, ret)) != (unsigned long long)ret)
		ptrace(PTRACE_SETREGS, command, 0L, r);
}

static void pass_on(int sig)
{
	kill(command, sig);
}

/* The filter's verdict on the syscall at this entry stop: 0, or an errno. */
static int judge(const struct sock_filter *f, size_t len, const struct user_regs_struct *r)
{
	struct seccomp_data d = {
		.nr = (int)r->orig_rax,
		.arch = r->cs == 0x23 ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64,
		.instruction_pointer = r->rip,
		.args = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 },
	};
	uint32_t ret;

	if (bpf_run(f, len, &d, &ret) < 0 || (ret & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO)
		return 0;
	return (int)(ret & SECCOMP_RET_DATA);
}

/* -t: trace the command and fail what the filter fails. */
static int run_traced(const struct sock_filter *f, size_t len, char **argv)
{
	static const int passed[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa = { .sa_handler = pass_on, .sa_flags = SA_RESTART };
	struct user_regs_struct entry = { 0 };
	int status, in_syscall = 0, err = 0;

	command = fork();
	if (command < 0)
		return 99;
	if (command == 0) {
		/* a sanitized memtap: LeakSanitizer cannot run under ptrace */
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[1024];

		snprintf(opts, sizeof(opts), "%s%sdetect_leaks=0", asan ? asan : "",
			 asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
		ptrace(PTRACE_TRACEME, 0, 0L, 0L);
		raise(SIGSTOP);
		execvp(argv[0], argv);
		fprintf(stderr, "oldkernel: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		sigaction(passed[i], &sa, NULL);
	if (waitpid(command, &status, 0) != command || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SETOPTIONS, command, 0L,
		   (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0) {
		fprintf(stderr, "oldkernel: cannot trace the command: %s\n", strerror(errno));
		kill(command, SIGKILL);
		return 99;
	}
	for (int sig = 0;;) {
		struct user_regs_struct r;

		if (ptrace(PTRACE_SYSCALL, command, 0L, (void *)(long)sig) < 0 && errno != ESRCH)
			return 99;
		while (waitpid(command, &status, __WALL) < 0)
			if (errno != EINTR)
				return 99;
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		if (WIFSIGNALED(status)) {
			signal(WTERMSIG(status), SIG_DFL);
			raise(WTERMSIG(status));
			return 128 + WTERMSIG(status);
		}
		sig = WSTOPSIG(status);		/* a signal: passed on */
		if (sig == SIGTRAP && status >> 16) {
			sig = 0;		/* the exec event */
		} else if (sig == (SIGTRAP | 0x80)) {
			sig = 0;
			if (ptrace(PTRACE_GETREGS, command, 0L, &r) < 0)
				continue;
			in_syscall = !in_syscall;
			if (in_syscall)
				entry = r;
			else if (!err)
				imitate_proc(&entry, &r);
			if (in_syscall && (err = judge(f, len, &r)) != 0) {
				r.orig_rax = (unsigned long long)-1;	/* skipped */
				ptrace(PTRACE_SETREGS, command, 0L, &r);
			} else if (in_syscall && r.cs != 0x23 && r.orig_rax == SYS_mmap &&
				   (r.r10 & MAP_FIXED_NOREPLACE)) {
				r.r10 &= ~(unsigned long long)MAP_FIXED_NOREPLACE;	/* unknown */
				ptrace(PTRACE_SETREGS, command, 0L, &r);
			} else if (!in_syscall && err) {
				r.rax = (unsigned long long)-err;
				ptrace(PTRACE_SETREGS, command, 0L, &r);
				err = 0;
			}
		}
	}
}

int main(int argc, char **argv)
{
	int traced = argc > 1 && !strcmp(argv[1], "-t");
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

	argv += traced;
	argc -= traced;
	if (argc < 3 || (strcmp(argv[1], "3.10") && strcmp(argv[1], "3.7"))) {
		fprintf(stderr, "usage: oldkernel [-t] 3.10|3.7 COMMAND [ARGS...]\n");
		return 99;
	}
	if (!strcmp(argv[1], "3.7")) {
		/* instruction 16 goes on to the EXITKILL checks: drop it */
		memmove(&f[16], &f[17], (prog.len - 17) * sizeof(f[0]));
		prog.len--;
	} else {
		prog.len = 17;
		/* cross memory attach: instructions 4 and 6 match no syscall */
		f[4].k = f[6].k = (uint32_t)-1;
	}
	if (traced)
		return run_traced(f, prog.len, argv + 2);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p, 0, 0) < 0) {
		fprintf(stderr, "oldkernel: cannot install the filter: %s\n", strerror(errno));
		return 99;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "oldkernel: cannot run '%s': %s\n", argv[2], strerror(errno));
	return 127;
}

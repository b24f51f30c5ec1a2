/*
 * tests/arm64/ptrace-probe.c - the kernel's arm64 ptrace facts that
 * memtap's port depends on, checked on a child of its own
 * (tests/arm64-guest.test, built static for aarch64).
 *
 * Prints one line per fact, "ok NAME" or "FAIL NAME: why":
 *   getregset    PTRACE_GETREGSET NT_PRSTATUS gives the whole
 *                user_pt_regs, x0 as the child set it, and SETREGSET
 *                moves its pc
 *   brk-pc       a BRK #0 in the child's code stops it with SIGTRAP,
 *                pc AT the BRK (x86-64: after the int3)
 *   brk-mem      a BRK #0 written over an instruction through
 *                /proc/PID/mem traps there, and the instruction put
 *                back the same way runs (the undo)
 *   seccomp      a seccomp filter's SECCOMP_RET_TRACE for getppid
 *                stops the tracee (PTRACE_EVENT_SECCOMP, the filter's
 *                data, x8 and PTRACE_GET_SYSCALL_INFO's nr = 172)
 * then what the CPU has: "pac yes|no" (HWCAP_PACA and
 * NT_ARM_PAC_MASK), "bti yes|no" (HWCAP2_BTI).  Exit status 0 when
 * every fact holds.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <asm/ptrace.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HWCAP2_BTI
#define HWCAP2_BTI (1 << 17)
#endif
#ifndef NT_ARM_PAC_MASK
#define NT_ARM_PAC_MASK 0x406
#endif

#define BRK0 0xd4200000u

/* x0 = 0x1234, then a BRK #0 at probe_brk_site; returns x0 */
void probe_brk(void);
extern const char probe_brk_site[];
/* nop at probe_patch_site, x0 = 0x4321; memtap's breakpoint goes over the nop */
long probe_patch(void);
extern const char probe_patch_site[];
__asm__(".text\n"
	".global probe_brk, probe_brk_site, probe_patch, probe_patch_site\n"
	".p2align 2\n"
	"probe_brk:\n"
	"	movz x0, #0x1234\n"
	"probe_brk_site:\n"
	"	brk #0\n"
	"	ret\n"
	"probe_patch:\n"
	"probe_patch_site:\n"
	"	nop\n"
	"	movz x0, #0x4321\n"
	"	ret\n");

static int failed;

static void verdict(const char *name, const char *why)
{
	if (why) {
		printf("FAIL %s: %s\n", name, why);
		failed = 1;
	} else {
		printf("ok %s\n", name);
	}
	fflush(stdout);
}

static int get_regs(pid_t pid, struct user_pt_regs *regs)
{
	struct iovec iov = { regs, sizeof(*regs) };

	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) != 0)
		return -1;
	return iov.iov_len == sizeof(*regs) ? 0 : -1;
}

static int set_regs(pid_t pid, struct user_pt_regs *regs)
{
	struct iovec iov = { regs, sizeof(*regs) };

	return ptrace(PTRACE_SETREGSET, pid, (void *)NT_PRSTATUS, &iov);
}

/* a traced child stopped by SIGSTOP; it then runs fn and exits with its status */
static pid_t start_child(int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(127);
		raise(SIGSTOP);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP) {
		kill(pid, SIGKILL);
		return -1;
	}
	return pid;
}

/* resume pid and wait for its end: NULL when it exited with want */
static const char *finish(pid_t pid, int want)
{
	static char why[80];
	int status;

	if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return "resume failed";
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == want)
		return NULL;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(why, sizeof(why), "child ended with status 0x%x, not exit %d", status, want);
	return why;
}

static int run_brk(void)
{
	probe_brk();
	return 0;
}

static int run_patch(void)
{
	return probe_patch() == 0x4321 ? 0 : 1;
}

/* getregset and brk-pc */
static void check_brk(void)
{
	struct user_pt_regs regs;
	const char *why = NULL, *pcwhy = NULL;
	static char buf[120];
	int status;
	pid_t pid = start_child(run_brk);

	if (pid < 0) {
		verdict("getregset", "no traced child");
		verdict("brk-pc", "no traced child");
		return;
	}
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
		why = pcwhy = "no SIGTRAP stop at the BRK";
	} else if (get_regs(pid, &regs) != 0) {
		why = "PTRACE_GETREGSET NT_PRSTATUS failed or was short";
		pcwhy = "no registers";
	} else {
		if (regs.regs[0] != 0x1234)
			why = "x0 is not 0x1234";
		if (regs.pc != (uintptr_t)probe_brk_site) {
			snprintf(buf, sizeof(buf), "pc %#llx, the BRK is at %p",
				 (unsigned long long)regs.pc, (const void *)probe_brk_site);
			pcwhy = buf;
		}
		regs.pc = (uintptr_t)probe_brk_site + 4;
		if (!why && set_regs(pid, &regs) != 0)
			why = "PTRACE_SETREGSET NT_PRSTATUS failed";
	}
	if (!why && !pcwhy)
		why = finish(pid, 0);
	else
		kill(pid, SIGKILL), waitpid(pid, NULL, 0);
	verdict("getregset", why);
	verdict("brk-pc", pcwhy);
}

static int mem_rw(pid_t pid, uintptr_t addr, uint32_t *insn, int write)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -1;
	n = write ? pwrite(fd, insn, 4, (off_t)addr) : pread(fd, insn, 4, (off_t)addr);
	close(fd);
	return n == 4 ? 0 : -1;
}

/* brk-mem */
static void check_brk_mem(void)
{
	struct user_pt_regs regs;
	uintptr_t site = (uintptr_t)probe_patch_site;
	uint32_t orig, brk = BRK0, back;
	const char *why = NULL;
	int status;
	pid_t pid = start_child(run_patch);

	if (pid < 0) {
		verdict("brk-mem", "no traced child");
		return;
	}
	if (mem_rw(pid, site, &orig, 0) != 0 || mem_rw(pid, site, &brk, 1) != 0)
		why = "writing the BRK through /proc/PID/mem failed";
	else if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) != pid ||
		 !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
		why = "no SIGTRAP at the written BRK";
	else if (get_regs(pid, &regs) != 0 || regs.pc != site)
		why = "the stop's pc is not the written BRK's";
	else if (mem_rw(pid, site, &orig, 1) != 0 || mem_rw(pid, site, &back, 0) != 0 || back != orig)
		why = "putting the instruction back through /proc/PID/mem failed";
	if (!why)
		why = finish(pid, 0);
	else
		kill(pid, SIGKILL), waitpid(pid, NULL, 0);
	verdict("brk-mem", why);
}

static int run_seccomp(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | 0x42),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return 2;
	return syscall(SYS_getppid) > 0 ? 0 : 3;
}

/* seccomp */
static void check_seccomp(void)
{
	struct user_pt_regs regs;
	struct __ptrace_syscall_info info;
	unsigned long msg = 0;
	const char *why = NULL;
	int status;
	pid_t pid = start_child(run_seccomp);

	if (pid < 0) {
		verdict("seccomp", "no traced child");
		return;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_TRACESECCOMP) != 0)
		why = "PTRACE_O_TRACESECCOMP failed";
	else if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || waitpid(pid, &status, 0) != pid ||
		 !WIFSTOPPED(status) || status >> 8 != (SIGTRAP | PTRACE_EVENT_SECCOMP << 8))
		why = "no PTRACE_EVENT_SECCOMP stop";
	else if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &msg) != 0 || msg != 0x42)
		why = "the event's message is not the filter's data 0x42";
	else if (get_regs(pid, &regs) != 0 || regs.regs[8] != __NR_getppid)
		why = "x8 is not getppid's number";
	else if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) <= 0 ||
		 info.op != PTRACE_SYSCALL_INFO_SECCOMP || info.seccomp.nr != __NR_getppid ||
		 info.arch != AUDIT_ARCH_AARCH64)
		why = "PTRACE_GET_SYSCALL_INFO does not say seccomp, aarch64, getppid";
	if (!why)
		why = finish(pid, 0);
	else
		kill(pid, SIGKILL), waitpid(pid, NULL, 0);
	verdict("seccomp", why);
}

/* pac: the hwcap, and the tracer's view of the mask memtap strips */
static void report_cpu(void)
{
	int hw_pac = !!(getauxval(AT_HWCAP) & HWCAP_PACA);
	int hw_bti = !!(getauxval(AT_HWCAP2) & HWCAP2_BTI);
	uint64_t mask[2] = { 0, 0 };
	struct iovec iov = { mask, sizeof(mask) };
	int status, regset = 0;
	pid_t pid = start_child(run_brk);

	if (pid > 0) {
		regset = ptrace(PTRACE_GETREGSET, pid, (void *)NT_ARM_PAC_MASK, &iov) == 0 &&
			 mask[0] != 0;
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (hw_pac != regset) {
		printf("FAIL pac: HWCAP_PACA %d but NT_ARM_PAC_MASK %d\n", hw_pac, regset);
		failed = 1;
	}
	printf("pac %s\n", hw_pac ? "yes" : "no");
	printf("bti %s\n", hw_bti ? "yes" : "no");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	check_brk();
	check_brk_mem();
	check_seccomp();
	report_cpu();
	return failed;
}

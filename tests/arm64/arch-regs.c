/*
 * tests/arm64/arch-regs.c - the arm64 arch layer's registers and syscall
 * ABI (src/arch/aarch64/cpu.h, regs.c, syscalls.c) on a child of its
 * own, through the arch's functions only (tests/arm64-guest.test, built
 * static for aarch64 with those files).
 *
 * The child installs a seccomp filter made, as trace/seccomp.c makes
 * memtap's, from arch_audits[] and arch_syscalls[] (SECCOMP_RET_TRACE
 * with the entry's index), then makes, with raw syscalls:
 *   mmap(0, 0x3000, RW, PRIVATE|ANONYMOUS, -1, 0) = p
 *   mremap(p, 0x3000, 0x5000, MREMAP_MAYMOVE, 0) = q
 *   munmap(q, 0x5000)     skipped by the tracer: the number set to -1
 *   munmap(q, 0x5000)     run
 *   brk(0) twice          the first's result changed at its exit stop
 * and sends what each returned and its own TPIDR_EL0 (mrs) down a pipe.
 * The tracer checks, at each stop: the syscall number, the event's index
 * of arch_syscalls[], every argument, the pc after an `svc #0`
 * (arch_find_syscall_insn()), the entry/exit tell of a PTRACE_SYSCALL
 * stop (x7), the thread pointer, and the DWARF and saved registers'
 * views of the same registers.
 *
 * Prints "ok arch-regs" or "FAIL arch-regs: why", and what a skipped
 * syscall returns to the child ("skip x0 first-argument" or another
 * word); exit status 0 when every check holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"

#define LEN1 0x3000UL
#define LEN2 0x5000UL
#define BRK_SHIFT 0x10000UL

enum { R_TP, R_MMAP, R_MREMAP, R_SKIPPED, R_MUNMAP, R_BRK_CHANGED, R_BRK, R_N };

static int pfd[2];
static pid_t child_pid;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL arch-regs: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (child_pid > 0)
		kill(child_pid, SIGKILL), waitpid(child_pid, NULL, 0);
	exit(1);
}

static void child(void)
{
	struct sock_filter f[64];
	unsigned n = 0;
	long res[R_N];
	uint64_t tp;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0 || raise(SIGSTOP) != 0)
		_exit(2);
	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
	res[R_TP] = (long)tp;

	/* trace/seccomp.c's shape: per audit arch, its ABIs' numbers */
	for (size_t a = 0; a < arch_naudits; a++) {
		unsigned start;

		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, arch));
		start = n;
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      arch_audits[a].audit_arch, 0, 0);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, nr));
		for (size_t i = 0; i < arch_nsyscalls; i++) {
			if (!(arch_audits[a].abis & (1u << arch_syscalls[i].abi)))
				continue;
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (uint32_t)arch_syscalls[i].nr, 0, 1);
			f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
							      SECCOMP_RET_TRACE | (uint32_t)i);
		}
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		f[start].jf = (uint8_t)(n - start - 1);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { (unsigned short)n, f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		_exit(3);

	res[R_MMAP] = syscall(__NR_mmap, 0L, LEN1, (long)(PROT_READ | PROT_WRITE),
			      (long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
	res[R_MREMAP] = syscall(__NR_mremap, res[R_MMAP], LEN1, LEN2, (long)MREMAP_MAYMOVE, 0L);
	res[R_SKIPPED] = syscall(__NR_munmap, res[R_MREMAP], LEN2);
	/* still mapped, or this faults */
	((volatile char *)res[R_MREMAP])[LEN2 - 1] = 1;
	res[R_MUNMAP] = syscall(__NR_munmap, res[R_MREMAP], LEN2);
	res[R_BRK_CHANGED] = syscall(__NR_brk, 0L);
	res[R_BRK] = syscall(__NR_brk, 0L);
	if (write(pfd[1], res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(4);
	_exit(0);
}

enum stop { ST_SECCOMP, ST_SYSCALL };

/* The next stop of the child, which must be of kind want; its registers. */
static void next_stop(enum stop want, const char *what, arch_regs_t *r)
{
	int status, err;

	if (waitpid(child_pid, &status, 0) != child_pid)
		fail("%s: waitpid: %s", what, strerror(errno));
	if (!WIFSTOPPED(status))
		child_pid = 0, fail("%s: the child ended, status 0x%x", what, status);
	if (want == ST_SECCOMP && status >> 8 != (SIGTRAP | PTRACE_EVENT_SECCOMP << 8))
		fail("%s: want a seccomp stop, got status 0x%x", what, status);
	if (want == ST_SYSCALL && WSTOPSIG(status) != (SIGTRAP | 0x80))
		fail("%s: want a syscall stop, got status 0x%x", what, status);
	err = arch_regs_get(child_pid, r);
	if (err)
		fail("%s: arch_regs_get: %s", what, strerror(-err));
}

static void resume(int req)
{
	if (ptrace(req, child_pid, NULL, NULL) != 0)
		fail("resume: %s", strerror(errno));
}

static uint64_t tp_seen;

/*
 * A seccomp stop for the syscall nr with nargs arguments args: the
 * number, the event's index, PTRACE_GET_SYSCALL_INFO, the arguments,
 * the pc after an svc #0, the thread pointer, the other views.
 */
static void check_seccomp(const char *what, arch_regs_t *r, long nr,
			  const uint64_t *args, int nargs)
{
	struct __ptrace_syscall_info info;
	unsigned long msg;
	uint64_t dw[ARCH_DW_NREGS];
	long word;

	next_stop(ST_SECCOMP, what, r);
	if (arch_at_syscall_entry(r, ARCH_STOP_SECCOMP) != 1)
		fail("%s: arch_at_syscall_entry says no entry at a seccomp stop (x7 %#llx)", what,
		     (unsigned long long)r->r.regs[7]);
	if (arch_syscall_nr(r) != nr)
		fail("%s: arch_syscall_nr %ld, want %ld", what, arch_syscall_nr(r), nr);
	if (ptrace(PTRACE_GETEVENTMSG, child_pid, NULL, &msg) != 0 || msg >= arch_nsyscalls ||
	    arch_syscalls[msg].nr != nr || arch_syscall_lookup(ABI_AARCH64, nr) != &arch_syscalls[msg])
		fail("%s: the filter's data %lu is not the table's entry of %ld", what, msg, nr);
	memset(&info, 0, sizeof(info));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, child_pid, (void *)sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_SECCOMP || (long)info.seccomp.nr != nr ||
	    info.arch != ARCH_AUDIT_NATIVE || info.instruction_pointer != arch_pc(r) ||
	    info.stack_pointer != arch_sp(r))
		fail("%s: PTRACE_GET_SYSCALL_INFO disagrees with the registers", what);
	for (int i = 0; i < nargs; i++) {
		if (arch_syscall_arg(r, ABI_AARCH64, i) != args[i])
			fail("%s: argument %d is 0x%llx, want 0x%llx", what, i,
			     (unsigned long long)arch_syscall_arg(r, ABI_AARCH64, i),
			     (unsigned long long)args[i]);
		if (info.seccomp.args[i] != args[i])
			fail("%s: PTRACE_GET_SYSCALL_INFO's argument %d differs", what, i);
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, child_pid, (void *)(arch_pc(r) - ARCH_SYSCALL_INSN_LEN), NULL);
	if (errno || arch_find_syscall_insn((const uint8_t *)&word, sizeof(word)) != 0)
		fail("%s: no svc #0 right before the pc 0x%llx", what,
		     (unsigned long long)arch_pc(r));
	if (arch_abi_of_stop(r, NULL, NULL) != ARCH_ABI_NATIVE || arch_abi_bits(ABI_AARCH64) != 64)
		fail("%s: the stop's ABI", what);
	if (tp_seen == 0)
		tp_seen = arch_tp(r);
	if (arch_tp(r) != tp_seen || tp_seen == 0)
		fail("%s: arch_tp 0x%llx, earlier 0x%llx", what,
		     (unsigned long long)arch_tp(r), (unsigned long long)tp_seen);
	arch_dw_initial(r, dw);
	for (int i = 0; i < 31; i++)
		if (dw[i] != r->r.regs[i])
			fail("%s: DWARF register %d", what, i);
	if (dw[ARCH_DW_SP] != arch_sp(r) || dw[ARCH_DW_FP] != arch_fp(r) ||
	    ARCH_DW_RA != 30 || ARCH_DW_NREGS != 32)
		fail("%s: DWARF's sp, fp or lr", what);
	for (int i = 0; i < ARCH_NSAVED; i++)
		if (arch_saved_reg(r, i) != r->r.regs[19 + i] || arch_dw_saved[i] != 19 + i)
			fail("%s: saved register %d", what, i);
}

/* An exit stop of syscall nr (PTRACE_SYSCALL after its seccomp stop): its result. */
static int64_t check_exit(const char *what, arch_regs_t *r, long nr)
{
	next_stop(ST_SYSCALL, what, r);
	if (arch_at_syscall_entry(r, ARCH_STOP_SYSCALL) != 0)
		fail("%s: arch_at_syscall_entry says entry at an exit stop", what);
	if (arch_syscall_nr(r) != nr)
		fail("%s: arch_syscall_nr %ld at exit, want %ld", what, arch_syscall_nr(r), nr);
	return arch_syscall_ret(r, ABI_AARCH64);
}

static void check_table(void)
{
	static const struct { enum sc_id id; long nr; } want[] = {
		{ SC_BRK, 214 }, { SC_MUNMAP, 215 }, { SC_MREMAP, 216 },
		{ SC_MMAP, 222 }, { SC_MPROTECT, 226 }, { SC_MADVISE, 233 },
		{ SC_EXECVE, 221 }, { SC_SECCOMP, 277 }, { SC_PRCTL, 167 },
	};
	/* svc #0 at byte 1 (unaligned) and at byte 8 */
	const uint8_t buf[12] = { 0x00, 0x01, 0x00, 0x00, 0xd4, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0xd4 };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct arch_syscall *s = arch_syscall_by_id(ABI_AARCH64, want[i].id);

		if (!s || s->nr != want[i].nr)
			fail("table: syscall %d has number %ld, want %ld", want[i].id,
			     s ? s->nr : -1L, want[i].nr);
	}
	if (arch_syscall_by_id(ABI_AARCH64, SC_MMAP2) || arch_syscall_by_id(ABI_AARCH64, SC_OLD_MMAP) ||
	    arch_naudits != 1 || arch_audits[0].audit_arch != AUDIT_ARCH_AARCH64)
		fail("table: mmap2, old_mmap or the audit arches");
	if (arch_find_syscall_insn(buf, 12) != 8 || arch_find_syscall_insn(buf, 11) != -1 ||
	    arch_find_syscall_insn(buf, 8) != -1)
		fail("table: arch_find_syscall_insn");
}

int main(void)
{
	arch_regs_t r;
	long res[R_N];
	int64_t p, q, brk_real;
	int status, err;

	setvbuf(stdout, NULL, _IONBF, 0);
	check_table();
	if (pipe(pfd) != 0)
		fail("pipe: %s", strerror(errno));
	child_pid = fork();
	if (child_pid < 0)
		fail("fork: %s", strerror(errno));
	if (child_pid == 0)
		child();
	close(pfd[1]);
	if (waitpid(child_pid, &status, 0) != child_pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGSTOP)
		fail("the child did not stop");
	if (ptrace(PTRACE_SETOPTIONS, child_pid, NULL,
		   (void *)(PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) != 0)
		fail("PTRACE_SETOPTIONS: %s", strerror(errno));
	resume(PTRACE_CONT);

	/* the filter's own prctl comes before it is in force: mmap first */
	const uint64_t a_mmap[6] = { 0, LEN1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				     (uint64_t)-1, 0 };
	check_seccomp("mmap", &r, __NR_mmap, a_mmap, 6);
	resume(PTRACE_SYSCALL);
	p = check_exit("mmap's exit", &r, __NR_mmap);
	if (p <= 0 || p % 4096)
		fail("mmap returned 0x%llx", (unsigned long long)p);

	/* an entry stop: PTRACE_SYSCALL from the exit stop */
	const uint64_t a_mremap[5] = { (uint64_t)p, LEN1, LEN2, MREMAP_MAYMOVE, 0 };
	resume(PTRACE_SYSCALL);
	next_stop(ST_SYSCALL, "mremap's entry", &r);
	if (arch_at_syscall_entry(&r, ARCH_STOP_SYSCALL) != 1 || arch_syscall_nr(&r) != __NR_mremap)
		fail("mremap's entry: entry %d, number %ld",
		     arch_at_syscall_entry(&r, ARCH_STOP_SYSCALL),
		     arch_syscall_nr(&r));
	for (int i = 0; i < 5; i++)
		if (arch_syscall_arg(&r, ABI_AARCH64, i) != a_mremap[i])
			fail("mremap's entry: argument %d", i);
	resume(PTRACE_CONT);
	check_seccomp("mremap", &r, __NR_mremap, a_mremap, 5);
	resume(PTRACE_SYSCALL);
	q = check_exit("mremap's exit", &r, __NR_mremap);
	if (q <= 0 || q % 4096)
		fail("mremap returned 0x%llx", (unsigned long long)q);
	resume(PTRACE_CONT);

	/* skipped: -1 through NT_ARM_SYSTEM_CALL, x0 left as it is */
	const uint64_t a_munmap[2] = { (uint64_t)q, LEN2 };
	check_seccomp("munmap skipped", &r, __NR_munmap, a_munmap, 2);
	arch_set_syscall_nr(&r, -1);
	err = arch_regs_set(child_pid, &r);
	if (err)
		fail("arch_regs_set: %s", strerror(-err));
	err = arch_regs_get(child_pid, &r);
	if (err || arch_syscall_nr(&r) != -1)
		fail("the syscall number reads %ld after -1 was set", arch_syscall_nr(&r));
	resume(PTRACE_SYSCALL);
	if (check_exit("munmap skipped's exit", &r, -1) != q)
		fail("munmap skipped's exit: x0 0x%llx",
		     (unsigned long long)arch_syscall_ret(&r, ABI_AARCH64));
	resume(PTRACE_CONT);
	check_seccomp("munmap", &r, __NR_munmap, a_munmap, 2);
	resume(PTRACE_CONT);

	/* brk(0)'s result changed at its exit stop, then brk(0) again */
	const uint64_t a_brk[1] = { 0 };
	check_seccomp("brk changed", &r, __NR_brk, a_brk, 1);
	resume(PTRACE_SYSCALL);
	brk_real = check_exit("brk's exit", &r, __NR_brk);
	if (brk_real <= 0)
		fail("brk(0) returned %lld", (long long)brk_real);
	r.r.regs[0] = (uint64_t)brk_real + BRK_SHIFT;
	err = arch_regs_set(child_pid, &r);
	if (err)
		fail("arch_regs_set at brk's exit: %s", strerror(-err));
	resume(PTRACE_CONT);
	check_seccomp("brk", &r, __NR_brk, a_brk, 1);
	resume(PTRACE_CONT);

	if (waitpid(child_pid, &status, 0) != child_pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		fail("the child did not exit 0: status 0x%x", status);
	child_pid = 0;
	if (read(pfd[0], res, sizeof(res)) != (ssize_t)sizeof(res))
		fail("the child's results: short");
	if ((uint64_t)res[R_TP] != tp_seen)
		fail("the child's TPIDR_EL0 0x%lx, arch_tp 0x%llx", res[R_TP],
		     (unsigned long long)tp_seen);
	if (res[R_MMAP] != p || res[R_MREMAP] != q || res[R_MUNMAP] != 0 ||
	    res[R_BRK] != brk_real || res[R_BRK_CHANGED] != brk_real + (int64_t)BRK_SHIFT)
		fail("the child saw mmap 0x%lx mremap 0x%lx munmap %ld brk 0x%lx, 0x%lx",
		     res[R_MMAP], res[R_MREMAP], res[R_MUNMAP], res[R_BRK_CHANGED], res[R_BRK]);
	if (res[R_SKIPPED] == q)
		printf("skip x0 first-argument\n");
	else if (res[R_SKIPPED] == -1)
		printf("skip x0 -ENOSYS\n");
	else
		printf("skip x0 0x%lx\n", res[R_SKIPPED]);
	if (res[R_SKIPPED] != q)
		fail("the skipped munmap returned 0x%lx to the child, want its first argument",
		     res[R_SKIPPED]);
	printf("ok arch-regs\n");
	return 0;
}

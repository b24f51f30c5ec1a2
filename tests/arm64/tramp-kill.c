/*
 * tests/arm64/tramp-kill.c - the arm64 trampoline of injected syscalls
 * (src/arch/aarch64/tramp.c) under the kernel, as memtap uses it
 * (probe/remote.c, driven_syscall()) and dies in it (tests/arm64-guest.test,
 * built static for aarch64 with tramp.c).
 *
 * A child, the target, sets every general register (x16 and x17 too),
 * NZCV, v0-v31, FPSR, FPCR and its signal mask to known values and spins
 * on a shared word with two instructions that use none of them but x19
 * and x20.  A second child, the tracer, seizes it, interrupts it,
 * writes the trampoline's code and the block of the stop's registers
 * and mask into a page of the target's through /proc/PID/mem, blocks
 * every signal of the target, points it at the trampoline's svc with
 * x8 = write (the injected syscall, which prints "tramp-kill: svc ran"),
 * resumes it with PTRACE_SYSCALL and SIGKILLs itself at the syscall's
 * entry stop, before any exit stop.  The target, released, must finish
 * the write, put itself back and spin on: once the word is set it
 * stores every register and checks them, its signal mask and its
 * FP/SIMD registers.
 *
 * "tramp-kill control" does the same with only the svc of the
 * trampoline written (BRK #0 after it): the target must die of SIGTRAP,
 * as it would with no trampoline at all, so that the check above can
 * fail.  "tramp-kill restart": the target, its registers set the same
 * way, blocks in a read of a pipe; the interrupt stop must show the
 * read rewound to its svc (pc at it, x0 the fd again, no syscall in
 * progress: arm64 rewinds a restart before the stop), and once the
 * tracer is dead and the pipe written, the read must run again from the
 * trampoline's return and read it all.  Prints "ok tramp-kill" (or
 * "ok tramp-kill-control", "ok tramp-kill-restart") or "FAIL
 * tramp-kill: why", exit status 0 when every check holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"

/* The target's registers, as spin() loads them and its end stores them. */
struct regs {
	uint64_t x[31];		/* 0; x19 the word's address */
	uint64_t nzcv;		/* 248 */
	uint64_t fpsr, fpcr;	/* 256, 264 */
	uint8_t v[32][16];	/* 272 */
	uint64_t sp;		/* 784 */
	uint64_t pad;
};
_Static_assert(sizeof(struct regs) == 800, "struct regs");

#define GO 0x600dULL

/*
 * spin(t): every register from t, then spin until [x19] is not 0 (into
 * x20); wait_read(t): every register from t, then the svc of a read
 * (x8 = 63, x0-x2 from t), at read_svc.  Then every register stored
 * below sp (only sp moves) and t_check() called with them.
 */
#define LOAD_ALL \
	"	mov x1, sp\n	str x1, [x0, #784]\n" \
	"	ldr x1, [x0, #264]\n	msr fpcr, x1\n" \
	"	ldr x1, [x0, #256]\n	msr fpsr, x1\n" \
	"	add x1, x0, #272\n" \
	"	ldp q0, q1, [x1], #32\n	ldp q2, q3, [x1], #32\n" \
	"	ldp q4, q5, [x1], #32\n	ldp q6, q7, [x1], #32\n" \
	"	ldp q8, q9, [x1], #32\n	ldp q10, q11, [x1], #32\n" \
	"	ldp q12, q13, [x1], #32\n	ldp q14, q15, [x1], #32\n" \
	"	ldp q16, q17, [x1], #32\n	ldp q18, q19, [x1], #32\n" \
	"	ldp q20, q21, [x1], #32\n	ldp q22, q23, [x1], #32\n" \
	"	ldp q24, q25, [x1], #32\n	ldp q26, q27, [x1], #32\n" \
	"	ldp q28, q29, [x1], #32\n	ldp q30, q31, [x1], #32\n" \
	"	ldr x1, [x0, #248]\n	msr nzcv, x1\n" \
	"	mov x30, x0\n" \
	"	ldp x0, x1, [x30, #0]\n	ldp x2, x3, [x30, #16]\n" \
	"	ldp x4, x5, [x30, #32]\n	ldp x6, x7, [x30, #48]\n" \
	"	ldp x8, x9, [x30, #64]\n	ldp x10, x11, [x30, #80]\n" \
	"	ldp x12, x13, [x30, #96]\n	ldp x14, x15, [x30, #112]\n" \
	"	ldp x16, x17, [x30, #128]\n	ldp x18, x19, [x30, #144]\n" \
	"	ldp x20, x21, [x30, #160]\n	ldp x22, x23, [x30, #176]\n" \
	"	ldp x24, x25, [x30, #192]\n	ldp x26, x27, [x30, #208]\n" \
	"	ldp x28, x29, [x30, #224]\n	ldr x30, [x30, #240]\n"

__asm__(
	".text\n"
	".globl spin\n"
	"spin:\n"
	LOAD_ALL
	".globl spin_loop\n"
	"spin_loop:\n"
	"	ldr x20, [x19]\n"
	"	cbz x20, spin_loop\n"
	"	b store_all\n"
	".globl wait_read\n"
	"wait_read:\n"
	LOAD_ALL
	".globl read_svc\n"
	"read_svc:\n"
	"	svc #0\n"
	"store_all:\n"
	"	sub sp, sp, #800\n"
	"	stp x0, x1, [sp, #0]\n	stp x2, x3, [sp, #16]\n"
	"	stp x4, x5, [sp, #32]\n	stp x6, x7, [sp, #48]\n"
	"	stp x8, x9, [sp, #64]\n	stp x10, x11, [sp, #80]\n"
	"	stp x12, x13, [sp, #96]\n	stp x14, x15, [sp, #112]\n"
	"	stp x16, x17, [sp, #128]\n	stp x18, x19, [sp, #144]\n"
	"	stp x20, x21, [sp, #160]\n	stp x22, x23, [sp, #176]\n"
	"	stp x24, x25, [sp, #192]\n	stp x26, x27, [sp, #208]\n"
	"	stp x28, x29, [sp, #224]\n	str x30, [sp, #240]\n"
	"	mrs x0, nzcv\n	str x0, [sp, #248]\n"
	"	mrs x0, fpsr\n	str x0, [sp, #256]\n"
	"	mrs x0, fpcr\n	str x0, [sp, #264]\n"
	"	add x1, sp, #272\n"
	"	stp q0, q1, [x1], #32\n	stp q2, q3, [x1], #32\n"
	"	stp q4, q5, [x1], #32\n	stp q6, q7, [x1], #32\n"
	"	stp q8, q9, [x1], #32\n	stp q10, q11, [x1], #32\n"
	"	stp q12, q13, [x1], #32\n	stp q14, q15, [x1], #32\n"
	"	stp q16, q17, [x1], #32\n	stp q18, q19, [x1], #32\n"
	"	stp q20, q21, [x1], #32\n	stp q22, q23, [x1], #32\n"
	"	stp q24, q25, [x1], #32\n	stp q26, q27, [x1], #32\n"
	"	stp q28, q29, [x1], #32\n	stp q30, q31, [x1], #32\n"
	"	add x0, sp, #800\n	str x0, [sp, #784]\n"
	"	mov x0, sp\n	bl t_check\n	brk #1\n"
);

void spin(struct regs *t) __attribute__((noreturn));
void wait_read(struct regs *t) __attribute__((noreturn));
void t_check(const struct regs *d);
extern char spin_loop[], read_svc[];

enum { KILL, CONTROL, RESTART };

static volatile uint64_t *go;	/* shared with the target */
static struct regs want;
static uint64_t want_mask;
static const char *me = "tramp-kill";
static int mode;
static int pipefd[2];		/* the read's, in RESTART */
static char buf[8];
static const char data[8] = "restart!";

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", me);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	_exit(1);
}

static uint64_t sigmask_now(void)
{
	sigset_t cur;
	uint64_t mask = 0;

	sigprocmask(SIG_BLOCK, NULL, &cur);
	for (int s = 1; s <= 64; s++)
		if (sigismember(&cur, s) == 1)
			mask |= 1ULL << (s - 1);
	return mask;
}

/* The target, back from the trampoline: its registers d as it set them. */
void t_check(const struct regs *d)
{
	int bad = 0;

	for (int i = 0; i < 31; i++) {
		uint64_t w = want.x[i];

		if (mode == RESTART && i == 0)
			w = sizeof(data);	/* the read, restarted, read it all */
		else if (mode != RESTART && i == 20)
			w = GO;
		if (d->x[i] != w) {
			printf("FAIL %s: x%d %#" PRIx64 ", not %#" PRIx64 "\n", me, i, d->x[i], w);
			bad++;
		}
	}
	if (d->sp != want.sp || d->nzcv != want.nzcv || d->fpsr != want.fpsr ||
	    d->fpcr != want.fpcr) {
		printf("FAIL %s: sp nzcv fpsr fpcr %#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %#" PRIx64
		       ", not %#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %#" PRIx64 "\n", me, d->sp,
		       d->nzcv, d->fpsr, d->fpcr, want.sp, want.nzcv, want.fpsr, want.fpcr);
		bad++;
	}
	if (memcmp(d->v, want.v, sizeof(want.v))) {
		printf("FAIL %s: v0-v31 changed\n", me);
		bad++;
	}
	if (mode == RESTART && memcmp(buf, data, sizeof(data))) {
		printf("FAIL %s: the read got '%.8s'\n", me, buf);
		bad++;
	}
	if (sigmask_now() != want_mask) {
		printf("FAIL %s: signal mask %#" PRIx64 ", not %#" PRIx64 "\n", me, sigmask_now(),
		       want_mask);
		bad++;
	}
	fflush(stdout);
	_exit(bad ? 1 : 0);
}

static void target(void)
{
	sigset_t set;

	for (int i = 0; i < 31; i++)
		want.x[i] = 0x0101010101010101ULL * (uint64_t)(i + 1) ^ (uint64_t)i << 56;
	want.x[19] = (uint64_t)go;
	want.x[20] = 0;
	want.nzcv = 0x90000000;			/* N, V */
	want.fpcr = 0x02c00000;			/* DN, round towards zero */
	want.fpsr = 0x0800009f;			/* QC and every cumulative flag */
	for (int i = 0; i < 32; i++)
		for (int j = 0; j < 16; j++)
			want.v[i][j] = (uint8_t)(i * 16 + j) ^ 0x3c;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGRTMIN + 2);
	sigprocmask(SIG_SETMASK, &set, NULL);
	want_mask = sigmask_now();
	if (mode != RESTART)
		spin(&want);
	want.x[0] = (uint64_t)pipefd[0];
	want.x[1] = (uint64_t)buf;
	want.x[2] = sizeof(buf);
	want.x[8] = SYS_read;
	wait_read(&want);
}

static int wait_stop(pid_t pid, int *status)
{
	while (waitpid(pid, status, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return WIFSTOPPED(*status) ? 0 : -1;
}

/* The tracer: inject a write from the trampoline at at, die at its entry. */
static void tracer(pid_t pid, uint64_t at)
{
	static const char msg[] = "tramp-kill: svc ran\n";
	uint8_t code[ARCH_TRAMP_SIZE];
	uint64_t block[ARCH_TRAMP_BLOCK_WORDS], mask, all = ~0ULL, args[6] = { 1, 0, 0 };
	arch_regs_t saved, regs;
	char path[64];
	int status, fd;

	if (ptrace(PTRACE_SEIZE, pid, 0L, (void *)(long)PTRACE_O_TRACESYSGOOD) < 0)
		fail("PTRACE_SEIZE: %s", strerror(errno));
	/*
	 * Interrupted anywhere will do; in RESTART, until it is in its read
	 * (which the stop then shows rewound to its svc, x0 its fd again).
	 */
	for (int tries = 0;; tries++) {
		usleep(200000);
		if (ptrace(PTRACE_INTERRUPT, pid, 0L, 0L) < 0 || wait_stop(pid, &status) < 0 ||
		    (unsigned)status >> 16 != PTRACE_EVENT_STOP)
			fail("no interrupt stop (status %#x)", status);
		if (arch_regs_get(pid, &saved) < 0 ||
		    ptrace(PTRACE_GETSIGMASK, pid, (void *)sizeof(mask), &mask) < 0)
			fail("registers or mask not read: %s", strerror(errno));
		if (mode != RESTART || arch_pc(&saved) == (uint64_t)read_svc)
			break;
		if (arch_pc(&saved) == (uint64_t)read_svc + 4)
			fail("stopped in the read at the svc's end, not rewound to it");
		if (tries == 300)
			fail("never stopped in the read");
		if (ptrace(PTRACE_CONT, pid, 0L, 0L) < 0)
			fail("PTRACE_CONT: %s", strerror(errno));
	}
	if (mode == RESTART) {
		if (saved.r.regs[0] != (uint64_t)pipefd[0] || saved.r.regs[8] != SYS_read ||
		    arch_syscall_nr(&saved) != -1)
			fail("the read not rewound: x0 %#" PRIx64 " x8 %" PRIu64 " syscall %ld",
			     saved.r.regs[0], saved.r.regs[8], arch_syscall_nr(&saved));
		printf("%s: stopped in the read, rewound to its svc\n", me);
	} else {
		printf("%s: stopped %s spin_loop\n", me,
		       arch_pc(&saved) - (uint64_t)spin_loop < 8 ? "in" : "outside");
	}
	if (arch_tramp_code(code, at) != ARCH_TRAMP_SIZE)
		fail("no trampoline code");
	arch_tramp_block(block, &saved, mask);
	memcpy(code + ARCH_TRAMP_BLOCK_OFF, block, sizeof(block));
	if (mode == CONTROL)
		for (size_t k = ARCH_SYSCALL_INSN_LEN; k < ARCH_TRAMP_SIZE; k += 4)
			memcpy(code + k, &(uint32_t){ 0xd4200000 }, 4);	/* brk #0 */
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR);
	if (fd < 0 || pwrite(fd, code, sizeof(code), (off_t)at) != (ssize_t)sizeof(code))
		fail("the trampoline not written: %s", strerror(errno));
	close(fd);
	if (ptrace(PTRACE_SETSIGMASK, pid, (void *)sizeof(all), &all) < 0)
		fail("PTRACE_SETSIGMASK: %s", strerror(errno));
	regs = saved;
	args[1] = (uint64_t)msg;	/* the same address in the target: a fork */
	args[2] = sizeof(msg) - 1;
	arch_setup_syscall(&regs, at, SYS_write, args);
	arch_suppress_restart(&regs);
	if (arch_regs_set(pid, &regs) < 0)
		fail("registers not set");
	if (ptrace(PTRACE_SYSCALL, pid, 0L, 0L) < 0 || wait_stop(pid, &status) < 0 ||
	    WSTOPSIG(status) != (SIGTRAP | 0x80))
		fail("no syscall-entry stop (status %#x)", status);
	fflush(stdout);
	raise(SIGKILL);
}

int main(int argc, char **argv)
{
	pid_t tpid, rpid;
	uint8_t *page;
	int status;

	if (argc > 1 && strcmp(argv[1], "control") == 0) {
		mode = CONTROL;
		me = "tramp-kill-control";
	} else if (argc > 1 && strcmp(argv[1], "restart") == 0) {
		mode = RESTART;
		me = "tramp-kill-restart";
	}
	if (pipe(pipefd) < 0)
		fail("pipe: %s", strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);
	go = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (go == MAP_FAILED || page == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	*go = 0;
	tpid = fork();
	if (tpid == 0)
		target();
	rpid = fork();
	if (rpid == 0)
		tracer(tpid, (uint64_t)page);
	if (tpid < 0 || rpid < 0)
		fail("fork: %s", strerror(errno));
	if (waitpid(rpid, &status, 0) != rpid || !WIFSIGNALED(status) ||
	    WTERMSIG(status) != SIGKILL) {
		kill(tpid, SIGKILL);
		fail("the tracer ended with status %#x, not killed at the entry stop", status);
	}
	*go = GO;
	if (mode == RESTART && write(pipefd[1], data, sizeof(data)) != sizeof(data))
		fail("write: %s", strerror(errno));
	alarm(60);
	if (waitpid(tpid, &status, 0) != tpid)
		fail("waitpid: %s", strerror(errno));
	if (mode == CONTROL) {
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTRAP)
			fail("the target ended with status %#x, not SIGTRAP", status);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the target ended with status %#x", status);
	}
	printf("ok %s\n", me);
	return 0;
}

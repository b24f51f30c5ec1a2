/*
 * a64-tramp-run.c - the arm64 trampoline of injected syscalls
 * (src/arch/aarch64/tramp.c) run, as a thread runs it when memtap dies
 * inside an injected syscall: its code is mapped, its block made by
 * arch_tramp_block() of registers of the program's own (every general
 * register, sp, pc at a label here, NZCV) and a signal mask; the thread
 * enters it at its svc with x8 = write (the injected syscall, whose
 * output says it ran), its FP/SIMD registers, FPSR and FPCR set to known
 * values and every signal blocked (as memtap leaves a thread it injects
 * into).  At the label, every register is stored and must be the
 * block's, FP/SIMD ones as they were, the signal mask the block's and
 * the sigaltstack as it was.  Each case in a child of its own, with
 * NZCV, the sp (16-aligned, or 8 more) and the mask different.
 * Built for aarch64 by tests/unit/a64-tramp-run.test
 * (aarch64-linux-gnu-gcc -static) and run through qemu-user; not built
 * by make.  Prints one line per case, and "ok" last when all hold.
 */
#include "config.h"

#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "arch/arch.h"

/*
 * The signal frame as the kernel reads it (struct rt_sigframe: siginfo,
 * then ucontext, which glibc's ucontext_t lays out as the kernel), at
 * the offsets tramp.c's code writes.
 */
struct frame {
	siginfo_t info;
	ucontext_t uc;
};
_Static_assert(sizeof(struct frame) == 4688, "struct rt_sigframe");
_Static_assert(offsetof(struct frame, uc.uc_stack) == 144, "uc_stack");
_Static_assert(offsetof(struct frame, uc.uc_stack.ss_flags) == 152, "ss_flags");
_Static_assert(offsetof(struct frame, uc.uc_sigmask) == 168, "uc_sigmask");
_Static_assert(offsetof(struct frame, uc.uc_mcontext.regs) == 312, "regs");
_Static_assert(offsetof(struct frame, uc.uc_mcontext.pstate) == 576, "pstate");
_Static_assert(offsetof(struct frame, uc.uc_mcontext.__reserved) == 592, "__reserved");
_Static_assert(SYS_rt_sigreturn == 139, "rt_sigreturn");

/* What the thread enters the trampoline with (tramp_enter()). */
struct entry {
	uint64_t code, sp, msg, len, fpcr, fpsr;	/* 0 ... 40 */
	uint8_t v[32][16];				/* 48 */
};
_Static_assert(offsetof(struct entry, v) == 48, "struct entry");

/* What arrive stores at the block's pc. */
struct dump {
	uint64_t x[31];		/* 0 */
	uint64_t nzcv;		/* 248 */
	uint64_t fpsr, fpcr;	/* 256, 264 */
	uint8_t v[32][16];	/* 272 */
	uint64_t sp;		/* 784 */
	uint64_t pad;
};
_Static_assert(sizeof(struct dump) == 800, "struct dump");

void arrived(struct dump *d);

/*
 * tramp_enter(e): v0-v31, FPCR and FPSR from e, then sp = e->sp, x0-x2
 * and x8 a write() of e->msg, and on at e->code, never to come back.
 * arrive (arrive8 for an sp 8 bytes off 16) stores every register below
 * sp (no register is free: only sp moves) and calls arrived().
 */
#define STORE_ALL(room) \
	"	sub sp, sp, #" #room "\n" \
	"	stp x0, x1, [sp, #0]\n	stp x2, x3, [sp, #16]\n" \
	"	stp x4, x5, [sp, #32]\n	stp x6, x7, [sp, #48]\n" \
	"	stp x8, x9, [sp, #64]\n	stp x10, x11, [sp, #80]\n" \
	"	stp x12, x13, [sp, #96]\n	stp x14, x15, [sp, #112]\n" \
	"	stp x16, x17, [sp, #128]\n	stp x18, x19, [sp, #144]\n" \
	"	stp x20, x21, [sp, #160]\n	stp x22, x23, [sp, #176]\n" \
	"	stp x24, x25, [sp, #192]\n	stp x26, x27, [sp, #208]\n" \
	"	stp x28, x29, [sp, #224]\n	str x30, [sp, #240]\n" \
	"	mrs x0, nzcv\n	str x0, [sp, #248]\n" \
	"	mrs x0, fpsr\n	str x0, [sp, #256]\n" \
	"	mrs x0, fpcr\n	str x0, [sp, #264]\n" \
	"	add x1, sp, #272\n" \
	"	stp q0, q1, [x1], #32\n	stp q2, q3, [x1], #32\n" \
	"	stp q4, q5, [x1], #32\n	stp q6, q7, [x1], #32\n" \
	"	stp q8, q9, [x1], #32\n	stp q10, q11, [x1], #32\n" \
	"	stp q12, q13, [x1], #32\n	stp q14, q15, [x1], #32\n" \
	"	stp q16, q17, [x1], #32\n	stp q18, q19, [x1], #32\n" \
	"	stp q20, q21, [x1], #32\n	stp q22, q23, [x1], #32\n" \
	"	stp q24, q25, [x1], #32\n	stp q26, q27, [x1], #32\n" \
	"	stp q28, q29, [x1], #32\n	stp q30, q31, [x1], #32\n" \
	"	add x0, sp, #" #room "\n	str x0, [sp, #784]\n" \
	"	mov x0, sp\n	bl arrived\n	brk #1\n"

__asm__(
	".text\n"
	".globl tramp_enter\n"
	"tramp_enter:\n"
	"	ldr x1, [x0, #32]\n	msr fpcr, x1\n"
	"	ldr x1, [x0, #40]\n	msr fpsr, x1\n"
	"	add x1, x0, #48\n"
	"	ldp q0, q1, [x1], #32\n	ldp q2, q3, [x1], #32\n"
	"	ldp q4, q5, [x1], #32\n	ldp q6, q7, [x1], #32\n"
	"	ldp q8, q9, [x1], #32\n	ldp q10, q11, [x1], #32\n"
	"	ldp q12, q13, [x1], #32\n	ldp q14, q15, [x1], #32\n"
	"	ldp q16, q17, [x1], #32\n	ldp q18, q19, [x1], #32\n"
	"	ldp q20, q21, [x1], #32\n	ldp q22, q23, [x1], #32\n"
	"	ldp q24, q25, [x1], #32\n	ldp q26, q27, [x1], #32\n"
	"	ldp q28, q29, [x1], #32\n	ldp q30, q31, [x1], #32\n"
	"	ldr x16, [x0, #0]\n"
	"	ldr x17, [x0, #8]\n"
	"	ldr x1, [x0, #16]\n"
	"	ldr x2, [x0, #24]\n"
	"	mov sp, x17\n"
	"	mov x0, #1\n"
	"	mov x8, #64\n"		/* write */
	"	br x16\n"
	".globl arrive\n"
	"arrive:\n"
	STORE_ALL(800)
	".globl arrive8\n"
	"arrive8:\n"
	STORE_ALL(808)
);

void tramp_enter(const struct entry *e) __attribute__((noreturn));
extern char arrive[], arrive8[];

/* The case the child runs, for arrived() to check against. */
static arch_regs_t want;
static uint64_t want_mask;
static struct entry ent;
static stack_t want_ss;
static const char *name;

static int bad;

#define EXPECT(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL %s: ", name); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		bad++; \
	} \
} while (0)

void arrived(struct dump *d)
{
	sigset_t cur;
	stack_t ss;
	uint64_t mask = 0;

	for (int i = 0; i < 31; i++)
		EXPECT(d->x[i] == want.r.regs[i], "x%d %#" PRIx64 ", not %#" PRIx64, i, d->x[i],
		       want.r.regs[i]);
	EXPECT(d->sp == want.r.sp, "sp %#" PRIx64 ", not %#" PRIx64, d->sp, want.r.sp);
	EXPECT(d->nzcv == (want.r.pstate & 0xf0000000), "nzcv %#" PRIx64 ", not %#" PRIx64,
	       d->nzcv, want.r.pstate & 0xf0000000);
	EXPECT(d->fpsr == ent.fpsr, "fpsr %#" PRIx64 ", not %#" PRIx64, d->fpsr, ent.fpsr);
	EXPECT(d->fpcr == ent.fpcr, "fpcr %#" PRIx64 ", not %#" PRIx64, d->fpcr, ent.fpcr);
	for (int i = 0; i < 32; i++)
		EXPECT(memcmp(d->v[i], ent.v[i], 16) == 0, "v%d changed", i);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	for (int s = 1; s <= 64; s++)
		if (sigismember(&cur, s) == 1)
			mask |= 1ULL << (s - 1);
	EXPECT(mask == want_mask, "signal mask %#" PRIx64 ", not %#" PRIx64, mask, want_mask);
	sigaltstack(NULL, &ss);
	EXPECT(ss.ss_sp == want_ss.ss_sp && ss.ss_size == want_ss.ss_size &&
	       ss.ss_flags == want_ss.ss_flags, "sigaltstack %p %zu %d, not %p %zu %d", ss.ss_sp,
	       ss.ss_size, ss.ss_flags, want_ss.ss_sp, want_ss.ss_size, want_ss.ss_flags);
	printf("%s: %s\n", name, bad ? "differs" : "as in the block");
	fflush(stdout);
	_exit(bad ? 1 : 0);
}

/*
 * In a child: the trampoline at code, entered with sp = stack top (+ 8
 * when odd), NZCV nzcv and mask as the block's.
 */
static int run_case(const char *what, uint8_t *code, uint8_t *stack, size_t stack_len, int odd,
		    uint64_t nzcv, uint64_t mask)
{
	static char altstack[16384];
	static const char msg[] = "svc ran\n";
	uint64_t block[ARCH_TRAMP_BLOCK_WORDS];
	sigset_t all;
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0 };
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0) {
		if (waitpid(pid, &status, 0) != pid)
			return 1;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("FAIL %s: the child ended with status %#x\n", what, status);
			return 1;
		}
		return 0;
	}

	name = what;
	memset(&want, 0, sizeof(want));
	for (int i = 0; i < 31; i++)
		want.r.regs[i] = 0x0101010101010101ULL * (uint64_t)(i + 1) ^ (uint64_t)i << 56 ^ nzcv;
	want.r.sp = (uint64_t)(stack + stack_len - 4096) + (odd ? 8 : 0);
	want.r.pc = (uint64_t)(odd ? arrive8 : arrive);
	want.r.pstate = nzcv;
	want.nr = -1;
	want_mask = mask;
	arch_tramp_block(block, &want, mask);
	memcpy(code + ARCH_TRAMP_BLOCK_OFF, block, sizeof(block));

	ent.code = (uint64_t)code;
	ent.sp = want.r.sp;
	ent.msg = (uint64_t)msg;
	ent.len = sizeof(msg) - 1;
	ent.fpcr = 0x02c00000;		/* DN, round towards zero */
	ent.fpsr = 0x0800009f;		/* QC and every cumulative flag */
	for (int i = 0; i < 32; i++)
		for (int j = 0; j < 16; j++)
			ent.v[i][j] = (uint8_t)(i * 16 + j) ^ 0xa5 ^ (uint8_t)(nzcv >> 24);

	if (sigaltstack(&ss, NULL) < 0 || sigaltstack(NULL, &want_ss) < 0) {
		printf("FAIL %s: sigaltstack: %m\n", what);
		_exit(1);
	}
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	tramp_enter(&ent);
}

int main(void)
{
	size_t stack_len = 1 << 16;
	uint8_t *code, *stack;
	int failed = 0;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	stack = mmap(NULL, stack_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || stack == MAP_FAILED) {
		printf("FAIL: mmap: %m\n");
		return 1;
	}
	if (arch_tramp_code(code, (uint64_t)code) != ARCH_TRAMP_SIZE) {
		printf("FAIL: no trampoline code\n");
		return 1;
	}
	__builtin___clear_cache((char *)code, (char *)code + ARCH_TRAMP_SIZE);

	failed += run_case("N C, sp aligned", code, stack, stack_len, 0, 0xa0000000,
			   1ULL << (SIGUSR1 - 1) | 1ULL << (SIGWINCH - 1));
	failed += run_case("Z V, sp + 8", code, stack, stack_len, 1, 0x50000000,
			   1ULL << (SIGHUP - 1) | 1ULL << (SIGUSR2 - 1) | 1ULL << (SIGRTMIN + 3 - 1));
	failed += run_case("N Z C V, no mask", code, stack, stack_len, 0, 0xf0000000, 0);
	if (failed)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * bpf-unit - the classic-BPF interpreter (bpf.c) on hand-written seccomp
 * programs: every load of struct seccomp_data, ALU operations, jumps,
 * scratch memory, invalid programs (each must give -EINVAL, never a
 * result), and the precedence of several filters' results.  Where the
 * kernel can load the program, its verdict is compared with the
 * kernel's own, in a child that installs it.  Prints "ok" or what
 * differs.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>

#include "linux/bpf.h"

#define S(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define J(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define OFF(f) offsetof(struct seccomp_data, f)

static int failures;

static void check_u32(const char *what, uint32_t got, uint32_t want)
{
	if (got != want) {
		printf("FAIL %s: got %#x, want %#x\n", what, got, want);
		failures++;
	}
}

/* Run and expect a result. */
static void expect_ret(const char *what, const struct sock_filter *p, size_t n,
		       const struct seccomp_data *d, uint32_t want)
{
	uint32_t ret = 0xdeadbeef;
	int r = bpf_run(p, n, d, &ret);

	if (r != 0) {
		printf("FAIL %s: rejected (%d)\n", what, r);
		failures++;
		return;
	}
	check_u32(what, ret, want);
}

static void expect_invalid(const char *what, const struct sock_filter *p, size_t n,
			   const struct seccomp_data *d)
{
	uint32_t ret = 0xdeadbeef;
	int r = bpf_run(p, n, d, &ret);

	if (r != -EINVAL) {
		printf("FAIL %s: accepted (ret %#x), want -EINVAL\n", what, ret);
		failures++;
	}
	if (ret != 0xdeadbeef) {
		printf("FAIL %s: wrote a result for an invalid program\n", what);
		failures++;
	}
}

static struct seccomp_data sample(void)
{
	struct seccomp_data d;

	memset(&d, 0, sizeof(d));
	d.nr = 9;
	d.arch = AUDIT_ARCH_X86_64;
	d.instruction_pointer = 0x00007f1234567891ULL;
	for (int i = 0; i < 6; i++)
		d.args[i] = 0x1111111100000000ULL * (uint64_t)(i + 1) + (uint64_t)(0x100 + i);
	return d;
}

static void test_loads(void)
{
	struct seccomp_data d = sample();
	char name[64];

	/* each 32-bit word of seccomp_data, returned as the result */
	for (unsigned off = 0; off < sizeof(d); off += 4) {
		struct sock_filter p[] = {
			S(BPF_LD | BPF_W | BPF_ABS, off),
			S(BPF_RET | BPF_A, 0),
		};
		uint32_t want;

		memcpy(&want, (const char *)&d + off, 4);
		snprintf(name, sizeof(name), "load word at %u", off);
		expect_ret(name, p, N(p), &d, want);
	}
	struct sock_filter nr[] = { S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)), S(BPF_RET | BPF_A, 0) };
	struct sock_filter arch[] = { S(BPF_LD | BPF_W | BPF_ABS, OFF(arch)), S(BPF_RET | BPF_A, 0) };
	struct sock_filter iplo[] = { S(BPF_LD | BPF_W | BPF_ABS, OFF(instruction_pointer)),
				      S(BPF_RET | BPF_A, 0) };
	struct sock_filter iphi[] = { S(BPF_LD | BPF_W | BPF_ABS, OFF(instruction_pointer) + 4),
				      S(BPF_RET | BPF_A, 0) };
	struct sock_filter a5hi[] = { S(BPF_LD | BPF_W | BPF_ABS, OFF(args[5]) + 4),
				      S(BPF_RET | BPF_A, 0) };
	struct sock_filter len[] = { S(BPF_LD | BPF_W | BPF_LEN, 0), S(BPF_RET | BPF_A, 0) };
	struct sock_filter xlen[] = { S(BPF_LDX | BPF_W | BPF_LEN, 0), S(BPF_MISC | BPF_TXA, 0),
				      S(BPF_RET | BPF_A, 0) };

	expect_ret("nr", nr, N(nr), &d, 9);
	expect_ret("arch", arch, N(arch), &d, AUDIT_ARCH_X86_64);
	expect_ret("instruction_pointer low", iplo, N(iplo), &d, 0x34567891);
	expect_ret("instruction_pointer high", iphi, N(iphi), &d, 0x7f12);
	expect_ret("args[5] high", a5hi, N(a5hi), &d, 0x66666666);
	expect_ret("BPF_LEN", len, N(len), &d, sizeof(d));
	expect_ret("BPF_LDX BPF_LEN", xlen, N(xlen), &d, sizeof(d));
}

static void test_alu(void)
{
	struct seccomp_data d = sample();
	static const struct {
		uint16_t op;
		uint32_t a, k, want;
	} cases[] = {
		{ BPF_ADD, 0xfffffff0, 0x20, 0x10 },	/* wraps at 32 bits */
		{ BPF_SUB, 5, 7, 0xfffffffe },
		{ BPF_MUL, 0x10000, 0x10001, 0x10000 },
		{ BPF_DIV, 100, 7, 14 },
		{ BPF_MOD, 100, 7, 2 },
		{ BPF_OR, 0xf0, 0x0f, 0xff },
		{ BPF_AND, 0xf0f0, 0xff00, 0xf000 },
		{ BPF_XOR, 0xff, 0x0f, 0xf0 },
		{ BPF_LSH, 1, 31, 0x80000000 },
		{ BPF_RSH, 0x80000000, 31, 1 },
	};
	char name[64];

	for (size_t i = 0; i < N(cases); i++) {
		/* A op K */
		struct sock_filter pk[] = {
			S(BPF_LD | BPF_IMM, cases[i].a),
			S(BPF_ALU | cases[i].op | BPF_K, cases[i].k),
			S(BPF_RET | BPF_A, 0),
		};
		/* A op X, with X from the scratch memory */
		struct sock_filter px[] = {
			S(BPF_LD | BPF_IMM, cases[i].k),
			S(BPF_ST, 3),
			S(BPF_LDX | BPF_MEM, 3),
			S(BPF_LD | BPF_IMM, cases[i].a),
			S(BPF_ALU | cases[i].op | BPF_X, 0),
			S(BPF_RET | BPF_A, 0),
		};

		snprintf(name, sizeof(name), "alu op %#x K", cases[i].op);
		expect_ret(name, pk, N(pk), &d, cases[i].want);
		snprintf(name, sizeof(name), "alu op %#x X", cases[i].op);
		expect_ret(name, px, N(px), &d, cases[i].want);
	}
	struct sock_filter neg[] = { S(BPF_LD | BPF_IMM, 1), S(BPF_ALU | BPF_NEG, 0),
				     S(BPF_RET | BPF_A, 0) };
	/* division by a zero X: the program returns 0 */
	struct sock_filter div0[] = { S(BPF_LDX | BPF_IMM, 0), S(BPF_LD | BPF_IMM, 5),
				      S(BPF_ALU | BPF_DIV | BPF_X, 0),
				      S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_filter mod0[] = { S(BPF_LDX | BPF_IMM, 0), S(BPF_LD | BPF_IMM, 5),
				      S(BPF_ALU | BPF_MOD | BPF_X, 0),
				      S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	/* shift by X: modulo 32 */
	struct sock_filter shx[] = { S(BPF_LDX | BPF_IMM, 33), S(BPF_LD | BPF_IMM, 1),
				     S(BPF_ALU | BPF_LSH | BPF_X, 0), S(BPF_RET | BPF_A, 0) };
	struct sock_filter tax[] = { S(BPF_LD | BPF_IMM, 42), S(BPF_MISC | BPF_TAX, 0),
				     S(BPF_LD | BPF_IMM, 0), S(BPF_STX, 15), S(BPF_LD | BPF_MEM, 15),
				     S(BPF_RET | BPF_A, 0) };

	expect_ret("neg", neg, N(neg), &d, 0xffffffff);
	expect_ret("div by zero X", div0, N(div0), &d, 0);
	expect_ret("mod by zero X", mod0, N(mod0), &d, 0);
	expect_ret("shift by X 33", shx, N(shx), &d, 2);
	expect_ret("tax stx ld mem", tax, N(tax), &d, 42);
}

static void test_jumps(void)
{
	struct seccomp_data d = sample();
	/* nr == 9 ? (args[2] & 4 ? KILL : ERRNO|12) : ALLOW */
	struct sock_filter p[] = {
		S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		J(BPF_JMP | BPF_JEQ | BPF_K, 9, 0, 2),
		S(BPF_LD | BPF_W | BPF_ABS, OFF(args[2])),
		J(BPF_JMP | BPF_JSET | BPF_K, 4, 2, 1),
		S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		S(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 12),
		S(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_filter gt[] = {
		S(BPF_LD | BPF_W | BPF_ABS, OFF(args[1])),
		J(BPF_JMP | BPF_JGT | BPF_K, 0x101, 1, 0),
		S(BPF_RET | BPF_K, 1),
		J(BPF_JMP | BPF_JGE | BPF_K, 0x102, 0, 1),
		S(BPF_RET | BPF_K, 2),
		S(BPF_RET | BPF_K, 3),
	};
	struct sock_filter jx[] = {
		S(BPF_LDX | BPF_IMM, 9),
		S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		J(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
		S(BPF_JMP | BPF_JA, 1),
		S(BPF_RET | BPF_K, 7),
		S(BPF_RET | BPF_K, 8),
	};

	d.args[2] = 4;
	expect_ret("jset taken", p, N(p), &d, SECCOMP_RET_KILL_PROCESS);
	d.args[2] = 3;
	expect_ret("jset not taken", p, N(p), &d, SECCOMP_RET_ERRNO | 12);
	d.nr = 10;
	expect_ret("jeq not taken", p, N(p), &d, SECCOMP_RET_ALLOW);
	d = sample();
	d.args[1] = 0x101;
	expect_ret("jgt false", gt, N(gt), &d, 1);
	d.args[1] = 0x102;
	expect_ret("jgt true, jge true", gt, N(gt), &d, 2);
	d.args[1] = 0x103;
	expect_ret("jge true", gt, N(gt), &d, 2);
	d = sample();
	expect_ret("jeq X, ja", jx, N(jx), &d, 8);
	d.nr = 1;
	expect_ret("jeq X false", jx, N(jx), &d, 7);
}

static void test_invalid(void)
{
	struct seccomp_data d = sample();
	struct sock_filter ld_oob[] = { S(BPF_LD | BPF_W | BPF_ABS, sizeof(d)), S(BPF_RET | BPF_A, 0) };
	struct sock_filter ld_edge[] = { S(BPF_LD | BPF_W | BPF_ABS, sizeof(d) - 2),
					 S(BPF_RET | BPF_A, 0) };
	struct sock_filter ld_huge[] = { S(BPF_LD | BPF_W | BPF_ABS, 0xfffffffc), S(BPF_RET | BPF_A, 0) };
	struct sock_filter ld_unal[] = { S(BPF_LD | BPF_W | BPF_ABS, 2), S(BPF_RET | BPF_A, 0) };
	struct sock_filter ld_byte[] = { S(BPF_LD | BPF_B | BPF_ABS, 0), S(BPF_RET | BPF_A, 0) };
	struct sock_filter ld_ind[] = { S(BPF_LD | BPF_W | BPF_IND, 0), S(BPF_RET | BPF_A, 0) };
	struct sock_filter mem_oob[] = { S(BPF_LD | BPF_MEM, BPF_MEMWORDS), S(BPF_RET | BPF_A, 0) };
	struct sock_filter st_oob[] = { S(BPF_ST, BPF_MEMWORDS), S(BPF_RET | BPF_A, 0) };
	struct sock_filter ldx_oob[] = { S(BPF_LDX | BPF_MEM, 100), S(BPF_RET | BPF_A, 0) };
	struct sock_filter ja_oob[] = { S(BPF_JMP | BPF_JA, 1), S(BPF_RET | BPF_A, 0) };
	struct sock_filter ja_neg[] = { S(BPF_JMP | BPF_JA, 0xffffffff), S(BPF_RET | BPF_A, 0) };
	struct sock_filter jt_oob[] = { J(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), S(BPF_RET | BPF_A, 0) };
	struct sock_filter jf_oob[] = { J(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 200),
					S(BPF_RET | BPF_A, 0) };
	struct sock_filter off_end[] = { S(BPF_LD | BPF_IMM, 1) };
	struct sock_filter bad_op[] = { S(BPF_ALU | 0xf0 | BPF_K, 1), S(BPF_RET | BPF_A, 0) };
	struct sock_filter div_k0[] = { S(BPF_ALU | BPF_DIV | BPF_K, 0), S(BPF_RET | BPF_A, 0) };
	struct sock_filter sh_k32[] = { S(BPF_ALU | BPF_LSH | BPF_K, 32), S(BPF_RET | BPF_A, 0) };
	struct sock_filter bad_jmp[] = { J(BPF_JMP | 0x50 | BPF_K, 0, 0, 0), S(BPF_RET | BPF_A, 0) };
	struct sock_filter bad_ret[] = { S(BPF_RET | BPF_X, 0) };
	struct sock_filter bad_misc[] = { S(BPF_MISC | 0x40, 0), S(BPF_RET | BPF_A, 0) };
	static struct sock_filter too_long[BPF_PROG_MAX + 1];

	expect_invalid("load past seccomp_data", ld_oob, N(ld_oob), &d);
	expect_invalid("load across its end", ld_edge, N(ld_edge), &d);
	expect_invalid("load at 0xfffffffc", ld_huge, N(ld_huge), &d);
	expect_invalid("unaligned load", ld_unal, N(ld_unal), &d);
	expect_invalid("byte load", ld_byte, N(ld_byte), &d);
	expect_invalid("indirect load", ld_ind, N(ld_ind), &d);
	expect_invalid("M[16]", mem_oob, N(mem_oob), &d);
	expect_invalid("store M[16]", st_oob, N(st_oob), &d);
	expect_invalid("ldx M[100]", ldx_oob, N(ldx_oob), &d);
	expect_invalid("ja past the end", ja_oob, N(ja_oob), &d);
	expect_invalid("ja backwards (wrapping)", ja_neg, N(ja_neg), &d);
	expect_invalid("jt past the end", jt_oob, N(jt_oob), &d);
	expect_invalid("jf past the end", jf_oob, N(jf_oob), &d);
	expect_invalid("running off the end", off_end, N(off_end), &d);
	expect_invalid("unknown alu op", bad_op, N(bad_op), &d);
	expect_invalid("division by K 0", div_k0, N(div_k0), &d);
	expect_invalid("shift by K 32", sh_k32, N(sh_k32), &d);
	expect_invalid("unknown jump", bad_jmp, N(bad_jmp), &d);
	expect_invalid("ret X", bad_ret, N(bad_ret), &d);
	expect_invalid("unknown misc", bad_misc, N(bad_misc), &d);
	expect_invalid("empty program", too_long, 0, &d);
	for (size_t i = 0; i < N(too_long); i++)
		too_long[i] = S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	expect_invalid("4097 instructions", too_long, N(too_long), &d);
	expect_ret("4096 instructions", too_long, BPF_PROG_MAX, &d, SECCOMP_RET_ALLOW);
}

static void test_precedence(void)
{
	/* most restrictive first */
	static const uint32_t order[] = {
		SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP | 1,
		SECCOMP_RET_ERRNO | 13, SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE | 5,
		SECCOMP_RET_LOG, SECCOMP_RET_ALLOW,
	};
	char name[80];
	size_t which;

	for (size_t i = 0; i < N(order); i++)
		for (size_t j = 0; j < N(order); j++) {
			uint32_t two[2] = { order[i], order[j] };

			snprintf(name, sizeof(name), "%s vs %s", bpf_seccomp_action_name(order[i]),
				 bpf_seccomp_action_name(order[j]));
			check_u32(name, bpf_seccomp_combine(two, 2, NULL), order[i < j ? i : j]);
		}
	/* equal actions: the most recent filter's (index 0) data */
	uint32_t errnos[3] = { SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | 1, SECCOMP_RET_ERRNO | 2 };

	check_u32("errno tie", bpf_seccomp_combine(errnos, 3, &which), SECCOMP_RET_ERRNO | 1);
	check_u32("errno tie index", (uint32_t)which, 1);
	check_u32("no filter", bpf_seccomp_combine(NULL, 0, NULL), SECCOMP_RET_ALLOW);
	/* an unknown action ranks by its value; 0x7ff80000 sits below LOG */
	uint32_t odd[2] = { SECCOMP_RET_LOG, 0x7ff80000U };

	check_u32("unknown action", bpf_seccomp_combine(odd, 2, NULL), 0x7ff80000U);
	check_u32("kill process data", bpf_seccomp_combine((uint32_t[]){ SECCOMP_RET_ALLOW,
			SECCOMP_RET_KILL_PROCESS | 7, SECCOMP_RET_KILL_THREAD }, 3, &which),
		  SECCOMP_RET_KILL_PROCESS | 7);
	check_u32("kill process index", (uint32_t)which, 1);
}

/*
 * The kernel's verdict on getppid() under filters (installed oldest
 * first): errno of the call, 0 if it ran; -1 on trouble.
 */
static int kernel_verdict(const struct sock_filter *const *progs, const size_t *lens, size_t n)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(200);
		for (size_t i = 0; i < n; i++) {
			struct sock_fprog fp = { (unsigned short)lens[i], (struct sock_filter *)progs[i] };

			if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
				_exit(201);
		}
		errno = 0;
		_exit(syscall(SYS_getppid) < 0 ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status) >= 200 ? -1 : WEXITSTATUS(status);
}

/* Several filters on getppid, evaluated here and by the kernel. */
static void test_against_kernel(void)
{
	struct sock_filter e5[] = {
		S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		J(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		S(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 5),
		S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter e7[] = {
		S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		J(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		S(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 7),
		S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter log[] = { S(BPF_RET | BPF_K, SECCOMP_RET_LOG) };
	const struct sock_filter *progs[3] = { e5, log, e7 };	/* oldest first */
	const size_t lens[3] = { N(e5), N(log), N(e7) };
	struct seccomp_data d;
	uint32_t rets[3];
	int k;

	memset(&d, 0, sizeof(d));
	d.nr = SYS_getppid;
	d.arch = AUDIT_ARCH_X86_64;
	/* our order: most recent first */
	for (int i = 0; i < 3; i++)
		if (bpf_run(progs[2 - i], lens[2 - i], &d, &rets[i]) < 0)
			rets[i] = 0xdead;
	k = kernel_verdict(progs, lens, 3);
	if (k < 0) {
		printf("kernel comparison skipped: no seccomp filters here\n");
		return;
	}
	check_u32("kernel: two ERRNO filters and LOG", bpf_seccomp_combine(rets, 3, NULL),
		  SECCOMP_RET_ERRNO | (uint32_t)k);
	check_u32("kernel: the most recent ERRNO wins", (uint32_t)k, 7);
}

int main(void)
{
	test_loads();
	test_alu();
	test_jumps();
	test_invalid();
	test_precedence();
	test_against_kernel();
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}

/*
 * regs.c (aarch64) - the register file in DWARF's, libunwind's and
 * perf's numberings; whether memtap can read the virtual counter
 * (cpu.h arch_cpu_features()).
 */
#include "config.h"

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#include "arch/arch.h"

#ifdef __aarch64__
#include <asm/perf_regs.h>
_Static_assert(ARCH_PERF_LR == PERF_REG_ARM64_LR && ARCH_PERF_SP == PERF_REG_ARM64_SP &&
		       ARCH_PERF_PC == PERF_REG_ARM64_PC && ARCH_PERF_NREGS == PERF_REG_ARM64_MAX,
	       "perf's arm64 register numbers");
#endif

#ifndef NT_ARM_PAC_MASK
#define NT_ARM_PAC_MASK 0x406
#endif

uint64_t arch_pac_insn_mask;
int arch_pac_asked;

/* EINVAL (or EIO): no pointer authentication, nothing to strip. */
void arch_pac_ask(pid_t tid)
{
	uint64_t mask[2];	/* struct user_pac_mask: data_mask, insn_mask */

	if (arch_regset_get(tid, NT_ARM_PAC_MASK, mask, sizeof(mask)) == 0)
		arch_pac_insn_mask = mask[1];
	arch_pac_asked = 1;
}

/* x19-x28, x29: DWARF numbers them as the registers. */
const uint8_t arch_dw_saved[ARCH_NSAVED] = { 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29 };

void arch_dw_initial(const arch_regs_t *r, uint64_t out[ARCH_DW_NREGS])
{
	/* DWARF registers 0-31: x0-x30, then sp */
	for (int i = 0; i < 31; i++)
		out[i] = r->r.regs[i];
	out[ARCH_DW_SP] = r->r.sp;
}

/*
 * perf gives x0-x29, lr, sp, pc; pstate and the syscall number are not
 * sampled: no syscall in progress, no restart for anyone to take.
 */
void arch_regs_from_perf(arch_regs_t *r, const uint64_t *v)
{
	for (int i = 0; i <= ARCH_PERF_LR; i++)
		r->r.regs[i] = v[i];
	r->r.sp = v[ARCH_PERF_SP];
	r->r.pc = v[ARCH_PERF_PC];
	r->nr = -1;
}

#ifdef HAVE_LIBUNWIND

#include <libunwind.h>

const int arch_unw_saved[ARCH_NSAVED] = {
	UNW_AARCH64_X19, UNW_AARCH64_X20, UNW_AARCH64_X21, UNW_AARCH64_X22,
	UNW_AARCH64_X23, UNW_AARCH64_X24, UNW_AARCH64_X25, UNW_AARCH64_X26,
	UNW_AARCH64_X27, UNW_AARCH64_X28, UNW_AARCH64_X29,
};

int arch_unw_get(const arch_regs_t *r, int reg, uint64_t *val)
{
	if (reg >= UNW_AARCH64_X0 && reg <= UNW_AARCH64_X30)
		*val = r->r.regs[reg - UNW_AARCH64_X0];
	else if (reg == UNW_AARCH64_SP)
		*val = r->r.sp;
	else if (reg == UNW_AARCH64_PC)
		*val = r->r.pc;
	else
		return -1;
	return 0;
}

#endif /* HAVE_LIBUNWIND */

#ifdef __aarch64__
static sigjmp_buf counter_jmp;

static void counter_sigill(int sig)
{
	(void)sig;
	siglongjmp(counter_jmp, 1);
}

/* cntfrq_el0 and cntvct_el0 read here, the SIGILL of a kernel that forbids them caught. */
static unsigned counter_probe(void)
{
	struct sigaction sa = { .sa_handler = counter_sigill }, old;
	volatile uint64_t frq = 0;
	volatile int got = 0;
	sigset_t ill, mask;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&ill);
	sigaddset(&ill, SIGILL);
	if (sigaction(SIGILL, &sa, &old) < 0)
		return 0;
	pthread_sigmask(SIG_UNBLOCK, &ill, &mask);
	if (sigsetjmp(counter_jmp, 1) == 0) {
		uint64_t f, v;

		__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
		frq = f;
		__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
		(void)v;
		got = 1;
	}
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	sigaction(SIGILL, &old, NULL);
	return got && frq ? ARCH_CPU_COUNTER : 0;
}
#endif

unsigned a64_counter_features(void)
{
#ifdef __aarch64__
	static int asked;
	static unsigned f;

	if (!asked) {
		f = counter_probe();
		asked = 1;
	}
	return f;
#else
	return 0;
#endif
}

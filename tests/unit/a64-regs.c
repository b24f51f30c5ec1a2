/*
 * a64-regs.c - arm64's registers at a stop as cpu.h reads and sets
 * them, on known values: which kinds of stop tell a syscall's entry
 * from its exit (arch_at_syscall_entry(): x7 at a PTRACE_SYSCALL stop
 * only, a seccomp stop always an entry, any other stop unknown), and
 * the registers of an injected syscall (arch_setup_syscall(): pc, x8,
 * x0-x5, PSTATE.BTYPE cleared, NZCV and the rest kept), and the thread
 * pointer of registers made without a thread (arch_tp(): as set; read
 * from the thread when first asked only after arch_regs_get(), which
 * tests/arm64/arch-regs.c checks in the guest).  Built on this
 * host against aarch64's cpu.h (tests/Makefile.inc); the guest's
 * tests/arm64/arch-regs.c asks a real kernel.  Prints "ok" last when
 * every check passed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "unit-check.h"

static void check_entry(void)
{
	arch_regs_t r;

	memset(&r, 0, sizeof(r));
	r.r.regs[7] = 0;
	CHECK(arch_at_syscall_entry(&r, ARCH_STOP_SYSCALL) == 1, "syscall stop, x7 0: not entry");
	r.r.regs[7] = 1;
	CHECK(arch_at_syscall_entry(&r, ARCH_STOP_SYSCALL) == 0, "syscall stop, x7 1: not exit");
	/* at a seccomp stop x7 is the thread's: any value, always an entry */
	for (uint64_t x7 = 0; x7 < 3; x7++) {
		r.r.regs[7] = x7;
		CHECK(arch_at_syscall_entry(&r, ARCH_STOP_SECCOMP) == 1,
		      "seccomp stop, x7 %" PRIu64 ": not entry", x7);
		CHECK(arch_at_syscall_entry(&r, ARCH_STOP_OTHER) == -1,
		      "other stop, x7 %" PRIu64 ": says %d, not -1", x7,
		      arch_at_syscall_entry(&r, ARCH_STOP_OTHER));
	}
	r.r.regs[7] = 0x1234;
	CHECK(arch_at_syscall_entry(&r, ARCH_STOP_SECCOMP) == 1, "seccomp stop, x7 0x1234");
}

static void check_setup(void)
{
	static const uint64_t args[6] = { 11, 22, 33, 44, 55, 66 };
	static const uint64_t btypes[] = { 0x000, 0x400, 0x800, 0xc00 };
	const uint64_t other = 0xf0000000ull | 0x3c0 | 0x200000;	/* NZCV, DAIF, SS */

	for (size_t i = 0; i < sizeof(btypes) / sizeof(btypes[0]); i++) {
		arch_regs_t r, before;

		memset(&r, 0, sizeof(r));
		for (int k = 0; k < 31; k++)
			r.r.regs[k] = 0x1000 + k;
		r.r.sp = 0x7ffff000;
		r.r.pc = 0x400100;
		r.r.pstate = other | btypes[i];
		r.tp = 0x5000;
		r.nr = 222;
		before = r;
		arch_setup_syscall(&r, 0x401000, 215, args);
		CHECK(r.r.pc == 0x401000, "btype %#" PRIx64 ": pc %#" PRIx64, btypes[i], r.r.pc);
		CHECK(r.r.regs[8] == 215, "btype %#" PRIx64 ": x8 %" PRIu64, btypes[i], r.r.regs[8]);
		for (int k = 0; k < 6; k++)
			CHECK(r.r.regs[k] == args[k], "btype %#" PRIx64 ": x%d", btypes[i], k);
		for (int k = 6; k < 31; k++)
			CHECK(k == 8 || r.r.regs[k] == before.r.regs[k], "btype %#" PRIx64 ": x%d changed",
			      btypes[i], k);
		CHECK(r.r.pstate == other, "btype %#" PRIx64 ": pstate %#" PRIx64 ", not %#" PRIx64
		      " (BTYPE kept, or more cleared)", btypes[i], r.r.pstate, other);
		CHECK(r.r.sp == before.r.sp && r.tp == before.tp && r.nr == before.nr,
		      "btype %#" PRIx64 ": sp, tp or the stop's number changed", btypes[i]);
		arch_suppress_restart(&r);
		CHECK(r.nr == -1, "arch_suppress_restart: nr %" PRId64, r.nr);
	}
}

/* Registers not read from a thread (tp_tid 0) give their tp as set, asking no thread. */
static void check_tp(void)
{
	arch_regs_t r;

	memset(&r, 0, sizeof(r));
	CHECK(arch_tp(&r) == 0, "zeroed registers: tp %#" PRIx64, arch_tp(&r));
	r.tp = 0x7ffff7fff740ull;
	CHECK(arch_tp(&r) == 0x7ffff7fff740ull && r.tp_tid == 0, "tp as set: %#" PRIx64,
	      arch_tp(&r));
}

int main(void)
{
	check_entry();
	check_setup();
	check_tp();
	return unit_status();
}

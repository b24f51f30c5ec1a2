/*
 * arch-regs.c - the arch's register numberings (src/arch/arch.h)
 * against one another and, for x86-64, against the kernel's and the
 * tools' own headers: the callee-saved set (arch_saved_reg()), DWARF's
 * (arch_dw_initial(), arch_dw_saved[], ARCH_DW_*), libunwind's
 * (arch_unw_get(), arch_unw_saved[]) and perf's (arch_regs_from_perf(),
 * ARCH_PERF_REGS_MASK).  A register the unwinders take for another
 * gives wrong stacks only where that register matters; here every one
 * holds a value of its own.  Prints "ok" last; exit 1 on a failure.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "unit-check.h"

#ifdef HAVE_LIBUNWIND
#include <libunwind.h>
#endif
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif

#define NWORDS (sizeof(arch_regs_t) / sizeof(uint64_t))

/* r with word i of it (in its memory) 0x1000 + i: each register its own value. */
static void fill(arch_regs_t *r)
{
	uint64_t w[NWORDS];

	for (size_t i = 0; i < NWORDS; i++)
		w[i] = 0x1000 + i;
	memcpy(r, w, sizeof(w));
}

/* How many words of a and b differ. */
static int words_changed(const arch_regs_t *a, const arch_regs_t *b)
{
	uint64_t wa[NWORDS], wb[NWORDS];
	int n = 0;

	memcpy(wa, a, sizeof(wa));
	memcpy(wb, b, sizeof(wb));
	for (size_t i = 0; i < NWORDS; i++)
		n += wa[i] != wb[i];
	return n;
}

static void check_accessors(void)
{
	arch_regs_t r, s;

	fill(&r);
	CHECK(arch_pc(&r) != arch_sp(&r) && arch_sp(&r) != arch_fp(&r) && arch_pc(&r) != arch_fp(&r),
	      "pc, sp and fp are one register: %#jx %#jx %#jx", (uintmax_t)arch_pc(&r),
	      (uintmax_t)arch_sp(&r), (uintmax_t)arch_fp(&r));
	s = r;
	arch_set_pc(&s, 0xa1);
	CHECK(arch_pc(&s) == 0xa1 && words_changed(&r, &s) == 1, "arch_set_pc");
	s = r;
	arch_set_sp(&s, 0xa2);
	CHECK(arch_sp(&s) == 0xa2 && words_changed(&r, &s) == 1, "arch_set_sp");
	s = r;
	arch_set_fp(&s, 0xa3);
	CHECK(arch_fp(&s) == 0xa3 && words_changed(&r, &s) == 1, "arch_set_fp");
}

static void check_saved(void)
{
	arch_regs_t r, s;
	int fp = 0;

	fill(&r);
	for (int i = 0; i < ARCH_NSAVED; i++) {
		uint64_t v = arch_saved_reg(&r, i);

		CHECK(v != arch_pc(&r) && v != arch_sp(&r), "saved %d is the pc or sp", i);
		fp += v == arch_fp(&r);
		for (int j = 0; j < i; j++)
			CHECK(arch_saved_reg(&r, j) != v, "saved %d and %d are one register", j, i);
		s = r;
		arch_set_saved_reg(&s, i, 0xb0 + (uint64_t)i);
		CHECK(arch_saved_reg(&s, i) == 0xb0 + (uint64_t)i && words_changed(&r, &s) == 1,
		      "arch_set_saved_reg %d", i);
	}
	CHECK(fp == 1, "fp is %d of the callee-saved registers", fp);
}

static void check_dwarf(void)
{
	arch_regs_t r;
	uint64_t dw[ARCH_DW_NREGS];

	fill(&r);
	arch_dw_initial(&r, dw);
	CHECK(dw[ARCH_DW_SP] == arch_sp(&r), "DWARF's sp");
	CHECK(dw[ARCH_DW_FP] == arch_fp(&r), "DWARF's fp");
	for (int i = 0; i < ARCH_NSAVED; i++)
		CHECK(arch_dw_saved[i] < ARCH_DW_NREGS && dw[arch_dw_saved[i]] == arch_saved_reg(&r, i),
		      "DWARF's saved %d (%u)", i, arch_dw_saved[i]);
	for (int i = 0; i < ARCH_DW_NREGS; i++)
		for (int j = 0; j < i; j++)
			CHECK(dw[i] != dw[j], "DWARF %d and %d are one register", j, i);
#if defined(__x86_64__)
	/* the psABI's: rbp 6, rsp 7, the return address (rip) 16 */
	CHECK(ARCH_DW_FP == 6 && ARCH_DW_SP == 7 && ARCH_DW_RA == 16 && ARCH_DW_NREGS == 17,
	      "x86-64 DWARF numbers");
	CHECK(dw[ARCH_DW_RA] == arch_pc(&r), "DWARF's return address column is not the pc");
#endif
}

static void check_libunwind(void)
{
#ifdef HAVE_LIBUNWIND
	arch_regs_t r;
	uint64_t v;

	fill(&r);
	CHECK(arch_unw_get(&r, UNW_REG_IP, &v) == 0 && v == arch_pc(&r), "libunwind's pc");
	CHECK(arch_unw_get(&r, UNW_REG_SP, &v) == 0 && v == arch_sp(&r), "libunwind's sp");
	for (int i = 0; i < ARCH_NSAVED; i++)
		CHECK(arch_unw_get(&r, arch_unw_saved[i], &v) == 0 && v == arch_saved_reg(&r, i),
		      "libunwind's saved %d (%d)", i, arch_unw_saved[i]);
	CHECK(arch_unw_get(&r, -1, &v) < 0 && arch_unw_get(&r, 100000, &v) < 0,
	      "libunwind: a register of no number");
#endif
}

static void check_perf(void)
{
	uint64_t v[ARCH_PERF_NREGS];
	arch_regs_t r, fresh;

	CHECK(ARCH_PERF_NREGS <= 64 && ARCH_PERF_REGS_MASK != 0 &&
	      !(ARCH_PERF_REGS_MASK >> (ARCH_PERF_NREGS - 1) >> 1), "perf's mask %#jx, %d registers",
	      (uintmax_t)ARCH_PERF_REGS_MASK, ARCH_PERF_NREGS);
	for (int i = 0; i < ARCH_PERF_NREGS; i++)
		v[i] = (ARCH_PERF_REGS_MASK >> i) & 1 ? 0x5000 + (uint64_t)i : 0;
	memset(&r, 0, sizeof(r));
	fresh = r;
	arch_regs_from_perf(&r, v);
#if defined(__x86_64__)
	/* the kernel's numbers; DS, ES, FS and GS refused */
	CHECK((int)ARCH_PERF_NREGS == (int)PERF_REG_X86_64_MAX, "perf: %d registers", ARCH_PERF_NREGS);
	CHECK(ARCH_PERF_REGS_MASK == (((1ULL << PERF_REG_X86_64_MAX) - 1) &
				      ~((1ULL << PERF_REG_X86_DS) | (1ULL << PERF_REG_X86_ES) |
					(1ULL << PERF_REG_X86_FS) | (1ULL << PERF_REG_X86_GS))),
	      "perf's mask %#jx", (uintmax_t)ARCH_PERF_REGS_MASK);
	CHECK(arch_pc(&r) == 0x5000 + PERF_REG_X86_IP, "perf's pc %#jx", (uintmax_t)arch_pc(&r));
	CHECK(arch_sp(&r) == 0x5000 + PERF_REG_X86_SP, "perf's sp %#jx", (uintmax_t)arch_sp(&r));
	CHECK(arch_fp(&r) == 0x5000 + PERF_REG_X86_BP, "perf's fp %#jx", (uintmax_t)arch_fp(&r));
	{
		static const int saved[ARCH_NSAVED] = {
			PERF_REG_X86_BX, PERF_REG_X86_BP, PERF_REG_X86_R12,
			PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
		};

		for (int i = 0; i < ARCH_NSAVED; i++)
			CHECK(arch_saved_reg(&r, i) == 0x5000 + (uint64_t)saved[i],
			      "perf's saved %d %#jx", i, (uintmax_t)arch_saved_reg(&r, i));
	}
	CHECK(arch_syscall_nr(&r) == -1, "a sample's syscall number %ld", arch_syscall_nr(&r));
#endif
	/* each register of the sample in one place of its own */
	CHECK(words_changed(&fresh, &r) >= __builtin_popcountll(ARCH_PERF_REGS_MASK) - 1,
	      "perf: %d registers taken of %d", words_changed(&fresh, &r),
	      __builtin_popcountll(ARCH_PERF_REGS_MASK));
}

int main(void)
{
	check_accessors();
	check_saved();
	check_dwarf();
	check_libunwind();
	check_perf();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * arch-syscalls.c - the arch's part of the syscall and allocator
 * sources (src/arch/arch.h, cpu.h, syscalls.c, stub-abi.h): the ABI of
 * a syscall stop (arch_abi_of_stop(), int $0x80 told by the code it
 * reads through the caller's function), the width of a result, the
 * syscall table against the C library's numbers, the audit arches, the
 * registers of a ring record and a thread's stack top.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "arch/arch.h"
#include "arch/stub-abi.h"
#include "unit-check.h"

static int nreads;
static uint64_t read_at;

/* ctx: the two bytes before the pc, or NULL: the read fails */
static int read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	nreads++;
	read_at = addr;
	if (!ctx || len != 2)
		return -EFAULT;
	memcpy(buf, ctx, len);
	return 0;
}

static enum abi abi_of(uint64_t cs, uint64_t nr, const void *code)
{
	arch_regs_t r;

	memset(&r, 0, sizeof(r));
	r.cs = cs;
	r.orig_rax = nr;
	r.rip = 0x401002;
	nreads = 0;
	read_at = 0;
	return arch_abi_of_stop(&r, read_code, (void *)(uintptr_t)code);
}

static void check_abi(void)
{
	static const unsigned char sc[2] = { 0x0f, 0x05 }, int80[2] = { 0xcd, 0x80 };

	CHECK(abi_of(0x33, SYS_mmap, sc) == ABI_X86_64, "syscall: not x86-64");
	CHECK(nreads == 1 && read_at == 0x401000, "syscall: %d reads at %#lx", nreads,
	      (unsigned long)read_at);
	CHECK(abi_of(0x33, 192, int80) == ABI_I386, "int $0x80 from 64-bit code: not i386");
	CHECK(abi_of(0x23, 192, NULL) == ABI_I386, "32-bit code: not i386");
	CHECK(nreads == 0, "32-bit code: its code read");
	CHECK(abi_of(0x33, SYS_mmap, NULL) == ABI_X86_64, "code not read: not x86-64");
	CHECK(abi_of(0x33, X32_SYSCALL_BIT | 9, sc) == ABI_X32, "the x32 bit: not x32");
	CHECK(arch_abi_bits(ABI_I386) == 32, "i386: %d bits", arch_abi_bits(ABI_I386));
	CHECK(arch_abi_bits(ABI_X32) == 64, "x32: %d bits", arch_abi_bits(ABI_X32));
	CHECK(arch_abi_bits(ABI_X86_64) == 64, "x86-64: %d bits", arch_abi_bits(ABI_X86_64));
}

static void check_table(void)
{
	static const struct { enum sc_id id; long nr; } wrappers[] = {
		{ SC_BRK, SYS_brk }, { SC_MMAP, SYS_mmap }, { SC_MUNMAP, SYS_munmap },
		{ SC_MREMAP, SYS_mremap }, { SC_MPROTECT, SYS_mprotect },
		{ SC_MADVISE, SYS_madvise }, { SC_EXECVE, SYS_execve },
	};
	unsigned seen = 0;

	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
		const struct arch_syscall *d = arch_syscall_by_id(ARCH_ABI_NATIVE, wrappers[i].id);

		CHECK(d && d->nr == wrappers[i].nr && d->abi == ARCH_ABI_NATIVE,
		      "sc_id %d: not the C library's number %ld", wrappers[i].id, wrappers[i].nr);
		CHECK(d && arch_syscall_lookup(ARCH_ABI_NATIVE, wrappers[i].nr) == d,
		      "sc_id %d: looked up by number, another entry", wrappers[i].id);
	}
	CHECK(!arch_syscall_lookup(ARCH_ABI_NATIVE, SYS_getpid), "getpid is in the table");
	for (size_t i = 0; i < arch_nsyscalls; i++)
		CHECK(arch_syscalls[i].abi < ABI_COUNT && arch_syscalls[i].id < SC_NIDS &&
		      arch_syscalls[i].name, "entry %zu out of range", i);
	for (size_t i = 0; i < arch_naudits; i++) {
		CHECK(!(seen & arch_audits[i].abis), "audit arch %zu: an ABI twice", i);
		seen |= arch_audits[i].abis;
	}
	CHECK(seen == (1u << ABI_COUNT) - 1, "the audit arches miss an ABI: %#x", seen);
	CHECK(arch_naudits && arch_audits[0].audit_arch == ARCH_AUDIT_NATIVE &&
	      (arch_audits[0].abis & (1u << ARCH_ABI_NATIVE)), "the first audit arch is not memtap's");
}

static void check_record(void)
{
	uint8_t rec[R_STACK];
	arch_regs_t r, want;
	const uint64_t saved[ARCH_NSAVED] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66 };
	const unsigned off[ARCH_NSAVED] = { R_RBX, R_RBP, R_R12, R_R13, R_R14, R_R15 };
	uint64_t ret = 0x7f0000001234, sp = 0x7ffc00000100;

	memset(rec, 0xee, sizeof(rec));
	memcpy(rec + R_RET, &ret, 8);
	memcpy(rec + R_SP, &sp, 8);
	for (int i = 0; i < ARCH_NSAVED; i++)
		memcpy(rec + off[i], &saved[i], 8);
	memset(&r, 0xaa, sizeof(r));
	want = r;
	arch_regs_from_record(&r, rec);
	CHECK(arch_pc(&r) == ret, "pc %#lx", (unsigned long)arch_pc(&r));
	CHECK(arch_sp(&r) == sp + 8, "sp %#lx: not above the return address",
	      (unsigned long)arch_sp(&r));
	for (int i = 0; i < ARCH_NSAVED; i++) {
		CHECK(arch_saved_reg(&r, i) == saved[i], "saved register %d: %#lx", i,
		      (unsigned long)arch_saved_reg(&r, i));
		arch_set_saved_reg(&want, i, saved[i]);
	}
	arch_set_pc(&want, ret);
	arch_set_sp(&want, sp + 8);
	CHECK(!memcmp(&r, &want, sizeof(r)), "registers a record does not hold were changed");
	CHECK(arch_stack_top_from_tp(0x7f0000100000) == 0x7f0000100000,
	      "a thread's stack does not end at its TCB");
}

int main(void)
{
	check_abi();
	check_table();
	check_record();
	printf(failures ? "failed\n" : "ok\n");
	return failures != 0;
}

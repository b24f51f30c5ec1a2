/*
 * bp-arch-unit.c - the breakpoints' side of the arch interface
 * (arch/bp_arch.h, cpu.h) and hole_find()'s reach, against what the
 * probes rely on: a breakpoint filled is one the decoder refuses to
 * cover again, the pc a hit reports names its breakpoint, an emulated
 * call leaves the registers untouched when its write fails, a hooked
 * return slot is the one the return names, and a hole is found within
 * the reach asked for and no further.  Prints "ok" last when all hold.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "probe/hole.h"
#include "unit-check.h"

/* A few words of fake target memory at MEM_BASE. */
#define MEM_BASE 0x7ffd0000f000ULL
#define MEM_WORDS 8

struct fake {
	uint64_t w[MEM_WORDS];
	int fail_writes;
	int writes;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	if (addr < MEM_BASE || addr + len > MEM_BASE + sizeof(f->w))
		return -EFAULT;
	memcpy(buf, (uint8_t *)f->w + (addr - MEM_BASE), len);
	return 0;
}

static int fake_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct fake *f = ctx;

	if (f->fail_writes || addr < MEM_BASE || addr + len > MEM_BASE + sizeof(f->w))
		return -EIO;
	memcpy((uint8_t *)f->w + (addr - MEM_BASE), buf, len);
	f->writes++;
	return 0;
}

static void check_fill_and_pc(void)
{
	uint8_t buf[3 * ARCH_BP_LEN];
	struct bp_insn insn;
	uint64_t addr = 0x401000;

	memset(buf, 0, sizeof(buf));
	arch_bp_fill(buf, sizeof(buf));
	CHECK(bp_arch_decode(addr, buf, sizeof(buf), &insn) == -EBUSY,
	      "a filled breakpoint is not seen as one already there");
	/* the pc a hit reports, from running the breakpoint at addr */
	CHECK(arch_bp_addr_from_pc(addr + ARCH_BP_LEN) == addr ||
	      arch_bp_addr_from_pc(addr) == addr,
	      "the pc of a hit does not name its breakpoint");
}

static void check_emulate(void)
{
	/* e8 rel32: call addr + 5 + 0x100 */
	static const uint8_t call[] = { 0xe8, 0x00, 0x01, 0x00, 0x00 };
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t mov[] = { 0x48, 0x89, 0xe5 };	/* mov %rsp,%rbp */
	uint64_t addr = 0x401000, sp = MEM_BASE + 4 * 8;
	struct fake f = { .fail_writes = 0 };
	struct bp_insn insn;
	arch_regs_t r, before;

	memset(&r, 0, sizeof(r));
	CHECK(bp_arch_decode(addr, call, sizeof(call), &insn) == 0 && insn.kind == BPI_CALL,
	      "call rel32 not decoded as a call");
	arch_set_pc(&r, addr);
	arch_set_sp(&r, sp);
	before = r;
	f.fail_writes = 1;
	CHECK(arch_bp_emulate(&insn, addr, &r, fake_write, &f) == -EIO,
	      "a failed write of the return address not reported");
	CHECK(!memcmp(&r, &before, sizeof(r)), "registers changed by a failed call");
	f.fail_writes = 0;
	CHECK(arch_bp_emulate(&insn, addr, &r, fake_write, &f) == 0, "call not emulated");
	CHECK(arch_pc(&r) == addr + 5 + 0x100, "call: pc %#llx",
	      (unsigned long long)arch_pc(&r));
	CHECK(arch_caller_at_entry(&r, fake_read, &f) == addr + 5,
	      "call: the callee's return address is not the call's next instruction");

	memset(&r, 0, sizeof(r));
	CHECK(bp_arch_decode(addr, endbr, sizeof(endbr), &insn) == 0 && insn.kind == BPI_ENDBR,
	      "endbr64 not decoded");
	CHECK(arch_bp_emulate(&insn, addr, &r, fake_write, &f) == 0 &&
	      arch_pc(&r) == addr + 4, "endbr64: pc %#llx", (unsigned long long)arch_pc(&r));

	memset(&r, 0, sizeof(r));
	CHECK(bp_arch_decode(addr, mov, sizeof(mov), &insn) == 0 && bp_arch_needs_slot(&insn),
	      "mov does not need a slot");
	before = r;
	CHECK(arch_bp_emulate(&insn, addr, &r, fake_write, &f) == -EINVAL &&
	      !memcmp(&r, &before, sizeof(r)), "an instruction needing a slot was emulated");
}

static void check_ret_hook(void)
{
	uint64_t ra = 0x401234, tramp = 0x7f0000001000ULL, sp = MEM_BASE + 2 * 8;
	struct fake f = { .fail_writes = 0 };
	arch_regs_t r;
	uint64_t slot;

	memset(&r, 0, sizeof(r));
	arch_set_sp(&r, sp);
	f.w[2] = ra;
	CHECK(arch_caller_at_entry(&r, fake_read, &f) == ra, "caller at entry");
	slot = arch_ret_slot_at_entry(&r);
	CHECK(arch_ret_hook(&r, tramp, fake_write, &f) == 0, "return not hooked");
	CHECK(arch_caller_at_entry(&r, fake_read, &f) == tramp,
	      "the hooked return does not go to the trampoline");
	/* the function returns: ret takes the return address */
	arch_set_sp(&r, sp + 8);
	arch_set_pc(&r, tramp);
	CHECK(arch_ret_slot_at_return(&r) == slot,
	      "the slot a return names (%#llx) is not the one hooked (%#llx)",
	      (unsigned long long)arch_ret_slot_at_return(&r), (unsigned long long)slot);
	arch_set_sp(&r, 0x1000);
	CHECK(arch_caller_at_entry(&r, fake_read, &f) == 0, "an unreadable caller is not 0");
}

static void check_reach(void)
{
	uint64_t a = 0x555500000000ULL;

	CHECK(arch_in_reach(a, a + ARCH_NEAR_REACH - 1), "near reach up");
	CHECK(arch_in_reach(a, a - ARCH_NEAR_REACH + 1), "near reach down");
	CHECK(!arch_in_reach(a, a + ARCH_NEAR_REACH), "beyond reach up");
	CHECK(!arch_in_reach(a, a - ARCH_NEAR_REACH), "beyond reach down");
	CHECK(bp_arch_in_rel32(a, a + ARCH_NEAR_REACH - 1) &&
	      !bp_arch_in_rel32(a, a + ARCH_NEAR_REACH), "rel32 and the near reach differ");
}

static void check_hole(void)
{
	const uint64_t x = 0x7f0000000000ULL, page = 0x1000;
	/* 1 GiB taken right below the code, nothing above it */
	struct procfs_map m[2];
	uint64_t h;

	memset(m, 0, sizeof(m));
	m[0].start = x - 0x40000000;
	m[0].end = x;
	m[1].start = x;
	m[1].end = x + page;
	h = hole_find(m, 2, x, x + page, page, ARCH_NEAR_REACH);
	CHECK(h == x - 0x40000000 - page, "hole within the near reach: %#llx",
	      (unsigned long long)h);
	h = hole_find(m, 2, x, x + page, page, 0x20000000);
	CHECK(h == x + page, "hole within 512 MiB: %#llx", (unsigned long long)h);
	h = hole_find(m, 2, x, x + page, page, 3 * page);
	CHECK(h == 0, "hole beyond a reach of 3 pages: %#llx", (unsigned long long)h);
}

int main(void)
{
	check_fill_and_pc();
	check_emulate();
	check_ret_hook();
	check_reach();
	check_hole();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

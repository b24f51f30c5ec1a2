/*
 * arch-insn.c - the instruction-analysis unwinder through its
 * interface (stack/unwind/unwind-insn.h, arch/insn-unwind.h), on x86-64 code
 * made here: the rule of a frame at each pc of a function with a frame
 * pointer; a breakpoint at an exact pc (the entry's rule) and at a
 * return address (none); a tail call into the probes' stubs, and into a
 * function whose entry jumps there or holds a breakpoint, ending the
 * path as a return would only when the caller's is_probe_entry() says
 * so; unwind_insn_probe_entry() over a process's stub ranges.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "stack/modules.h"
#include "stack/unwind/unwind-insn.h"
#include "unit-check.h"

#define BASE 0x400000u		/* the code below, as the target would hold it */
#define STUBS 0x500000u		/* the probes' stubs: never read */
#define STUBS_LEN 0x1000u

static uint8_t code[0x800];
static int probe_asks;

static int read_code(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (addr < BASE || addr - BASE > sizeof(code) || len > sizeof(code) - (addr - BASE))
		return -1;
	memcpy(buf, code + (addr - BASE), len);
	return 0;
}

static int in_stubs(const void *probes, uint64_t addr)
{
	(void)probes;
	probe_asks++;
	return addr >= STUBS && addr < STUBS + STUBS_LEN;
}

/* Bytes at BASE + at. */
static void put(uint64_t at, const uint8_t *b, size_t n)
{
	memcpy(code + at, b, n);
}

/* jmp rel32 at BASE + at to to. */
static void put_jmp(uint64_t at, uint64_t to)
{
	int32_t rel = (int32_t)(to - (BASE + at + 5));

	code[at] = 0xe9;
	memcpy(code + at + 1, &rel, 4);
}

/* unwind_insn_rule() at BASE + at: its result, and the rule in *r. */
static int rule_at(uint64_t at, int exact, int probes, struct insn_rule *r)
{
	const struct insn_code c = { read_code, NULL, probes ? in_stubs : NULL, NULL };

	memset(r, 0x55, sizeof(*r));
	return unwind_insn_rule(&c, BASE + at, exact, r);
}

static void check_rule(uint64_t at, int exact, int reg, int32_t cfa_off, int32_t fp_off)
{
	struct insn_rule r;
	int k = rule_at(at, exact, 1, &r);

	CHECK(k == 0, "+%#lx: no rule", (unsigned long)at);
	if (k)
		return;
	CHECK(r.cfa_reg == reg && r.cfa_off == cfa_off,
	      "+%#lx: CFA %s%+d, not %s%+d", (unsigned long)at,
	      r.cfa_reg == INSN_REG_SP ? "sp" : "fp", r.cfa_off,
	      reg == INSN_REG_SP ? "sp" : "fp", cfa_off);
	CHECK(r.ra_off == -8, "+%#lx: the return address at CFA%+d", (unsigned long)at, r.ra_off);
	CHECK(r.fp_off == fp_off, "+%#lx: fp at CFA%+d, not %+d", (unsigned long)at, r.fp_off,
	      fp_off);
}

static void check_frame(void)
{
	/* push %rbp; mov %rsp,%rbp; sub $0x10,%rsp; leave; ret */
	static const uint8_t f[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xc9, 0xc3 };

	put(0, f, sizeof(f));
	check_rule(0, 1, INSN_REG_SP, 8, 0);
	check_rule(1, 1, INSN_REG_SP, 16, -16);
	check_rule(4, 1, INSN_REG_FP, 16, -16);
	check_rule(8, 1, INSN_REG_FP, 16, -16);
	check_rule(9, 1, INSN_REG_SP, 8, 0);
	/* a return address: the state after the call, the same here */
	check_rule(4, 0, INSN_REG_FP, 16, -16);
}

static void check_breakpoint(void)
{
	struct insn_rule r, entry;

	code[0x600] = 0xcc;
	arch_insn_entry_rule(&entry);
	CHECK(entry.cfa_reg == INSN_REG_SP && entry.cfa_off == 8 && entry.ra_off == -8 &&
	      entry.fp_off == 0, "the entry's rule: CFA %d%+d, ra %+d, fp %+d", entry.cfa_reg,
	      entry.cfa_off, entry.ra_off, entry.fp_off);
	CHECK(rule_at(0x600, 1, 1, &r) == 0 && r.cfa_reg == entry.cfa_reg &&
	      r.cfa_off == entry.cfa_off && r.ra_off == entry.ra_off && r.fp_off == entry.fp_off,
	      "a breakpoint at the pc: not the entry's rule");
	CHECK(rule_at(0x600, 0, 1, &r) != 0, "a breakpoint at a return address: a rule");
}

static void check_probed(void)
{
	struct insn_rule r;
	static const uint8_t add8[] = { 0x48, 0x83, 0xc4, 0x08 };	/* add $8,%rsp */

	/* a tail call into the stubs */
	put(0x100, add8, sizeof(add8));
	put_jmp(0x104, STUBS + 0x40);
	/* a tail call of a function whose entry jumps into the stubs (a detour) */
	put(0x200, add8, sizeof(add8));
	put_jmp(0x204, BASE + 0x300);
	put_jmp(0x300, STUBS + 0x80);
	/* a tail call of a function with a breakpoint at its entry */
	put(0x400, add8, sizeof(add8));
	put_jmp(0x404, BASE + 0x600);

	for (uint64_t at = 0x100; at <= 0x400; at += 0x100) {
		if (at == 0x300)
			continue;
		probe_asks = 0;
		check_rule(at, 1, INSN_REG_SP, 16, 0);
		CHECK(probe_asks > 0, "+%#lx: is_probe_entry() not asked", (unsigned long)at);
	}
	/* without is_probe_entry(): the stubs' code is followed, and unreadable */
	CHECK(rule_at(0x100, 1, 0, &r) != 0, "a jmp into unknown stubs: a rule");
	CHECK(rule_at(0x200, 1, 0, &r) != 0, "a jmp to a jmp into unknown stubs: a rule");
	CHECK(rule_at(0x400, 1, 0, &r) == 0 && r.cfa_off == 16,
	      "a jmp to a breakpoint, no stubs known: no rule");
}

static void check_probe_entry(void)
{
	struct proc_modules *pm = proc_modules_new(getpid());

	CHECK(!unwind_insn_probe_entry(NULL, STUBS), "no modules: stubs");
	CHECK(!unwind_insn_probe_entry(pm, STUBS), "no stubs yet: stubs");
	modules_add_stubs(pm, STUBS, STUBS_LEN, NULL);
	CHECK(unwind_insn_probe_entry(pm, STUBS), "the stubs' start: not stubs");
	CHECK(unwind_insn_probe_entry(pm, STUBS + STUBS_LEN - 1), "the stubs' end: not stubs");
	CHECK(!unwind_insn_probe_entry(pm, STUBS + STUBS_LEN), "past the stubs: stubs");
	CHECK(!unwind_insn_probe_entry(pm, STUBS - 1), "before the stubs: stubs");
	proc_modules_free(pm);
}

int main(void)
{
	memset(code, 0xcc, sizeof(code));
	check_frame();
	check_breakpoint();
	check_probed();
	check_probe_entry();
	printf(failures ? "failed\n" : "ok\n");
	return failures != 0;
}

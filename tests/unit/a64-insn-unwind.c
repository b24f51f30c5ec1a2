/*
 * a64-insn-unwind.c - the A64 instruction analysis of
 * src/arch/aarch64/insn-unwind.c on hand-made code with known rules:
 * a prologue, body and epilogue, a leaf without a frame and one with
 * stack, large frames (sub sp, sp, #1, lsl #12; sub sp, sp, x12 with
 * x12 made by MOVZ and MOVK, and x12 lost to a call; SVE's ADDVL), a
 * frame record stored above the locals, alloca (sp from x29), a tail
 * call, a loop, both arms of branches, PACIASP/AUTIASP and RETAA, a
 * call that does not return, BR and an unknown write of sp, tail calls
 * of a probed entry (BRK #0, the stubs) and of a PLT entry, the BRK of
 * a breakpoint at an exact pc, x30 spilled alone beside SIMD registers,
 * q30 loaded and x30 written from a SIMD register.  The words were
 * made by binutils (aarch64-linux-gnu-as -march=armv8.3-a+sve, linked
 * at 0x400000; the comments are objdump's), not by memtap.  Runs on any
 * host: the analysis only reads the words through the read callback.
 * Prints "ok" last when all hold.
 *
 * arch/arch.h, which arch/insn-unwind.h includes, is this host's CPU's:
 * the build defines its guard and aarch64's DWARF numbers instead
 * (tests/Makefile.inc).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "arch/insn-unwind.h"
#include "unit-check.h"

#if ARCH_DW_SP != 31 || ARCH_DW_FP != 29
#error "not aarch64's DWARF numbers"
#endif

#define BASE 0x400000ull
#define SIZE 0xf00
#define STUBS 0x400c80ull	/* memtap's probes: [STUBS, STUBS + 0x80) */

static const struct {
	uint64_t at;
	uint32_t w;
} words[] = {
	{ 0x400000, 0xa9be7bfd },	/* stp x29, x30, [sp, #-32]! */
	{ 0x400004, 0x910003fd },	/* mov x29, sp */
	{ 0x400008, 0xf9000bf3 },	/* str x19, [sp, #16] */
	{ 0x40000c, 0x9400003d },	/* bl 400100 <callee> */
	{ 0x400010, 0xf9400bf3 },	/* ldr x19, [sp, #16] */
	{ 0x400014, 0xa8c27bfd },	/* ldp x29, x30, [sp], #32 */
	{ 0x400018, 0xd65f03c0 },	/* ret */
	{ 0x400100, 0xd65f03c0 },	/* ret */
	{ 0x400200, 0xb4000060 },	/* cbz x0, 40020c <leaf+0xc> */
	{ 0x400204, 0x91000400 },	/* add x0, x0, #0x1 */
	{ 0x400208, 0xd65f03c0 },	/* ret */
	{ 0x40020c, 0xd2800000 },	/* mov x0, #0x0 */
	{ 0x400210, 0xd65f03c0 },	/* ret */
	{ 0x400300, 0xd100c3ff },	/* sub sp, sp, #0x30 */
	{ 0x400304, 0xf90007e0 },	/* str x0, [sp, #8] */
	{ 0x400308, 0x9100c3ff },	/* add sp, sp, #0x30 */
	{ 0x40030c, 0xd65f03c0 },	/* ret */
	{ 0x400400, 0xd14007ff },	/* sub sp, sp, #0x1, lsl #12 */
	{ 0x400404, 0xd10043ff },	/* sub sp, sp, #0x10 */
	{ 0x400408, 0xf90003ff },	/* str xzr, [sp] */
	{ 0x40040c, 0x910043ff },	/* add sp, sp, #0x10 */
	{ 0x400410, 0x914007ff },	/* add sp, sp, #0x1, lsl #12 */
	{ 0x400414, 0xd65f03c0 },	/* ret */
	{ 0x400500, 0xd10103ff },	/* sub sp, sp, #0x40 */
	{ 0x400504, 0xa9017bfd },	/* stp x29, x30, [sp, #16] */
	{ 0x400508, 0x910043fd },	/* add x29, sp, #0x10 */
	{ 0x40050c, 0x97fffefd },	/* bl 400100 <callee> */
	{ 0x400510, 0xa9417bfd },	/* ldp x29, x30, [sp, #16] */
	{ 0x400514, 0x910103ff },	/* add sp, sp, #0x40 */
	{ 0x400518, 0xd65f03c0 },	/* ret */
	{ 0x400600, 0xa9bf7bfd },	/* stp x29, x30, [sp, #-16]! */
	{ 0x400604, 0x910003fd },	/* mov x29, sp */
	{ 0x400608, 0xcb2063ff },	/* sub sp, sp, x0 */
	{ 0x40060c, 0x97fffebd },	/* bl 400100 <callee> */
	{ 0x400610, 0x910003bf },	/* mov sp, x29 */
	{ 0x400614, 0xa8c17bfd },	/* ldp x29, x30, [sp], #16 */
	{ 0x400618, 0xd65f03c0 },	/* ret */
	{ 0x400700, 0xa9bf7bfd },	/* stp x29, x30, [sp, #-16]! */
	{ 0x400704, 0x910003fd },	/* mov x29, sp */
	{ 0x400708, 0x97fffe7e },	/* bl 400100 <callee> */
	{ 0x40070c, 0xa8c17bfd },	/* ldp x29, x30, [sp], #16 */
	{ 0x400710, 0x1400001c },	/* b 400780 <tailed> */
	{ 0x400780, 0x91000400 },	/* add x0, x0, #0x1 */
	{ 0x400784, 0xd65f03c0 },	/* ret */
	{ 0x400800, 0xd2800001 },	/* mov x1, #0x0 */
	{ 0x400804, 0x91000421 },	/* add x1, x1, #0x1 */
	{ 0x400808, 0xeb00003f },	/* cmp x1, x0 */
	{ 0x40080c, 0x54ffffc1 },	/* b.ne 400804 <loop+0x4> */
	{ 0x400810, 0xd65f03c0 },	/* ret */
	{ 0x400880, 0xb5000040 },	/* cbnz x0, 400888 <both+0x8> */
	{ 0x400884, 0x14000000 },	/* b 400884 <both+0x4> */
	{ 0x400888, 0x36180041 },	/* tbz w1, #3, 400890 <both+0x10> */
	{ 0x40088c, 0xd4200020 },	/* brk #0x1 */
	{ 0x400890, 0xd65f03c0 },	/* ret */
	{ 0x400900, 0xd503233f },	/* paciasp */
	{ 0x400904, 0xa9bf7bfd },	/* stp x29, x30, [sp, #-16]! */
	{ 0x400908, 0x910003fd },	/* mov x29, sp */
	{ 0x40090c, 0x97fffdfd },	/* bl 400100 <callee> */
	{ 0x400910, 0xa8c17bfd },	/* ldp x29, x30, [sp], #16 */
	{ 0x400914, 0xd50323bf },	/* autiasp */
	{ 0x400918, 0xd65f03c0 },	/* ret */
	{ 0x400980, 0xd503233f },	/* paciasp */
	{ 0x400984, 0xa9bf7bfd },	/* stp x29, x30, [sp, #-16]! */
	{ 0x400988, 0xa8c17bfd },	/* ldp x29, x30, [sp], #16 */
	{ 0x40098c, 0xd65f0bff },	/* retaa */
	{ 0x400a00, 0xa9bf7bfd },	/* stp x29, x30, [sp, #-16]! */
	{ 0x400a04, 0x910003fd },	/* mov x29, sp */
	{ 0x400a08, 0xb40000a0 },	/* cbz x0, 400a1c <next+0xc> */
	{ 0x400a0c, 0x97fffdbd },	/* bl 400100 <callee> */
	{ 0x400a10, 0xa9bf7bfd },	/* stp x29, x30, [sp, #-16]! */
	{ 0x400a14, 0xa8c17bfd },	/* ldp x29, x30, [sp], #16 */
	{ 0x400a18, 0xd65f03c0 },	/* ret */
	{ 0x400a1c, 0xa8c17bfd },	/* ldp x29, x30, [sp], #16 */
	{ 0x400a20, 0xd65f03c0 },	/* ret */
	{ 0x400a80, 0xd61f0020 },	/* br x1 */
	{ 0x400a84, 0x927cec1f },	/* and sp, x0, #0xfffffffffffffff0 */
	{ 0x400b00, 0x14000020 },	/* b 400b80 <brkfn> */
	{ 0x400b04, 0x1400005f },	/* b 400c80 <stubs> */
	{ 0x400b08, 0x1400003e },	/* b 400c00 <plt> */
	{ 0x400b80, 0xd4200000 },	/* brk #0x0 */
	{ 0x400b84, 0xd65f03c0 },	/* ret */
	{ 0x400c00, 0x90000010 },	/* adrp x16, 400000 <frame> */
	{ 0x400c04, 0xf9400a11 },	/* ldr x17, [x16, #16] */
	{ 0x400c08, 0x91004210 },	/* add x16, x16, #0x10 */
	{ 0x400c0c, 0xd61f0220 },	/* br x17 */
	{ 0x400c80, 0xd61f0200 },	/* br x16 */
	{ 0x400d00, 0xf81f0ffe },	/* str x30, [sp, #-16]! */
	{ 0x400d04, 0xd10083ff },	/* sub sp, sp, #0x20 */
	{ 0x400d08, 0x6d0127e8 },	/* stp d8, d9, [sp, #16] */
	{ 0x400d0c, 0x910083ff },	/* add sp, sp, #0x20 */
	{ 0x400d10, 0xf84107fe },	/* ldr x30, [sp], #16 */
	{ 0x400d14, 0xd65f03c0 },	/* ret */
	{ 0x400d80, 0xd286020c },	/* mov x12, #0x3010 */
	{ 0x400d84, 0xf2a0002c },	/* movk x12, #0x1, lsl #16 */
	{ 0x400d88, 0xcb2c63ff },	/* sub sp, sp, x12 */
	{ 0x400d8c, 0xa9007bfd },	/* stp x29, x30, [sp] */
	{ 0x400d90, 0x910003fd },	/* mov x29, sp */
	{ 0x400d94, 0x97fffcdb },	/* bl 400100 <callee> */
	{ 0x400d98, 0xa9407bfd },	/* ldp x29, x30, [sp] */
	{ 0x400d9c, 0xd286020c },	/* mov x12, #0x3010 */
	{ 0x400da0, 0xf2a0002c },	/* movk x12, #0x1, lsl #16 */
	{ 0x400da4, 0x8b2c63ff },	/* add sp, sp, x12 */
	{ 0x400da8, 0xd65f03c0 },	/* ret */
	{ 0x400e00, 0xd286020c },	/* mov x12, #0x3010 */
	{ 0x400e04, 0xcb2c63ff },	/* sub sp, sp, x12 */
	{ 0x400e08, 0x97fffcbe },	/* bl 400100 <callee> */
	{ 0x400e0c, 0x8b2c63ff },	/* add sp, sp, x12 */
	{ 0x400e10, 0xd65f03c0 },	/* ret */
	{ 0x400e80, 0x043f57df },	/* addvl sp, sp, #-2 */
	{ 0x400e84, 0xd65f03c0 },	/* ret */
	{ 0x400ea0, 0x9c00009e },	/* ldr q30, 400eb0 <vec+0x10> */
	{ 0x400ea4, 0xd65f03c0 },	/* ret */
	{ 0x400ea8, 0xd503201f },	/* nop */
	{ 0x400eac, 0xd503201f },	/* nop */
	{ 0x400ec0, 0x9e66001e },	/* fmov x30, d0 */
	{ 0x400ec4, 0xd65f03c0 },	/* ret */
};

static uint8_t image[SIZE];

static int image_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE))
		return -1;
	memcpy(buf, image + (addr - BASE), len);
	return 0;
}

static int reads;

static int counted_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	reads++;
	return image_read(arg, addr, buf, len);
}

static int in_stubs(const void *probes, uint64_t addr)
{
	(void)probes;
	return addr >= STUBS && addr < STUBS + 0x80;
}

#define SP INSN_REG_SP
#define FP INSN_REG_FP
#define NONE (-1)

static const struct rule_case {
	const char *what;
	uint64_t pc;
	int exact;
	int reg;		/* NONE: no rule */
	int32_t cfa_off, ra_off, fp_off;
} cases[] = {
	{ "frame: entry", 0x400000, 1, SP, 0, 0, 0 },
	{ "frame: record stored", 0x400004, 1, SP, 32, -24, -32 },
	{ "frame: fp set", 0x400008, 1, SP, 32, -24, -32 },
	{ "frame: at the call", 0x40000c, 1, SP, 32, -24, -32 },
	{ "frame: return address", 0x400010, 0, SP, 32, -24, -32 },
	{ "frame: after the call", 0x400010, 1, SP, 32, -24, -32 },
	{ "frame: epilogue", 0x400014, 1, SP, 32, -24, -32 },
	{ "frame: at ret", 0x400018, 1, SP, 0, 0, 0 },
	{ "frame: ret, x30 the call's", 0x400018, 0, NONE, 0, 0, 0 },
	{ "leaf: branch", 0x400200, 1, SP, 0, 0, 0 },
	{ "leaf: other arm", 0x40020c, 1, SP, 0, 0, 0 },
	{ "leaf: return address", 0x400204, 0, NONE, 0, 0, 0 },
	{ "leaf stack: entry", 0x400300, 1, SP, 0, 0, 0 },
	{ "leaf stack: body", 0x400304, 1, SP, 48, 0, 0 },
	{ "leaf stack: freeing", 0x400308, 1, SP, 48, 0, 0 },
	{ "leaf stack: at ret", 0x40030c, 1, SP, 0, 0, 0 },
	{ "big: lsl 12", 0x400404, 1, SP, 4096, 0, 0 },
	{ "big: body", 0x400408, 1, SP, 4112, 0, 0 },
	{ "big: last add", 0x400410, 1, SP, 4096, 0, 0 },
	{ "sub first: record not stored", 0x400504, 1, SP, 64, 0, 0 },
	{ "sub first: record stored", 0x400508, 1, SP, 64, -40, -48 },
	{ "sub first: return address", 0x400510, 0, SP, 64, -40, -48 },
	{ "sub first: record loaded", 0x400514, 1, SP, 64, 0, 0 },
	{ "alloca: sp from a register", 0x400608, 1, NONE, 0, 0, 0 },
	{ "alloca: call", 0x40060c, 1, FP, 16, -8, -16 },
	{ "alloca: return address", 0x400610, 0, FP, 16, -8, -16 },
	{ "alloca: sp from x29", 0x400614, 1, SP, 16, -8, -16 },
	{ "tail: fp set", 0x400704, 1, SP, 16, -8, -16 },
	{ "tail: return address", 0x40070c, 0, SP, 16, -8, -16 },
	{ "tail: b", 0x400710, 1, SP, 0, 0, 0 },
	{ "loop: entry", 0x400800, 1, SP, 0, 0, 0 },
	{ "loop: back edge", 0x40080c, 1, SP, 0, 0, 0 },
	{ "both: taken arms", 0x400880, 1, SP, 0, 0, 0 },
	{ "both: a b to itself", 0x400884, 1, NONE, 0, 0, 0 },
	{ "pac: paciasp", 0x400900, 1, SP, 0, 0, 0 },
	{ "pac: signed", 0x400904, 1, SP, 0, 0, 0 },
	{ "pac: record stored", 0x400908, 1, SP, 16, -8, -16 },
	{ "pac: return address", 0x400910, 0, SP, 16, -8, -16 },
	{ "pac: autiasp", 0x400914, 1, SP, 0, 0, 0 },
	{ "retaa: signed", 0x400984, 1, SP, 0, 0, 0 },
	{ "retaa: record stored", 0x400988, 1, SP, 16, -8, -16 },
	{ "retaa: at retaa", 0x40098c, 1, SP, 0, 0, 0 },
	{ "noreturn: the other arm", 0x400a08, 1, SP, 16, -8, -16 },
	{ "noreturn: the call", 0x400a0c, 1, NONE, 0, 0, 0 },
	{ "br", 0x400a80, 1, NONE, 0, 0, 0 },
	{ "and sp", 0x400a84, 1, NONE, 0, 0, 0 },
	{ "tail call of a breakpoint", 0x400b00, 1, SP, 0, 0, 0 },
	{ "tail call into the stubs", 0x400b04, 1, SP, 0, 0, 0 },
	{ "tail call of a plt entry", 0x400b08, 1, SP, 0, 0, 0 },
	{ "breakpoint at an exact pc", 0x400b80, 1, SP, 0, 0, 0 },
	{ "brk at a return address", 0x400b80, 0, NONE, 0, 0, 0 },
	{ "spill: entry", 0x400d00, 1, SP, 0, 0, 0 },
	{ "spill: x30 stored", 0x400d04, 1, SP, 16, -16, 0 },
	{ "spill: d8, d9 beside", 0x400d08, 1, SP, 48, -16, 0 },
	{ "spill: d8, d9 stored", 0x400d0c, 1, SP, 48, -16, 0 },
	{ "spill: x30 loaded", 0x400d10, 1, SP, 16, -16, 0 },
	{ "constant: entry", 0x400d80, 1, SP, 0, 0, 0 },
	{ "constant: made before the pc", 0x400d88, 1, NONE, 0, 0, 0 },
	{ "constant: sp moved", 0x400d8c, 1, SP, 0x13010, 0, 0 },
	{ "constant: record stored", 0x400d90, 1, SP, 0x13010, -0x13008, -0x13010 },
	{ "constant: return address", 0x400d98, 0, SP, 0x13010, -0x13008, -0x13010 },
	{ "constant: record loaded", 0x400d9c, 1, SP, 0x13010, 0, 0 },
	{ "constant: lost to a call", 0x400e00, 1, NONE, 0, 0, 0 },
	{ "addvl sp", 0x400e80, 1, NONE, 0, 0, 0 },
	{ "ldr q30: not x30", 0x400ea0, 1, SP, 0, 0, 0 },
	{ "fmov x30", 0x400ec0, 1, NONE, 0, 0, 0 },
	{ "unreadable", 0x500000, 1, NONE, 0, 0, 0 },
	{ "not aligned", 0x400002, 1, NONE, 0, 0, 0 },
	{ "udf", 0x400020, 1, NONE, 0, 0, 0 },
};

int main(void)
{
	const struct insn_code code = { image_read, NULL, in_stubs, NULL };
	const struct insn_code counted = { counted_read, NULL, NULL, NULL };
	struct insn_rule r;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		uint8_t *p = image + (words[i].at - BASE);

		p[0] = (uint8_t)words[i].w;
		p[1] = (uint8_t)(words[i].w >> 8);
		p[2] = (uint8_t)(words[i].w >> 16);
		p[3] = (uint8_t)(words[i].w >> 24);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rule_case *c = &cases[i];
		int k;

		memset(&r, 0x55, sizeof(r));
		k = arch_insn_rule(&code, c->pc, c->exact, &r);
		if (c->reg == NONE) {
			CHECK(k == -1, "%s (0x%llx): a rule, cfa %d%+d ra %d fp %d", c->what,
			      (unsigned long long)c->pc, r.cfa_reg, r.cfa_off, r.ra_off, r.fp_off);
			continue;
		}
		CHECK(k == 0 && r.cfa_reg == c->reg && r.cfa_off == c->cfa_off &&
		      r.ra_off == c->ra_off && r.fp_off == c->fp_off,
		      "%s (0x%llx): %d, cfa %d%+d ra %d fp %d, want cfa %d%+d ra %d fp %d",
		      c->what, (unsigned long long)c->pc, k, r.cfa_reg, r.cfa_off, r.ra_off,
		      r.fp_off, c->reg, c->cfa_off, c->ra_off, c->fp_off);
	}

	/* without the probes' ranges, the stubs' code is followed: a BR */
	CHECK(arch_insn_rule(&counted, 0x400b04, 1, &r) == -1, "stubs followed without probes");
	CHECK(reads > 0, "no read through the callback");

	arch_insn_entry_rule(&r);
	CHECK(r.cfa_reg == SP && r.cfa_off == 0 && r.ra_off == 0 && r.fp_off == 0,
	      "entry rule: cfa %d%+d ra %d fp %d", r.cfa_reg, r.cfa_off, r.ra_off, r.fp_off);

	return unit_status();
}

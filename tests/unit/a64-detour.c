/*
 * a64-detour.c - the arm64 detour planner of src/arch/aarch64/detour.c
 * (arch/detour-plan.h) as pure functions: known prologues planned,
 * their entries relocated word for word (with and without BTI and
 * PACIASP; ADRP, LDR literal, B, BL, CBZ, TBNZ, B.cond, ADR as the
 * displaced instruction), the refusals with their why, the pcs of
 * stopped threads moved, the reach, the patch and its recognition, the
 * padding of short functions, and the glue of each probe kind.  The
 * expected words were made by binutils, not by memtap:
 * tests/unit/a64-detour-gen.sh assembles each at its address with
 * aarch64-linux-gnu-as and -ld.  Runs on any host; prints "ok" last
 * when all hold.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "arch/detour-plan.h"
#include "arch/stub-abi.h"
#include "unit-check.h"

/* dt_template and the common routines: tests/unit/a64-dt-template.c. */

#define FUNC 0x10000000ull
#define BASE 0x10100000ull
#define SLOT (BASE + DT_TEMPLATE_MAX)	/* 0x10101c00 */
#define AT (SLOT + DT_ORIG)		/* 0x10101c58 */
#define FAR 0x10300000ull
#define FSLOT (FAR + DT_TEMPLATE_MAX)

#define BTI_C 0xd503245fu
#define BTI_J 0xd503249fu
#define BTI_JC 0xd50324dfu
#define BTI 0xd503241fu
#define PACIASP 0xd503233fu
#define PACIBSP 0xd503237fu
#define PACIAZ 0xd503231fu
#define STP 0xa9be7bfdu		/* stp x29, x30, [sp, #-32]! */
#define RET 0xd65f03c0u
#define NOP 0xd503201fu
#define BRK 0xd4200000u

/* Words into the target's little-endian bytes, and back. */
static void put(uint8_t *buf, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a64_put(buf + 4 * i, w[i]);
}

/* Do the n words at code equal want[0..n), BRK #0 after them up to room bytes? */
static int same_words(const char *what, const uint8_t *code, size_t room, const uint32_t *want,
		      size_t n)
{
	int ok = 1;

	for (size_t i = 0; i < room / 4; i++) {
		uint32_t got = a64_get(code + 4 * i), w = i < n ? want[i] : BRK;

		if (got != w) {
			printf("FAIL %s: word %zu is %#010" PRIx32 ", not %#010" PRIx32 "\n", what,
			       i, got, w);
			ok = 0;
		}
	}
	if (!ok)
		failures++;
	return ok;
}

struct prologue {
	const char *name;
	uint32_t pad;		/* 0: none */
	uint32_t first;		/* the displaced instruction, at FUNC or FUNC + 4 */
	int tail;
	unsigned moved0;	/* where it starts in the copy */
	uint32_t copy[5];	/* the copy at AT, binutils' */
	size_t ncopy;
};

static const struct prologue prologues[] = {
	{ "stp", 0, STP, 0, 0, { 0xa9be7bfd, 0x17fbf8ea }, 2 },
	{ "bti c; stp", BTI_C, STP, 0, 0, { 0xa9be7bfd, 0x17fbf8eb }, 2 },
	{ "paciasp; stp", PACIASP, STP, 0, 4, { 0xd503233f, 0xa9be7bfd, 0x17fbf8ea }, 3 },
	/* adrp x0, 0x10234000 */
	{ "adrp", 0, 0x900011a0, 0, 0, { 0xf0000980, 0x17fbf8ea }, 2 },
	/* adrp x1, 0x20000000 after bti c */
	{ "bti c; adrp", BTI_C, 0x90080001, 0, 0, { 0xf007f7e1, 0x17fbf8eb }, 2 },
	/* ldr x1, FUNC + 0x800: out of reach, adrp + add + ldr [x1] */
	{ "ldr x literal", 0, 0x58004001, 0, 0, { 0xf0fff7e1, 0x91200021, 0xf9400021, 0x17fbf8e8 },
	  4 },
	/* ldr w2, 0x10080000: in reach of both */
	{ "ldr w literal", 0, 0x18400002, 0, 0, { 0x18bf1d42, 0x17fbf8ea }, 2 },
	/* ldr q0, FUNC + 0x1000: through x16 */
	{ "ldr q literal", 0, 0x9c008000, 0, 0, { 0x90fff810, 0x91000210, 0x3dc00200, 0x17fbf8e8 },
	  4 },
	/* ldrsw x5, 0x10080100 after pacibsp */
	{ "pacibsp; ldrsw literal", PACIBSP, 0x984007e5, 0, 4,
	  { 0xd503237f, 0x98bf2525, 0x17fbf8ea }, 3 },
	/* adr x0, FUNC + 0x100: adrp + add */
	{ "adr", 0, 0x10000800, 0, 0, { 0xf0fff7e0, 0x91040000, 0x17fbf8e9 }, 3 },
	/* b 0x10200000: ends the plan */
	{ "b", 0, 0x14080000, 1, 0, { 0x1403f8ea }, 1 },
	/* bl 0x10200000: x30 = FUNC + 4, then b */
	{ "bl", 0, 0x94080000, 1, 0, { 0xf0fff7fe, 0x910013de, 0x1403f8e8 }, 3 },
	/* cbz x0, FUNC + 0x40: cbnz over a b */
	{ "cbz", 0, 0xb4000200, 0, 0, { 0xb5000040, 0x17fbf8f9, 0x17fbf8e9 }, 3 },
	/* tbnz w3, #5, FUNC + 0x20 after paciasp: tbz over a b */
	{ "paciasp; tbnz", PACIASP, 0x372800e3, 0, 4,
	  { 0xd503233f, 0x36280043, 0x17fbf8f0, 0x17fbf8e9 }, 4 },
	/* b.ne FUNC + 0x20: b.eq over a b */
	{ "b.ne", 0, 0x54000101, 0, 0, { 0x54000040, 0x17fbf8f1, 0x17fbf8e9 }, 3 },
	/* bti j, bti jc stay; bti, paciaz and a second pad are displaced */
	{ "bti j; stp", BTI_J, STP, 0, 0, { 0xa9be7bfd, 0x17fbf8eb }, 2 },
	{ "bti jc; stp", BTI_JC, STP, 0, 0, { 0xa9be7bfd, 0x17fbf8eb }, 2 },
	{ "bti", 0, BTI, 0, 0, { BTI, 0x17fbf8ea }, 2 },
	{ "paciaz", 0, PACIAZ, 0, 0, { PACIAZ, 0x17fbf8ea }, 2 },
	{ "bti c; paciasp", BTI_C, PACIASP, 0, 0, { PACIASP, 0x17fbf8eb }, 2 },
	{ "ret", 0, RET, 1, 0, { RET }, 1 },
};

/* A function of 16 words: its prologue, then nops and a ret. */
static size_t make_func(uint8_t *buf, const struct prologue *pr)
{
	uint32_t w[16];
	size_t n = 0;

	if (pr->pad)
		w[n++] = pr->pad;
	w[n++] = pr->first;
	while (n < 15)
		w[n++] = NOP;
	w[n++] = RET;
	put(buf, w, n);
	return 4 * n;
}

static void test_prologues(void)
{
	for (size_t i = 0; i < sizeof(prologues) / sizeof(prologues[0]); i++) {
		const struct prologue *pr = &prologues[i];
		uint8_t buf[64], code[DT_ORIG_ROOM];
		const char *why = NULL;
		uint64_t site = FUNC + (pr->pad && pr->pad != BTI ? 4 : 0), to;
		struct plan p;
		size_t size = make_func(buf, pr);
		int err;

		CHECK(arch_landing_pad(buf, size) == site - FUNC, "%s: landing pad", pr->name);
		err = arch_detour_plan(FUNC, buf, size, &p, &why);
		CHECK(err == 0, "%s: refused: %s", pr->name, why ? why : "?");
		if (err)
			continue;
		CHECK(p.site == site && p.len == 4 && p.ninsns == 1 && p.tail == pr->tail,
		      "%s: site %#" PRIx64 " len %u ninsns %u tail %d", pr->name, p.site, p.len,
		      p.ninsns, p.tail);
		CHECK(arch_detour_in_reach(&p, SLOT), "%s: not in reach", pr->name);
		memset(code, 0xaa, sizeof(code));
		err = arch_detour_relocate(&p, AT, code);
		CHECK(err == 0, "%s: relocate: %d", pr->name, err);
		if (err)
			continue;
		same_words(pr->name, code, sizeof(code), pr->copy, pr->ncopy);
		CHECK(p.moved[0] == pr->moved0, "%s: moved[0] %u", pr->name, p.moved[0]);
		CHECK(p.moved[1] == 4 * (pr->ncopy - !pr->tail), "%s: moved[1] %u", pr->name,
		      p.moved[1]);
		/* a thread stopped at the site, after it, inside it */
		CHECK(arch_detour_moved_pc(&p, AT, site, &to) == 0 && to == AT + pr->moved0,
		      "%s: the site moves to %#" PRIx64, pr->name, to);
		CHECK(arch_detour_moved_pc(&p, AT, site + 4, &to) == 0 &&
			      to == (pr->tail ? site + 4 : AT + p.moved[1]),
		      "%s: site + 4 moves to %#" PRIx64, pr->name, to);
		CHECK(arch_detour_moved_pc(&p, AT, site + 2, &to) < 0, "%s: site + 2", pr->name);
		CHECK(arch_detour_moved_pc(&p, AT, site + 8, &to) < 0, "%s: site + 8", pr->name);
	}
}

struct refusal {
	const char *name;
	uint32_t w[4];
	size_t n;
	uint64_t func;
	const char *why;
};

static const struct refusal refusals[] = {
	{ "ldxr", { 0xc85f7c20, RET }, 2, FUNC, "an exclusive load or store in its entry" },
	{ "bti c; stxr", { BTI_C, 0xc8027c20, RET }, 3, FUNC,
	  "an exclusive load or store in its entry" },
	{ "ldaxp", { 0xc87f8440, RET }, 2, FUNC, "an exclusive load or store in its entry" },
	{ "brk", { BRK, RET }, 2, FUNC, "a brk in its entry" },
	{ "paciasp; brk", { PACIASP, 0xd4200020, RET }, 3, FUNC, "a brk in its entry" },
	{ "blraa", { 0xd73f0801, RET }, 2, FUNC, "an entry instruction that cannot be relocated" },
	{ "udf", { 0x00000000, RET }, 2, FUNC, "an entry instruction that cannot be relocated" },
	{ "empty", { 0 }, 0, FUNC, "the function is too short" },
	{ "bti c alone", { BTI_C }, 1, FUNC, "the function is too short" },
	{ "unaligned", { STP, RET }, 2, FUNC + 2, "its address is not 4-aligned" },
	/* b . : the displaced instruction branches to itself */
	{ "b .", { 0x14000000 }, 1, FUNC, "a branch into its first instructions" },
	/* bti c; stp; b FUNC + 4: a loop to the site, behind the pad */
	{ "b to the site", { BTI_C, STP, 0x17ffffff, RET }, 4, FUNC,
	  "a branch into its first instructions" },
	/* paciasp; stp; cbz x0, FUNC + 4 */
	{ "cbz to the site", { PACIASP, STP, 0xb4ffffe0, RET }, 4, FUNC,
	  "a branch into its first instructions" },
	/* bti c; stp; adr x1, FUNC + 4 */
	{ "adr of the site", { BTI_C, STP, 0x10ffffe1, RET }, 4, FUNC,
	  "a branch into its first instructions" },
};

static void test_refusals(void)
{
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		uint8_t buf[16];
		const char *why = NULL;
		struct plan p;
		int err;

		put(buf, r->w, r->n);
		err = arch_detour_plan(r->func, buf, 4 * r->n, &p, &why);
		CHECK(err == -ENOTSUP && why && !strcmp(why, r->why), "%s: %d, %s", r->name, err,
		      why ? why : "no why");
	}
}

/* Branches that do not land inside: planned. */
static void test_branches_allowed(void)
{
	static const struct {
		const char *name;
		uint32_t w[4];
		size_t n;
	} ok[] = {
		/* stp; cbnz x0, FUNC: a loop to the entry is a call again */
		{ "cbnz to the entry", { STP, 0xb5ffffe0, RET }, 3 },
		/* bti c; stp; b FUNC: to the pad */
		{ "b to the pad", { BTI_C, STP, 0x17fffffe, RET }, 4 },
		/* bti c; stp; b FUNC + 12 */
		{ "b after the site", { BTI_C, STP, 0x14000001, RET }, 4 },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint8_t buf[16];
		const char *why = NULL;
		struct plan p;
		int err;

		put(buf, ok[i].w, ok[i].n);
		err = arch_detour_plan(FUNC, buf, 4 * ok[i].n, &p, &why);
		CHECK(err == 0, "%s: refused: %s", ok[i].name, why ? why : "?");
	}
}

static void test_reach(void)
{
	static const uint32_t b[] = { 0x14080000, RET };	/* b 0x10200000 */
	static const uint32_t adrp[] = { 0x90080001, RET };	/* adrp x1, FUNC + 256 MiB + ... */
	uint8_t buf[8];
	const char *why;
	struct plan p;

	put(buf, b, 2);
	CHECK(arch_detour_plan(FUNC, buf, 8, &p, &why) == 0, "b: refused");
	CHECK(arch_detour_in_reach(&p, FUNC - 0x7000000), "b: a slot 112 MiB below");
	/* the site in reach, the branch's target not */
	CHECK(!arch_detour_in_reach(&p, FUNC - 0x7e00000), "b: its target out of reach");
	CHECK(!arch_detour_in_reach(&p, FUNC + 0x8000000), "b: a slot 128 MiB above");
	put(buf, adrp, 2);
	CHECK(arch_detour_plan(FUNC, buf, 8, &p, &why) == 0, "adrp: refused");
	CHECK(arch_detour_in_reach(&p, FUNC - 0x7e00000), "adrp: any target");
}

static void test_patch(void)
{
	static const uint32_t entry[] = { BTI_C, STP, RET };
	uint8_t buf[12], patch[4];
	size_t off = 99;

	arch_detour_patch(patch, FUNC + 4, SLOT);
	CHECK(a64_get(patch) == 0x140406ff, "the patch is %#010" PRIx32, a64_get(patch));
	put(buf, entry, 3);
	CHECK(arch_patched_target(buf, 12, FUNC, &off) == 0 && off == 4, "not patched: %zu", off);
	memcpy(buf + 4, patch, 4);
	CHECK(arch_patched_target(buf, 12, FUNC, &off) == SLOT && off == 4, "patched: %zu", off);
	CHECK(arch_patched_target(buf, 6, FUNC, &off) == 0, "patched, cut short");
	/* out of reach: a trap, never a jump elsewhere */
	arch_detour_patch(patch, FUNC, FUNC + (1ull << 32));
	CHECK(a64_get(patch) == BRK, "out of reach: %#010" PRIx32, a64_get(patch));
}

static void test_padded(void)
{
	uint32_t w[4] = { BTI_C, NOP, NOP, NOP };
	uint8_t buf[16];

	put(buf, w, 4);
	/* bti c alone: its nop padding makes room for the patch */
	CHECK(arch_detour_padded_size(FUNC, buf, 16, 4) == 16, "bti c + padding");
	CHECK(arch_detour_padded_size(FUNC, buf, 12, 4) == 4, "not all of it read");
	CHECK(arch_detour_padded_size(FUNC + 8, buf, 16, 4) == 8, "up to the boundary only");
	w[2] = 0;
	put(buf, w, 4);
	CHECK(arch_detour_padded_size(FUNC, buf, 16, 4) == 4, "padding not nops");
	w[0] = RET;
	put(buf, w, 4);
	CHECK(arch_detour_padded_size(FUNC, buf, 16, 4) == 4, "ret: long enough");
	CHECK(arch_detour_padded_size(FUNC, buf, 16, 0) == 0, "size 0");
}

struct glue_case {
	const char *name;
	uint64_t far, s;
	int result, sync;
	uint32_t desc;
	uint32_t want[24];
	size_t n;
};

static const struct glue_case glues[] = {
	{ "entry", 0, SLOT, 0, 0, 0x08000003,
	  { 0xd50320ff, 0xa9bb07e0, 0xa9010fe2, 0xa90217e4, 0xa9031fe6, 0xa9047be8, 0x52800069,
	    0x72a10009, 0x97fff938, 0xa9447be8, 0xa9431fe6, 0xa94217e4, 0xa9410fe2, 0xa8c507e0,
	    0x14000008 }, 15 },
	{ "result, prefiltered", 0, SLOT, 1, 0, 0x00010005,
	  { 0xd50320ff, 0x528000a9, 0x72a00029, 0x10ffffaa, 0x17fff9bc, 0xd4200000, 0xa9bb07e0,
	    0xa9010fe2, 0xa90217e4, 0xa9031fe6, 0xa9047be8, 0x9400000b, 0x528000a9, 0x72a00029,
	    0x17fff8f2 }, 15 },
	{ "free, prefiltered, far", FAR, FSLOT, 0, 0, 0x20000007,
	  { 0xd50320ff, 0x528000e9, 0x72a40009, 0x10ffffaa, 0x58ff2110, 0xd61f0200, 0xa9bb07e0,
	    0xa9010fe2, 0xa90217e4, 0xa9031fe6, 0xa9047be8, 0x528000e9, 0x72a40009, 0x58ff1f30,
	    0xd63f0200, 0xa9447be8, 0xa9431fe6, 0xa94217e4, 0xa9410fe2, 0xa8c507e0,
	    0x14000002 }, 21 },
	{ "sync", 0, SLOT, 0, 1, 0x00000009,
	  { 0xd50320ff, 0xa9bb07e0, 0xa9010fe2, 0xa90217e4, 0xa9031fe6, 0xa9047be8, 0x52800129,
	    0x72a00009, 0x97fff978, 0xa9447be8, 0xa9431fe6, 0xa94217e4, 0xa9410fe2, 0xa8c507e0,
	    0x14000008 }, 15 },
};

static void test_glue(void)
{
	CHECK(dt_common_result - dt_template == 0 && dt_common_prefilter - dt_template == 0x300,
	      "the template's offsets");
	for (size_t i = 0; i < sizeof(glues) / sizeof(glues[0]); i++) {
		const struct glue_case *g = &glues[i];
		uint8_t code[DT_ORIG];

		memset(code, 0xaa, sizeof(code));
		arch_detour_glue(BASE, g->far, g->s, g->result, g->sync, g->desc, code);
		same_words(g->name, code, sizeof(code), g->want, g->n);
	}
}

int main(void)
{
	test_prologues();
	test_refusals();
	test_branches_allowed();
	test_reach();
	test_patch();
	test_padded();
	test_glue();
	return unit_status();
}

/*
 * a64-insn.c - the A64 decoder, relocator and patches of
 * src/arch/aarch64/insn.h, as pure functions: every pc-relative form
 * moved in reach and out of it (1 MiB, 128 MiB and 4 GiB away), word
 * for word, the refusals, the landing pads, the patches and their
 * reach.  The expected words of relocs[] were made by binutils, not by
 * memtap: tests/unit/a64-insn-gen.py assembles each original
 * instruction at its address and the expected code at the new one with
 * aarch64-linux-gnu-as and -ld.  Runs on any host (no aarch64 code is
 * run here: tests/unit/a64-run.test does that).  Prints "ok" last when
 * all hold.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arch/aarch64/insn.h"
#include "unit-check.h"

#define P 0x400100ull		/* where every original instruction is */
#define T 0x404000ull		/* the target of most */

struct reloc_case {
	const char *name;
	uint32_t orig;		/* at P */
	uint64_t at;
	unsigned flags;
	int scratch;
	int len;
	uint32_t words[A64_RELOC_MAX / 4];
};

/* python3 tests/unit/a64-insn-gen.py */
static const struct reloc_case relocs[] = {
	{ "adr near", 0x30021100, 0x408000, 0, -1, 4, { 0x30fe1900 } },
	{ "adr mid", 0x30021100, 0x3400100, 0, -1, 8, { 0x90fe8020, 0x910c8400 } },
	{ "adr 2g", 0x30021100, 0x80400100, 0, -1, 8, { 0x90c00020, 0x910c8400 } },
	{ "adr far", 0x30021100, 0x7f0000001000, 0, -1, 16, { 0x58000040, 0x14000003, 0x00404321, 0x00000000 } },
	{ "adr xzr far", 0x3002111f, 0x7f0000001000, 0, -1, 4, { 0xd503201f } },
	{ "adrp near", 0x90000501, 0x408000, 0, -1, 4, { 0x900004c1 } },
	{ "adrp 2g", 0x90000501, 0x80400100, 0, -1, 4, { 0x90c00501 } },
	{ "adrp far", 0x90000501, 0x7f0000001000, 0, -1, 16, { 0x58000041, 0x14000003, 0x004a0000, 0x00000000 } },
	{ "adrp x30 far", 0x9000051e, 0x7f0000001000, 0, -1, 16, { 0x5800005e, 0x14000003, 0x004a0000, 0x00000000 } },
	{ "ldr x near", 0x5801f802, 0x408000, 0, -1, 4, { 0x58fe0002 } },
	{ "ldr x mid", 0x5801f802, 0x3400100, 0, -1, 12, { 0x90fe8022, 0x91000042, 0xf9400042 } },
	{ "ldr x far", 0x5801fc22, 0x7f0000001000, 0, -1, 20, { 0x58000042, 0x14000003, 0x00404084, 0x00000000, 0xf9400042 } },
	{ "ldr w near", 0x1801f803, 0x408000, 0, -1, 4, { 0x18fe0003 } },
	{ "ldr w mid", 0x1801f823, 0x3400100, 0, -1, 12, { 0x90fe8023, 0x91001063, 0xb9400063 } },
	{ "ldr w far", 0x1801f803, 0x7f0000001000, 0, -1, 20, { 0x58000043, 0x14000003, 0x00404000, 0x00000000, 0xb9400063 } },
	{ "ldrsw near", 0x9801f804, 0x408000, 0, -1, 4, { 0x98fe0004 } },
	{ "ldrsw mid", 0x9801f804, 0x3400100, 0, -1, 12, { 0x90fe8024, 0x91000084, 0xb9800084 } },
	{ "ldrsw far", 0x9801f804, 0x7f0000001000, 0, -1, 20, { 0x58000044, 0x14000003, 0x00404000, 0x00000000, 0xb9800084 } },
	{ "ldr s near", 0x1c01f805, 0x408000, 0, -1, 4, { 0x1cfe0005 } },
	{ "ldr s mid", 0x1c01f805, 0x3400100, 0, 16, 12, { 0x90fe8030, 0x91000210, 0xbd400205 } },
	{ "ldr s far", 0x1c01f805, 0x7f0000001000, 0, 16, 20, { 0x58000050, 0x14000003, 0x00404000, 0x00000000, 0xbd400205 } },
	{ "ldr d near", 0x5c01f806, 0x408000, 0, -1, 4, { 0x5cfe0006 } },
	{ "ldr d mid", 0x5c01f806, 0x3400100, 0, 16, 12, { 0x90fe8030, 0x91000210, 0xfd400206 } },
	{ "ldr d far", 0x5c01f806, 0x7f0000001000, 0, 16, 20, { 0x58000050, 0x14000003, 0x00404000, 0x00000000, 0xfd400206 } },
	{ "ldr q near", 0x9c01f807, 0x408000, 0, -1, 4, { 0x9cfe0007 } },
	{ "ldr q mid", 0x9c01f807, 0x3400100, 0, 16, 12, { 0x90fe8030, 0x91000210, 0x3dc00207 } },
	{ "ldr q far", 0x9c01f810, 0x7f0000001000, 0, 16, 20, { 0x58000050, 0x14000003, 0x00404000, 0x00000000, 0x3dc00210 } },
	{ "ldr x16 far", 0x5801f810, 0x7f0000001000, 0, -1, 20, { 0x58000050, 0x14000003, 0x00404000, 0x00000000, 0xf9400210 } },
	{ "ldr xzr far", 0x5801f81f, 0x7f0000001000, 0, 16, 20, { 0x58000050, 0x14000003, 0x00404000, 0x00000000, 0xf940021f } },
	{ "prfm near", 0xd801f800, 0x408000, 0, -1, 4, { 0xd8fe0000 } },
	{ "prfm mid", 0xd801f800, 0x3400100, 0, 16, 12, { 0x90fe8030, 0x91000210, 0xf9800200 } },
	{ "prfm far", 0xd801f813, 0x7f0000001000, 0, 16, 20, { 0x58000050, 0x14000003, 0x00404000, 0x00000000, 0xf9800213 } },
	{ "b near", 0x14000fc0, 0x408000, 0, -1, 4, { 0x17fff000 } },
	{ "b mid", 0x14000fc0, 0x3400100, 0, -1, 4, { 0x17400fc0 } },
	{ "b 2g", 0x14000fc0, 0x80400100, 0, 16, 12, { 0x90c00030, 0x91000210, 0xd61f0200 } },
	{ "b far", 0x14000fc2, 0x7f0000001000, 0, 16, 16, { 0x58000050, 0xd61f0200, 0x00404008, 0x00000000 } },
	{ "b mid bti", 0x14000fc0, 0x3400100, 1, -1, 4, { 0x17400fc0 } },
	{ "bl near", 0x94000fc0, 0x408000, 0, -1, 8, { 0x10fc083e, 0x17ffefff } },
	{ "bl mid", 0x94000fc0, 0x3400100, 0, -1, 12, { 0x90fe801e, 0x910413de, 0x17400fbe } },
	{ "bl 2g", 0x94000fc0, 0x80400100, 0, 16, 20, { 0x90c0001e, 0x910413de, 0x90c00030, 0x91000210, 0xd61f0200 } },
	{ "bl far", 0x94000fc0, 0x7f0000001000, 0, 16, 32, { 0x5800005e, 0x14000003, 0x00400104, 0x00000000, 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "b.ne near", 0x5401f801, 0x408000, 0, -1, 4, { 0x54fe0001 } },
	{ "b.ne back near", 0x54fff801, 0x408000, 0, -1, 4, { 0x54fc0001 } },
	{ "b.ne mid", 0x5401f801, 0x3400100, 0, -1, 8, { 0x54000040, 0x17400fbf } },
	{ "b.ne mid bti", 0x5401f801, 0x3400100, 1, -1, 8, { 0x54000040, 0x17400fbf } },
	{ "b.ne 2g", 0x5401f801, 0x80400100, 0, 16, 16, { 0x54000080, 0x90c00030, 0x91000210, 0xd61f0200 } },
	{ "b.lt far", 0x5401f80b, 0x7f0000001000, 0, 16, 20, { 0x540000aa, 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "b.hi far", 0x5401f808, 0x7f0000001000, 0, 16, 20, { 0x540000a9, 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "b.al near", 0x5401f80e, 0x408000, 0, -1, 4, { 0x54fe000e } },
	{ "b.al mid", 0x5401f80e, 0x3400100, 0, -1, 4, { 0x17400fc0 } },
	{ "b.al far", 0x5401f80e, 0x7f0000001000, 0, 16, 16, { 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "b.nv far", 0x5401f80f, 0x7f0000001000, 0, 16, 16, { 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "cbz near", 0xb401f805, 0x408000, 0, -1, 4, { 0xb4fe0005 } },
	{ "cbz mid", 0xb401f805, 0x3400100, 0, -1, 8, { 0xb5000045, 0x17400fbf } },
	{ "cbz far", 0xb401f805, 0x7f0000001000, 0, 16, 20, { 0xb50000a5, 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "cbnz w far", 0x3501f809, 0x7f0000001000, 0, 16, 20, { 0x340000a9, 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "cbnz x16 far", 0xb501f810, 0x7f0000001000, 0, 17, 20, { 0xb40000b0, 0x58000051, 0xd61f0220, 0x00404000, 0x00000000 } },
	{ "cbz w16 2g", 0x3401f810, 0x80400100, 0, 17, 16, { 0x35000090, 0x90c00031, 0x91000231, 0xd61f0220 } },
	{ "tbz near", 0x3619f806, 0x408000, 0, -1, 4, { 0x361e0006 } },
	{ "tbz mid", 0x3619f806, 0x3400100, 0, -1, 8, { 0x37180046, 0x17400fbf } },
	{ "tbz far", 0x3619f806, 0x7f0000001000, 0, 16, 20, { 0x371800a6, 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "tbnz b5 far", 0xb741f807, 0x7f0000001000, 0, 16, 20, { 0xb64000a7, 0x58000050, 0xd61f0200, 0x00404000, 0x00000000 } },
	{ "tbnz x16 mid", 0xb7f9f810, 0x3400100, 0, -1, 8, { 0xb6f80050, 0x17400fbf } },
	{ "tbz x16 far", 0x3601f810, 0x7f0000001000, 0, 17, 20, { 0x370000b0, 0x58000051, 0xd61f0220, 0x00404000, 0x00000000 } },
	{ "blr near", 0xd63f0060, 0x408000, 0, 16, 12, { 0xaa0303f0, 0x10fc081e, 0xd61f0200 } },
	{ "blr far", 0xd63f0060, 0x7f0000001000, 0, 16, 24, { 0xaa0303f0, 0x5800005e, 0x14000003, 0x00400104, 0x00000000, 0xd61f0200 } },
	{ "blr x17 mid", 0xd63f0220, 0x3400100, 0, -1, 12, { 0x90fe801e, 0x910413de, 0xd61f0220 } },
	{ "blr x30 near", 0xd63f03c0, 0x408000, 0, 16, 12, { 0xaa1e03f0, 0x10fc081e, 0xd61f0200 } },
	{ "br far", 0xd61f0120, 0x7f0000001000, 0, -1, 4, { 0xd61f0120 } },
	{ "ret far", 0xd65f03c0, 0x7f0000001000, 0, -1, 4, { 0xd65f03c0 } },
	{ "retaa far", 0xd65f0bff, 0x7f0000001000, 0, -1, 4, { 0xd65f0bff } },
	{ "braa far", 0xd71f0822, 0x7f0000001000, 0, -1, 4, { 0xd71f0822 } },
	{ "stp far", 0xa9bf7bfd, 0x7f0000001000, 0, -1, 4, { 0xa9bf7bfd } },
	{ "paciasp far", 0xd503233f, 0x7f0000001000, 0, -1, 4, { 0xd503233f } },
	{ "bti c far", 0xd503245f, 0x7f0000001000, 0, -1, 4, { 0xd503245f } },
	{ "ldar far", 0xc8dffc20, 0x7f0000001000, 0, -1, 4, { 0xc8dffc20 } },
	{ "casp far", 0x48207c82, 0x7f0000001000, 0, -1, 4, { 0x48207c82 } },
	{ "svc far", 0xd4000001, 0x7f0000001000, 0, -1, 4, { 0xd4000001 } },
};

static void check_relocs(void)
{
	for (size_t i = 0; i < sizeof(relocs) / sizeof(relocs[0]); i++) {
		const struct reloc_case *c = &relocs[i];
		uint32_t out[A64_RELOC_MAX / 4 + 1];
		struct a64_insn in;
		int err, n;

		err = a64_decode(c->orig, P, &in);
		CHECK(err == 0, "%s: decode %08x: %d", c->name, c->orig, err);
		if (err)
			continue;
		n = a64_reloc_len(&in, c->at, c->flags);
		CHECK(n == c->len, "%s: length %d, not %d", c->name, n, c->len);
		CHECK(a64_reloc_scratch(&in, c->at, c->flags) == c->scratch,
		      "%s: scratch %d, not %d", c->name, a64_reloc_scratch(&in, c->at, c->flags),
		      c->scratch);
		memset(out, 0xa5, sizeof(out));
		n = a64_relocate(&in, c->at, c->flags, out, sizeof(out) - 4);
		CHECK(n == c->len, "%s: wrote %d, not %d", c->name, n, c->len);
		if (n != c->len)
			continue;
		for (int k = 0; k < n / 4; k++)
			CHECK(out[k] == c->words[k], "%s: word %d is %08x, not %08x", c->name, k,
			      out[k], c->words[k]);
		CHECK(out[n / 4] == 0xa5a5a5a5, "%s: wrote past its length", c->name);
		memset(out, 0xa5, sizeof(out));
		CHECK(a64_relocate(&in, c->at, c->flags, out, (size_t)n - 4) == -ENOSPC &&
		      out[0] == 0xa5a5a5a5, "%s: no -ENOSPC, or written anyway", c->name);
	}
}

/* Words from aarch64-linux-gnu-as, and what a64_decode() says of them. */
static const struct {
	uint32_t word;
	const char *text;
	int err;
	enum a64_kind kind;
	int pad;
} decodes[] = {
	{ 0xd4200000, "brk #0", -EBUSY, A64_OTHER, 0 },
	{ 0xd4207d00, "brk #0x3e8", -EBUSY, A64_OTHER, 0 },
	{ 0xd4400000, "hlt #0", -ENOTSUP, A64_OTHER, 0 },
	{ 0xc85f7c20, "ldxr x0, [x1]", -ENOTSUP, A64_OTHER, 0 },
	{ 0x885ffc62, "ldaxr w2, [x3]", -ENOTSUP, A64_OTHER, 0 },
	{ 0xc8047cc5, "stxr w4, x5, [x6]", -ENOTSUP, A64_OTHER, 0 },
	{ 0x8807fd28, "stlxr w7, w8, [x9]", -ENOTSUP, A64_OTHER, 0 },
	{ 0xc87f0440, "ldxp x0, x1, [x2]", -ENOTSUP, A64_OTHER, 0 },
	{ 0x887f90a3, "ldaxp w3, w4, [x5]", -ENOTSUP, A64_OTHER, 0 },
	{ 0xc8262127, "stxp w6, x7, x8, [x9]", -ENOTSUP, A64_OTHER, 0 },
	{ 0xc8208861, "stlxp w0, x1, x2, [x3]", -ENOTSUP, A64_OTHER, 0 },
	{ 0x085f7c20, "ldxrb w0, [x1]", -ENOTSUP, A64_OTHER, 0 },
	{ 0x4802fc83, "stlxrh w2, w3, [x4]", -ENOTSUP, A64_OTHER, 0 },
	{ 0xd73f0822, "blraa x1, x2", -ENOTSUP, A64_OTHER, 0 },
	{ 0xd63f0c7f, "blrabz x3", -ENOTSUP, A64_OTHER, 0 },
	{ 0x00000000, "udf #0", -EINVAL, A64_OTHER, 0 },
	{ 0xd69f03e0, "eret", -EINVAL, A64_OTHER, 0 },
	{ 0xd6bf03e0, "drps", -EINVAL, A64_OTHER, 0 },
	{ 0xc8dffc20, "ldar x0, [x1]", 0, A64_OTHER, 0 },
	{ 0x889ffc20, "stlr w0, [x1]", 0, A64_OTHER, 0 },
	{ 0xc8a07c41, "cas x0, x1, [x2]", 0, A64_OTHER, 0 },
	{ 0x48207c82, "casp x0, x1, x2, x3, [x4]", 0, A64_OTHER, 0 },
	{ 0xf8200041, "ldadd x0, x1, [x2]", 0, A64_OTHER, 0 },
	{ 0xd503245f, "bti c", 0, A64_PAD, 1 },
	{ 0xd503249f, "bti j", 0, A64_PAD, 1 },
	{ 0xd50324df, "bti jc", 0, A64_PAD, 1 },
	{ 0xd503233f, "paciasp", 0, A64_PAD, 1 },
	{ 0xd503237f, "pacibsp", 0, A64_PAD, 1 },
	{ 0xd503241f, "bti", 0, A64_OTHER, 0 },
	{ 0xd503231f, "paciaz", 0, A64_OTHER, 0 },
	{ 0xd503201f, "nop", 0, A64_OTHER, 0 },
	{ 0xd50323bf, "autiasp", 0, A64_OTHER, 0 },
	{ 0xd65f03c0, "ret", 0, A64_RET, 0 },
	{ 0xd61f0120, "br x9", 0, A64_BR, 0 },
	{ 0xdc000000, "ldr (literal) V=1 opc=11", -EINVAL, A64_OTHER, 0 },
};

static void check_decodes(void)
{
	struct a64_insn in;

	for (size_t i = 0; i < sizeof(decodes) / sizeof(decodes[0]); i++) {
		int err = a64_decode(decodes[i].word, P, &in);

		CHECK(err == decodes[i].err, "%s: %d, not %d", decodes[i].text, err, decodes[i].err);
		CHECK(in.kind == decodes[i].kind, "%s: kind %d, not %d", decodes[i].text, in.kind,
		      decodes[i].kind);
		CHECK(a64_is_landing_pad(decodes[i].word) == decodes[i].pad, "%s: landing pad %d",
		      decodes[i].text, !decodes[i].pad);
		CHECK(in.word == decodes[i].word && in.pc == P, "%s: word or pc not kept",
		      decodes[i].text);
	}
	/* targets, flags and registers, forward and back */
	CHECK(a64_decode(0x54fff801, P, &in) == 0 && in.kind == A64_BCOND &&
	      in.target == P - 0x100 && in.flags == A64_PCREL, "b.ne .-0x100");
	CHECK(a64_decode(0x97ffffff, P, &in) == 0 && in.kind == A64_BL && in.target == P - 4 &&
	      in.flags == (A64_PCREL | A64_ENDS | A64_CALL), "bl .-4");
	CHECK(a64_decode(0x17ffffff, P, &in) == 0 && in.kind == A64_B && in.target == P - 4 &&
	      in.flags == (A64_PCREL | A64_ENDS), "b .-4");
	CHECK(a64_decode(0xd63f0060, P, &in) == 0 && in.kind == A64_BLR && in.reg == 3 &&
	      in.flags == (A64_ENDS | A64_CALL), "blr x3");
	CHECK(a64_decode(0xf0ffffe1, 0x400ffc, &in) == 0 && in.kind == A64_ADRP && in.reg == 1 &&
	      in.target == 0x3ff000, "adrp x1, the page before");
	CHECK(a64_decode(0x70ffffe0, P, &in) == 0 && in.kind == A64_ADR && in.reg == 0 &&
	      in.target == P - 1, "adr x0, .-1");
	CHECK(a64_decode(0xb7ffffe7, P, &in) == 0 && in.kind == A64_TB && in.reg == 7 &&
	      in.target == P - 4, "tbnz x7, #63, .-4");
	CHECK(a64_decode(0x58000000, P + 2, &in) == -EINVAL, "a pc not 4-aligned");
	CHECK(a64_reloc_len(&in, P, 0) == -EINVAL, "a relocation of an instruction at an odd pc");
	CHECK(a64_decode(0xd503201f, P, &in) == 0 && a64_reloc_len(&in, P + 2, 0) == -EINVAL,
	      "a relocation to an address not 4-aligned");
}

static void check_landing_pads(void)
{
	const uint32_t bti_c[] = { 0xd503245f, 0xd503233f, 0xa9bf7bfd };	/* bti c; paciasp; stp */
	const uint32_t pac[] = { 0xd503233f, 0xa9bf7bfd };
	const uint32_t plain[] = { 0xa9bf7bfd, 0xd503245f };
	const uint32_t bare[] = { 0xd503241f };

	CHECK(a64_landing_pad(bti_c, 3) == 4, "after bti c, once");
	CHECK(a64_landing_pad(pac, 2) == 4, "after paciasp");
	CHECK(a64_landing_pad(plain, 2) == 0, "a function without a pad first");
	CHECK(a64_landing_pad(bare, 1) == 0, "a bare bti is no landing pad");
	CHECK(a64_landing_pad(bti_c, 0) == 0, "no words");
}

/* The rows of relocs[] named name. */
static const struct reloc_case *row(const char *name)
{
	for (size_t i = 0; i < sizeof(relocs) / sizeof(relocs[0]); i++)
		if (!strcmp(relocs[i].name, name))
			return &relocs[i];
	return NULL;
}

static void check_patches(void)
{
	/* a patch is B's relocation: the rows assembled as b T + (0, 8) */
	static const struct { const char *row; uint64_t to; } p[] = {
		{ "b near", T }, { "b mid", T }, { "b 2g", T }, { "b far", T + 8 },
	};
	uint32_t w[A64_RELOC_MAX / 4], word;
	size_t len;

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		const struct reloc_case *c = row(p[i].row);
		size_t n;

		if (!c) {
			CHECK(0, "no row %s", p[i].row);
			continue;
		}
		CHECK(a64_patch_len(c->at, p[i].to) == (size_t)c->len, "patch %s: length %zu",
		      c->name, a64_patch_len(c->at, p[i].to));
		memset(w, 0, sizeof(w));
		n = a64_patch(w, c->at, p[i].to);
		CHECK(n == (size_t)c->len && !memcmp(w, c->words, n), "patch %s: words", c->name);
		CHECK(a64_patched_target(w, n / 4, c->at, &len) == p[i].to && len == n,
		      "patch %s: not recognised", c->name);
		CHECK(a64_patched_target(w, n / 4 - 1, c->at, &len) == 0 || n == 4,
		      "patch %s: recognised when cut", c->name);
	}
	w[0] = 0xa9bf7bfd;
	CHECK(a64_patched_target(w, 1, P, &len) == 0, "stp recognised as a patch");

	/* B: +-128 MiB, to its last word */
	CHECK(a64_enc_b(P, P + 0x7fffffc, &word) == 0 && word == 0x15ffffff, "b +128 MiB - 4");
	CHECK(a64_enc_b(P, P - 0x8000000, &word) == 0 && word == 0x16000000, "b -128 MiB");
	CHECK(a64_enc_b(P, P + 0x8000000, &word) == -ERANGE, "b +128 MiB");
	CHECK(a64_enc_b(P, P - 0x8000004, &word) == -ERANGE, "b -128 MiB - 4");
	CHECK(a64_enc_b(P, P + 2, &word) == -ERANGE, "b to an odd address");
	CHECK(a64_b_in_reach(P, P + 0x7fffffc) && !a64_b_in_reach(P, P + 0x8000000),
	      "a64_b_in_reach");
	CHECK(a64_patch_len(P, P - 0x8000000) == 4 && a64_patch_len(P, P + 0x8000000) == 12,
	      "patch length at B's reach");
	CHECK(a64_patch_len(P, (P & ~0xfffull) + 0xfffff000ull) == 12 &&
	      a64_patch_len(P, (P & ~0xfffull) + 0x100000000ull) == 16, "patch length at ADRP's reach");
}

/* Each immediate at the edge of its reach: the short form, then the long one. */
static void check_reach(void)
{
	static const struct {
		const char *text;
		uint32_t word;		/* at P, to P + 4 */
		uint64_t lim;		/* its reach: offsets in [-lim, lim - 4] */
		int longer;		/* the length beyond */
	} e[] = {
		{ "b.ne", 0x54000021, 0x100000, 8 },
		{ "cbz x0", 0xb4000020, 0x100000, 8 },
		{ "tbz x0, #0", 0x36000020, 0x8000, 8 },
		{ "ldr x0 (literal)", 0x58000020, 0x100000, 12 },
		{ "b", 0x14000001, 0x8000000, 12 },
	};
	struct a64_insn in;

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		uint64_t pc = 0x40000000, to = pc + 4;	/* 1 GiB: B's reach below it too */

		CHECK(a64_decode(e[i].word, pc, &in) == 0 && in.target == to, "%s: decode", e[i].text);
		/* at = to - d: the offset from at is d */
		CHECK(a64_reloc_len(&in, to - (e[i].lim - 4), 0) == 4,
		      "%s: in reach at its farthest forward", e[i].text);
		CHECK(a64_reloc_len(&in, to - e[i].lim, 0) == e[i].longer,
		      "%s: out of reach past it", e[i].text);
		CHECK(a64_reloc_len(&in, to + e[i].lim, 0) == 4,
		      "%s: in reach at its farthest backwards", e[i].text);
		CHECK(a64_reloc_len(&in, to + e[i].lim + 4, 0) == e[i].longer,
		      "%s: out of reach backwards past it", e[i].text);
	}
	/* ADR's byte offsets: +-1 MiB */
	CHECK(a64_decode(0x10000000, P, &in) == 0 && in.target == P, "adr x0, .");
	CHECK(a64_reloc_len(&in, P - 0xfffff, 0) == -EINVAL, "relocation to an odd address");
	CHECK(a64_reloc_len(&in, P - 0xffffc, 0) == 4 && a64_reloc_len(&in, P + 0x100000, 0) == 4 &&
	      a64_reloc_len(&in, P + 0x100004, 0) == 8 && a64_reloc_len(&in, P - 0x100000, 0) == 8,
	      "adr at the edge of its reach");
	/* an indirect branch where only a direct one may land */
	CHECK(a64_decode(0x54000021, P, &in) == 0 &&
	      a64_reloc_len(&in, P + 0x100000000ull, A64_RELOC_BTI) == -ERANGE &&
	      a64_relocate(&in, P + 0x100000000ull, A64_RELOC_BTI, NULL, 0) == -ERANGE,
	      "b.ne beyond B's reach with BTI");
	CHECK(a64_decode(0x94000001, P, &in) == 0 &&
	      a64_reloc_len(&in, P + 0x100000000ull, A64_RELOC_BTI) == -ERANGE, "bl far with BTI");
	CHECK(a64_decode(0xd63f0060, P, &in) == 0 &&
	      a64_reloc_len(&in, P + 0x200000000ull, A64_RELOC_BTI) == 24, "blr far with BTI");
}

/* x16 and x17 in an instruction's register fields (words from aarch64-linux-gnu-as). */
static void check_ip(void)
{
	static const struct { uint32_t word; const char *text; int ip; } e[] = {
		{ 0xa94047f0, "ldp x16, x17, [sp]", 1 },
		{ 0x91000610, "add x16, x16, #1", 1 },
		{ 0xd2800200, "mov x0, #16 (an immediate: over-approximated)", 1 },
		{ 0xf83fd02a, "ld64b x10, [x1] (x10..x17)", 1 },
		{ 0xf83f904c, "st64b x12, [x2] (x12..x19)", 1 },
		{ 0xf825a0ce, "st64bv0 x5, x14, [x6] (x14..x21)", 1 },
		{ 0xf823b088, "st64bv x3, x8, [x4] (x8..x15)", 0 },
		{ 0xa9bf7bfd, "stp x29, x30, [sp, #-16]!", 0 },
		{ 0x910003fd, "mov x29, sp", 0 },
		{ 0xd1084420, "sub x0, x1, #0x211 (17 in Ra's bits)", 1 },
		{ 0xd1080020, "sub x0, x1, #0x200", 0 },
		{ 0x8b100020, "add x0, x1, x16", 1 },
		{ 0x8b0f0020, "add x0, x1, x15", 0 },
	};

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		CHECK(a64_may_use_ip(e[i].word) == e[i].ip, "%s: %d", e[i].text, !e[i].ip);
}

/* A fixed pseudo-random sequence (xorshift64). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Random words of each pc-relative group, and random ones, at random
 * places: the length said up front is the length written, within
 * A64_RELOC_MAX; a one-word result names the same target from its new
 * place; a sequence ends in the copy's own next word or a branch away.
 */
static void check_random(void)
{
	static const uint32_t group[][2] = {	/* mask of the fixed bits, value */
		{ 0x9f000000, 0x10000000 }, { 0x9f000000, 0x90000000 },	/* adr, adrp */
		{ 0x3b000000, 0x18000000 },				/* literal */
		{ 0x7c000000, 0x14000000 }, { 0xff000000, 0x54000000 },	/* b, bl; b.cond */
		{ 0x7e000000, 0x34000000 }, { 0x7e000000, 0x36000000 },	/* cbz; tbz */
		{ 0xfffffc1f, 0xd63f0000 }, { 0, 0 },			/* blr; any */
	};
	static const uint64_t dist[] = { 0, 4, 0x8000, 0x100000, 0x8000000, 0xfffff000,
					 0x100000000ull, 0x7f0000000000ull };
	uint64_t st = 0x9e3779b97f4a7c15ull;
	int bad = 0;

	for (int i = 0; i < 200000 && bad < 10; i++) {
		uint32_t g = (uint32_t)(rnd(&st) % (sizeof(group) / sizeof(group[0])));
		uint32_t w = (uint32_t)rnd(&st);
		uint64_t pc = (rnd(&st) & 0xffffffffffcull) + 0x10000000000ull;
		uint64_t d = dist[rnd(&st) % (sizeof(dist) / sizeof(dist[0]))];
		uint64_t at = (rnd(&st) & 1) ? pc + d : pc - d;
		uint32_t out[A64_RELOC_MAX / 4];
		struct a64_insn in, again;
		unsigned flags = rnd(&st) & 1 ? A64_RELOC_BTI : 0;
		int len, n;

		w = (w & ~group[g][0]) | group[g][1];
		if (a64_decode(w, pc, &in))
			continue;
		len = a64_reloc_len(&in, at, flags);
		if (len == -ERANGE && (flags & A64_RELOC_BTI))
			continue;
		n = a64_relocate(&in, at, flags, out, sizeof(out));
		if (len < 4 || len > A64_RELOC_MAX || len % 4 || n != len) {
			CHECK(0, "%08x at %#llx to %#llx: length %d, wrote %d", w,
			      (unsigned long long)pc, (unsigned long long)at, len, n);
			bad++;
			continue;
		}
		/* one word: the same target (b.al may become b); adr xzr a nop */
		if (n == 4 && (in.flags & A64_PCREL) &&
		    !((in.kind == A64_ADR || in.kind == A64_ADRP) && in.reg == 31)) {
			int err = a64_decode(out[0], at, &again);

			if (err || !(again.flags & A64_PCREL) || again.target != in.target) {
				CHECK(0, "%08x at %#llx to %#llx: %08x names %#llx, not %#llx", w,
				      (unsigned long long)pc, (unsigned long long)at, out[0],
				      (unsigned long long)again.target, (unsigned long long)in.target);
				bad++;
			}
		}
	}
}

int main(void)
{
	check_relocs();
	check_decodes();
	check_landing_pads();
	check_patches();
	check_reach();
	check_random();
	check_ip();
	return unit_status();
}

/*
 * a64-bp.c - arm64 breakpoints (src/arch/aarch64/bp_arch.h) on known
 * words, on this host: what each first instruction of a function
 * becomes (a slot, an emulation, a refusal), the exact words of its slot
 * near the code (256 KiB: every form keeps its own) and 112 MiB away
 * (ADR and the literal loads through ADRP + ADD, conditional branches
 * inverted over a B), the hit emulated on registers, the return hook
 * in x30, and the shadow-stack probe of /proc/PID/smaps on files made
 * here.  The expected words were assembled by binutils
 * (aarch64-linux-gnu-as and ld, the symbols at their addresses).
 * Prints "ok" last when everything holds.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "unit-check.h"

#define A 0x10000000ull		/* the probed function */
#define S_NEAR (A + 0x40000)	/* a slot 256 KiB away */
#define S_FAR (A + 0x7000000)	/* a slot 112 MiB away */

static const struct form {
	const char *name;
	uint32_t word;		/* at A */
	uint64_t target;	/* 0: not pc-relative */
	unsigned n_near;
	uint32_t near[5];	/* the slot's words before its BRK padding */
	unsigned n_far;
	uint32_t far[5];
} forms[] = {
	{ "adr", 0x10004003, 0x10000800,
	  2, { 0x10e04003, 0x17ff0000 },
	  3, { 0x90fc8003, 0x91200063, 0x163fffff } },
	{ "adrp", 0xb0000024, 0x10005000,
	  2, { 0xb0fffe24, 0x17ff0000 },
	  2, { 0xb0fc8024, 0x16400000 } },
	{ "ldr_x", 0x58002005, 0x10000400,
	  2, { 0x58e02005, 0x17ff0000 },
	  4, { 0x90fc8005, 0x911000a5, 0xf94000a5, 0x163ffffe } },
	{ "ldr_w", 0x18ffdfe6, 0xffffbfc,
	  2, { 0x18dfdfe6, 0x17ff0000 },
	  4, { 0xf0fc7fe6, 0x912ff0c6, 0xb94000c6, 0x163ffffe } },
	{ "ldrsw", 0x98002047, 0x10000408,
	  2, { 0x98e02047, 0x17ff0000 },
	  4, { 0x90fc8007, 0x911020e7, 0xb98000e7, 0x163ffffe } },
	{ "ldr_q", 0x9c002081, 0x10000410,
	  2, { 0x9ce02081, 0x17ff0000 },
	  4, { 0x90fc8010, 0x91104210, 0x3dc00201, 0x163ffffe } },
	{ "prfm", 0xd80020c0, 0x10000418,
	  2, { 0xd8e020c0, 0x17ff0000 },
	  4, { 0x90fc8010, 0x91106210, 0xf9800200, 0x163ffffe } },
	{ "bcond", 0x54000801, 0x10000100,
	  2, { 0x54e00801, 0x17ff0000 },
	  3, { 0x54000040, 0x1640003f, 0x163fffff } },
	{ "cbz", 0xb4fff008, 0xffffe00,
	  2, { 0xb4dff008, 0x17ff0000 },
	  3, { 0xb5000048, 0x163fff7f, 0x163fffff } },
	{ "cbnz", 0x35001809, 0x10000300,
	  2, { 0x35e01809, 0x17ff0000 },
	  3, { 0x34000049, 0x164000bf, 0x163fffff } },
	{ "tbz", 0x3618020a, 0x10000040,
	  3, { 0x3718004a, 0x17ff000f, 0x17feffff },
	  3, { 0x3718004a, 0x1640000f, 0x163fffff } },
	{ "tbnz", 0xb747fe0b, 0xfffffc0,
	  3, { 0xb640004b, 0x17feffef, 0x17feffff },
	  3, { 0xb640004b, 0x163fffef, 0x163fffff } },
	{ "blr", 0xd63f0020, 0,
	  4, { 0xaa0103f0, 0x10e0001e, 0xd61f0200, 0x17fefffe },
	  5, { 0xaa0103f0, 0x90fc801e, 0x910013de, 0xd61f0200, 0x163ffffd } },
	{ "blr16", 0xd63f0200, 0,
	  3, { 0x10e0003e, 0xd61f0200, 0x17feffff },
	  4, { 0x90fc801e, 0x910013de, 0xd61f0200, 0x163ffffe } },
	{ "paciasp", 0xd503233f, 0,
	  2, { 0xd503233f, 0x17ff0000 },
	  2, { 0xd503233f, 0x16400000 } },
	{ "stp", 0xa9bf7bfd, 0,
	  2, { 0xa9bf7bfd, 0x17ff0000 },
	  2, { 0xa9bf7bfd, 0x16400000 } },
	{ "ret", 0xd65f03c0, 0,
	  2, { 0xd65f03c0, 0x17ff0000 },
	  2, { 0xd65f03c0, 0x16400000 } },
};

static void put_word(uint8_t *b, uint32_t w)
{
	a64_put(b, w);
}

static void check_slot(const struct form *f, uint64_t slot, unsigned n, const uint32_t *want)
{
	uint8_t buf[4], code[BP_ARCH_SLOT_SIZE];
	struct bp_insn insn;
	unsigned resume = 0;
	int len;

	put_word(buf, f->word);
	CHECK(bp_arch_decode(A, buf, 4, &insn) == 0, "%s: decode", f->name);
	len = bp_arch_relocate(&insn, A, slot, code, &resume);
	CHECK(len == (int)(4 * n), "%s at %#" PRIx64 ": %d bytes, not %u", f->name, slot, len,
	      4 * n);
	if (len != (int)(4 * n))
		return;
	CHECK(resume == 4 * (n - 1), "%s: B back at %u", f->name, resume);
	for (unsigned i = 0; i < n; i++)
		CHECK(a64_get(code + 4 * i) == want[i], "%s at %#" PRIx64 " word %u: %#010x, not %#010x",
		      f->name, slot, i, a64_get(code + 4 * i), want[i]);
	for (unsigned i = 4 * n; i + 4 <= BP_ARCH_SLOT_SIZE; i += 4)
		CHECK(a64_get(code + i) == A64_BRK0, "%s: padding at %u", f->name, i);
	/* a thread in the slot goes back to the original code */
	CHECK(bp_arch_slot_pc(&insn, A, slot, resume, slot) == A, "%s: slot start", f->name);
	CHECK(bp_arch_slot_pc(&insn, A, slot, resume, slot + resume) == A + 4, "%s: B back",
	      f->name);
	if (resume > 4)
		CHECK(bp_arch_slot_pc(&insn, A, slot, resume, slot + 4) == A, "%s: inside", f->name);
	CHECK(bp_arch_slot_pc(&insn, A, slot, resume, slot + resume + 4) == 0, "%s: past",
	      f->name);
	CHECK(bp_arch_slot_pc(&insn, A, slot, resume, slot + 2) == 0, "%s: unaligned", f->name);
	CHECK(bp_arch_slot_pc(&insn, A, slot, resume, slot - 4) == 0, "%s: before", f->name);
}

static void test_forms(void)
{
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const struct form *f = &forms[i];
		uint8_t buf[4];
		struct bp_insn insn;
		uint64_t t = 0;
		int jcc;

		put_word(buf, f->word);
		CHECK(bp_arch_decode(A, buf, 4, &insn) == 0, "%s: decode", f->name);
		jcc = !strncmp(f->name, "bc", 2) || !strncmp(f->name, "cb", 2) ||
		      !strncmp(f->name, "tb", 2);
		CHECK(insn.kind == (jcc ? BPI_JCC : BPI_DISPLACE), "%s: kind %d", f->name, insn.kind);
		CHECK(bp_arch_needs_slot(&insn), "%s: needs a slot", f->name);
		CHECK(insn.len == 4 && !memcmp(insn.bytes, buf, 4), "%s: bytes", f->name);
		if (f->target)
			CHECK(insn.target == f->target, "%s: target %#" PRIx64, f->name, insn.target);
		/* only a conditional branch asks for a slot near its target */
		CHECK(bp_arch_slot_target(&insn, &t) == jcc && (!jcc || t == f->target),
		      "%s: slot target", f->name);
		check_slot(f, S_NEAR, f->n_near, f->near);
		check_slot(f, S_FAR, f->n_far, f->far);
	}
}

static const struct refusal {
	const char *name;
	uint32_t word;
	int err;
} refusals[] = {
	{ "brk #0", 0xd4200000, -EBUSY },
	{ "brk #5", 0xd42000a0, -EBUSY },
	{ "ldxr x0, [x1]", 0xc85f7c20, -ENOTSUP },
	{ "stxr w2, x0, [x1]", 0xc8027c20, -ENOTSUP },
	{ "ldaxr w0, [x1]", 0x885ffc20, -ENOTSUP },
	{ "stlxrb w3, w0, [x1]", 0x0803fc20, -ENOTSUP },
	{ "ldxp x0, x1, [x2]", 0xc87f0440, -ENOTSUP },
	{ "blraa x1, x2", 0xd73f0822, -ENOTSUP },
	{ "blr x30", 0xd63f03c0, -ENOTSUP },
	{ "hlt #0", 0xd4400000, -ENOTSUP },
	{ "udf #0", 0x00000000, -EINVAL },
};

static void test_refusals(void)
{
	uint8_t buf[4];
	struct bp_insn insn;

	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		int err;

		put_word(buf, r->word);
		err = bp_arch_decode(A, buf, 4, &insn);
		CHECK(err == r->err, "%s: %d, not %d", r->name, err, r->err);
	}
	put_word(buf, 0xa9bf7bfd);	/* stp x29, x30, [sp, #-16]! */
	CHECK(bp_arch_decode(A, buf, 3, &insn) == -EINVAL, "3 bytes");
	CHECK(bp_arch_decode(A + 2, buf, 4, &insn) == -EINVAL, "an unaligned address");
	/* casp is one atomic instruction: it moves */
	put_word(buf, 0x48207c82);
	CHECK(bp_arch_decode(A, buf, 4, &insn) == 0 && insn.kind == BPI_DISPLACE, "casp");
}

/* Slots out of reach, and kinds with none. */
static void test_ranges(void)
{
	uint8_t buf[4], code[BP_ARCH_SLOT_SIZE];
	struct bp_insn insn;
	unsigned resume;

	put_word(buf, 0xa9bf7bfd);
	bp_arch_decode(A, buf, 4, &insn);
	CHECK(bp_arch_relocate(&insn, A, A + 0x8000004, code, &resume) == -ERANGE,
	      "a slot 128 MiB away");
	CHECK(bp_arch_relocate(&insn, A, A - 0x8000004, code, &resume) == -ERANGE,
	      "a slot 128 MiB below");
	CHECK(bp_arch_relocate(&insn, A, A + 0x7fff000 - 4, code, &resume) == 8,
	      "a slot just in reach");
	CHECK(bp_arch_relocate(&insn, A, S_NEAR + 2, code, &resume) == -EINVAL,
	      "an unaligned slot");
	/* b.ne A - 512 KiB from a slot 128 MiB above A: no direct B reaches */
	put_word(buf, 0x54c00001);
	CHECK(bp_arch_decode(A, buf, 4, &insn) == 0 && insn.target == A - 0x80000, "b.ne back");
	CHECK(bp_arch_relocate(&insn, A, A + 0x7ffe000, code, &resume) == -ERANGE,
	      "b.ne: its target out of the slot's reach");
	put_word(buf, 0x14000400);	/* b A + 0x1000 */
	bp_arch_decode(A, buf, 4, &insn);
	CHECK(bp_arch_relocate(&insn, A, S_NEAR, code, &resume) == -EINVAL, "b has no slot");
}

static int no_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx, (void)addr, (void)buf, (void)len;
	CHECK(0, "memory written");
	return -EIO;
}

static int no_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx, (void)addr, (void)buf, (void)len;
	CHECK(0, "memory read");
	return -EIO;
}

/* A hit at A with regs: pc A, sp, x30 the caller, BTYPE 01 (reached by br x16). */
static void hit_regs(arch_regs_t *regs)
{
	memset(regs, 0, sizeof(*regs));
	for (int i = 0; i < 31; i++)
		regs->r.regs[i] = 0x1000 + (uint64_t)i;
	regs->r.regs[30] = 0x400123;
	regs->r.sp = 0x7ffff000;
	regs->r.pc = A;
	regs->r.pstate = 0x60000000 | 0x400;	/* Z C, BTYPE 01 */
}

static void test_emulate(void)
{
	static const struct {
		const char *name;
		uint32_t word;
		enum bp_insn_kind kind;
		uint64_t pc, x30;
	} em[] = {
		{ "bti c", 0xd503245f, BPI_PAD, A + 4, 0x400123 },
		{ "bti j", 0xd503249f, BPI_PAD, A + 4, 0x400123 },
		{ "bti jc", 0xd50324df, BPI_PAD, A + 4, 0x400123 },
		{ "b A+0x1000", 0x14000400, BPI_JMP, A + 0x1000, 0x400123 },
		{ "b A-4", 0x17ffffff, BPI_JMP, A - 4, 0x400123 },
		{ "bl A+0x1000", 0x94000400, BPI_CALL, A + 0x1000, A + 4 },
	};
	uint8_t buf[4];
	struct bp_insn insn;
	arch_regs_t regs, before;

	for (size_t i = 0; i < sizeof(em) / sizeof(em[0]); i++) {
		put_word(buf, em[i].word);
		CHECK(bp_arch_decode(A, buf, 4, &insn) == 0, "%s: decode", em[i].name);
		CHECK(insn.kind == em[i].kind, "%s: kind %d", em[i].name, insn.kind);
		CHECK(!bp_arch_needs_slot(&insn), "%s: no slot", em[i].name);
		hit_regs(&regs);
		before = regs;
		CHECK(arch_bp_emulate(&insn, A, &regs, no_write, NULL) == 0, "%s: emulate",
		      em[i].name);
		CHECK(arch_pc(&regs) == em[i].pc, "%s: pc %#" PRIx64, em[i].name, arch_pc(&regs));
		CHECK(regs.r.regs[30] == em[i].x30, "%s: x30 %#" PRIx64, em[i].name,
		      regs.r.regs[30]);
		CHECK(regs.r.pstate == 0x60000000, "%s: pstate %#" PRIx64 " (BTYPE kept?)",
		      em[i].name, regs.r.pstate);
		CHECK(arch_sp(&regs) == arch_sp(&before) &&
		      !memcmp(regs.r.regs, before.r.regs, 30 * sizeof(uint64_t)),
		      "%s: other registers changed", em[i].name);
	}
	/* PACIASP signs x30: in the slot, after the return hook */
	put_word(buf, 0xd503233f);
	bp_arch_decode(A, buf, 4, &insn);
	CHECK(insn.kind == BPI_DISPLACE, "paciasp: displaced");
	put_word(buf, 0xd503237f);
	bp_arch_decode(A, buf, 4, &insn);
	CHECK(insn.kind == BPI_DISPLACE, "pacibsp: displaced");
	/* a bare BTI is no landing pad: an ordinary instruction */
	put_word(buf, 0xd503241f);
	bp_arch_decode(A, buf, 4, &insn);
	CHECK(insn.kind == BPI_DISPLACE, "bti: displaced");
	hit_regs(&regs);
	CHECK(arch_bp_emulate(&insn, A, &regs, no_write, NULL) == -EINVAL &&
	      arch_pc(&regs) == A, "a displaced kind is not emulated");
}

static void test_breakpoint(void)
{
	uint8_t b[10], want[10] = { 0x00, 0x00, 0x20, 0xd4, 0x00, 0x00, 0x20, 0xd4, 0, 0 };
	arch_regs_t regs;

	memset(b, 0xaa, sizeof(b));
	arch_bp_fill(b, sizeof(b));
	CHECK(!memcmp(b, want, sizeof(b)), "arch_bp_fill: BRK words, a zero tail");
	CHECK(ARCH_BP_LEN == 4 && arch_bp_addr_from_pc(A) == A, "the pc a BRK reports");

	/* return probes: x30 at entry, the same key at the return */
	hit_regs(&regs);
	CHECK(arch_caller_at_entry(&regs, no_read, NULL) == 0x400123, "caller");
	CHECK(arch_ret_hook(&regs, 0x5000000, no_write, NULL) == 0, "hook");
	CHECK(regs.r.regs[30] == 0x5000000 && arch_pc(&regs) == A && arch_sp(&regs) == 0x7ffff000,
	      "hook: x30 only");
	{
		uint64_t key = arch_ret_slot_at_entry(&regs);

		/* the function ran and returned to the trampoline: sp as at entry */
		regs.r.pc = 0x5000000;
		regs.r.regs[0] = 0xbeef;
		CHECK(arch_ret_slot_at_return(&regs) == key, "return slot");
	}
	CHECK(!arch_ret_slot_in_memory(), "the slot is a key");
}

/* The shadow-stack probe on smaps files written here. */
static void test_smaps(void)
{
	static const char *const files[] = {
		"00400000-00401000 r-xp 00000000 08:01 12 /bin/t\n"
		"Size:                  4 kB\n"
		"VmFlags: rd ex mr mw me sd \n",
		"00400000-00401000 r-xp 00000000 08:01 12 /bin/t\n"
		"VmFlags: rd ex mr mw me sd\n"
		"ffff80000000-ffff80008000 rw-p 00000000 00:00 0 \n"
		"VmFlags: rd wr mr mw me ac ss\n",
		NULL,	/* a long name that says VmFlags: ss, made below */
	};
	char path[] = "/tmp/a64-bp-smaps-XXXXXX";
	char name[512];
	int fd = mkstemp(path);
	FILE *f;

	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (fd < 0)
		return;
	close(fd);
	for (size_t i = 0; i < 3; i++) {
		f = fopen(path, "w");
		if (files[i]) {
			fputs(files[i], f);
		} else {
			/*
			 * A name that fills the probe's 511-byte reads
			 * (41 bytes before it), then what a line would say.
			 */
			memset(name, 'x', 470);
			name[0] = '/';
			name[470] = '\0';
			fprintf(f, "00400000-00401000 r-xp 00000000 08:01 12 %s", name);
			fputs("VmFlags: ss\nVmFlags: rd ex\n", f);
		}
		fclose(f);
		CHECK(a64_bp_smaps_shadow_stack(path) == (i == 1), "smaps %zu", i);
	}
	unlink(path);
	CHECK(a64_bp_smaps_shadow_stack(path) == 0, "smaps missing");
	CHECK(arch_ret_hook_refused(getpid()) == 0, "this process has no shadow stack");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	test_forms();
	test_refusals();
	test_ranges();
	test_emulate();
	test_breakpoint();
	test_smaps();
	return unit_status();
}

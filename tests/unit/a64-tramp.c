/*
 * a64-tramp.c - the arm64 trampoline of injected syscalls
 * (src/arch/aarch64/tramp.c), word for word: the code arch_tramp_code()
 * writes for an address, the same at every 4-aligned one and refused at
 * others, BRK #0 up to the trampoline's end, and the block
 * arch_tramp_block() makes of a stop's registers and mask.  The expected
 * words were assembled by binutils (aarch64-linux-gnu-as), not by
 * memtap, from the listing in tramp.c's comments.  Built on this host
 * against aarch64's cpu.h (tests/Makefile.inc); tests/unit/a64-tramp-run
 * runs the code.  Prints "ok" last when every check passed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/aarch64/insn.h"
#include "unit-check.h"

/* svc #0 ... mov x8, #139; svc #0, with adr x10 at word 6 reaching byte 176 */
static const uint32_t golden[] = {
	0xd4000001, 0x910003e9, 0x927ced29, 0xd1400529, 0xd1098129, 0x9100013f,
	0x100004ca, 0x9104e3eb, 0xd280022e, 0xa8c1354c, 0xa881356c, 0xf10005ce,
	0x54ffffa1, 0xf940014c, 0xf90057ec, 0x5280006c, 0xb9009bec, 0x910943eb,
	0xd290002c, 0xf2a8ca0c, 0xf2c0420c, 0xf900016c, 0xd53b442c, 0xd53b440d,
	0x2901356c, 0xad008560, 0xad018d62, 0xad029564, 0xad039d66, 0xad04a568,
	0xad05ad6a, 0xad06b56c, 0xad07bd6e, 0xad08c570, 0xad09cd72, 0xad0ad574,
	0xad0bdd76, 0xad0ce578, 0xad0ded7a, 0xad0ef57c, 0xad0ffd7e, 0xf901097f,
	0xd2801168, 0xd4000001,
};

#define NGOLDEN (sizeof(golden) / sizeof(golden[0]))

static void check_code_at(uint64_t at)
{
	uint8_t code[ARCH_TRAMP_SIZE + 8];

	memset(code, 0x5a, sizeof(code));
	CHECK(arch_tramp_code(code, at) == ARCH_TRAMP_SIZE, "at %#" PRIx64 ": no code", at);
	for (size_t i = 0; i < NGOLDEN; i++)
		CHECK(a64_get(code + 4 * i) == golden[i], "at %#" PRIx64 ": word %zu is %#x, not %#x",
		      at, i, a64_get(code + 4 * i), golden[i]);
	for (size_t k = 4 * NGOLDEN; k < ARCH_TRAMP_SIZE; k += 4)
		CHECK(a64_get(code + k) == A64_BRK0, "at %#" PRIx64 ": byte %zu is %#x, not brk #0",
		      at, k, a64_get(code + k));
	for (size_t k = ARCH_TRAMP_SIZE; k < sizeof(code); k++)
		CHECK(code[k] == 0x5a, "at %#" PRIx64 ": byte %zu beyond the trampoline written", at, k);
}

static void check_code(void)
{
	uint8_t code[ARCH_TRAMP_SIZE];

	CHECK(ARCH_TRAMP_SIZE == 456, "ARCH_TRAMP_SIZE %d, not 456", ARCH_TRAMP_SIZE);
	CHECK(ARCH_TRAMP_BLOCK_OFF == 4 * NGOLDEN, "the block at %d, not right after the code (%zu)",
	      ARCH_TRAMP_BLOCK_OFF, 4 * NGOLDEN);
	CHECK(ARCH_TRAMP_BLOCK_WORDS == 35, "%d words in the block, not 35", ARCH_TRAMP_BLOCK_WORDS);
	check_code_at(0x7f1234567000ULL);
	check_code_at(0x400004ULL);
	check_code_at(0xfffffffffe00ULL);
	memset(code, 0x5a, sizeof(code));
	CHECK(arch_tramp_code(code, 0x7f1234567002ULL) == 0, "code at an address not 4-aligned");
	CHECK(code[0] == 0x5a, "code at an address not 4-aligned was written");
}

/* The block of r and mask: x0-x30, sp, pc, pstate, mask. */
static void check_block(const char *what, const arch_regs_t *r, uint64_t mask)
{
	uint64_t b[ARCH_TRAMP_BLOCK_WORDS + 1];

	memset(b, 0x5a, sizeof(b));
	arch_tramp_block(b, r, mask);
	for (int i = 0; i < 31; i++)
		CHECK(b[i] == r->r.regs[i], "%s: word %d is %#" PRIx64 ", not x%d %#" PRIx64, what,
		      i, b[i], i, r->r.regs[i]);
	CHECK(b[31] == r->r.sp, "%s: word 31 is %#" PRIx64 ", not sp", what, b[31]);
	CHECK(b[32] == r->r.pc, "%s: word 32 is %#" PRIx64 ", not pc", what, b[32]);
	CHECK(b[33] == r->r.pstate, "%s: word 33 is %#" PRIx64 ", not pstate", what, b[33]);
	CHECK(b[34] == mask, "%s: word 34 is %#" PRIx64 ", not the mask", what, b[34]);
	CHECK(b[35] == 0x5a5a5a5a5a5a5a5aULL, "%s: a word beyond the block written", what);
}

static void check_blocks(void)
{
	arch_regs_t r;

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 31; i++)
		r.r.regs[i] = 0x0101010101010101ULL * (uint64_t)(i + 1) ^ (uint64_t)i << 56;
	r.r.sp = 0x7ffff7ff0008ULL;
	r.r.pc = 0x400abcULL;
	r.r.pstate = 0xa0001000ULL;	/* N, C, SSBS */
	r.tp = 0x7ffff7fff740ULL;
	r.nr = -1;
	check_block("a stop in no syscall", &r, 0x8000000000001a02ULL);

	/*
	 * A stop that interrupted a syscall to restart: arm64 rewound it
	 * before the stop (pc at the svc, x0 its first argument, x8 its
	 * number, no syscall in progress), so the block is the registers.
	 */
	r.r.pc = 0x400ab8ULL;
	r.r.regs[8] = 101;	/* nanosleep */
	r.nr = -1;
	check_block("a rewound restart", &r, 0);

	/* What NT_ARM_SYSTEM_CALL says is not in the block. */
	r.nr = 101;
	r.r.regs[0] = (uint64_t)-516;
	check_block("at a syscall stop", &r, ~0ULL);
}

int main(void)
{
	check_code();
	check_blocks();
	return unit_status();
}

/*
 * a64-run.c - the arm64 relocator run: real instruction sequences
 * (an ADRP + LDR of a global, ADR, every literal load, a B.cond loop,
 * CBZ, CBNZ, TBZ, TBNZ, BL, BLR, B) are moved by a64_relocate() into
 * executable buffers near their code (everything in reach), 64 MiB away
 * (B reaches), 2 GiB away (ADRP reaches) and 64 GiB away (nothing
 * does), called there, and must return what they return in place.
 * Built for aarch64 by tests/unit/a64-run.test (aarch64-linux-gnu-gcc
 * -static) and run through qemu-user; not built by make.  Prints one
 * line per sequence and place, and "ok" last when all hold.
 *
 * Each snippet is relocated as a detour moves a function's entry: one
 * instruction after another, from the first to the one that ends the
 * run (A64_ENDS: a RET, a B, or a call, whose return comes back to the
 * original code).  Branches out of the run go back to the original.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/aarch64/insn.h"
#include "a64-emu.h"

uint64_t g_val = 0x0123456789abcdefull;

typedef uint64_t (*fn_t)(uint64_t);

/* The snippets, then 32 KiB of code space after them: near enough for TBZ. */
__asm__(
	".text\n"
	".balign 4096\n"
	A64_SNIP_ADRP_LDR(snip_adrp_ldr)
	A64_SNIP_ADR(snip_adr)
	A64_SNIP_LDR_X(snip_ldr_x)
	A64_SNIP_LDR_W(snip_ldr_w)
	A64_SNIP_LDRSW(snip_ldrsw)
	".globl snip_ldr_s\n"
	"snip_ldr_s:\n"
	"	ldr s0, 1f\n"
	"	fmov w0, s0\n"
	"	ret\n"
	"1:	.word 0x3f800000\n"
	".globl snip_ldr_d\n"
	"snip_ldr_d:\n"
	"	ldr d0, 1f\n"
	"	fmov x0, d0\n"
	"	ret\n"
	"	.balign 8\n"
	"1:	.quad 0x400921fb54442d18\n"
	A64_SNIP_LDR_Q(snip_ldr_q)
	".globl snip_ldr_x16\n"
	"snip_ldr_x16:\n"
	"	ldr x16, 1f\n"
	"	mov x0, x16\n"
	"	ret\n"
	"	.balign 8\n"
	"1:	.quad 0x1616161616161616\n"
	A64_SNIP_PRFM(snip_prfm)
	A64_SNIP_BCOND(snip_bcond)
	A64_SNIP_BCOND_FWD(snip_bcond_first)
	A64_SNIP_CBZ(snip_cbz)
	".globl snip_cbnz_x16\n"
	"snip_cbnz_x16:\n"	/* the scratch is x17: x16 kept */
	"	mov x16, x0\n"
	"	cbnz x16, 1f\n"
	"	mov x0, #1\n"
	"	ret\n"
	"1:	add x0, x16, #3\n"
	"	ret\n"
	A64_SNIP_TBZ(snip_tbz)
	A64_SNIP_TBNZ40(snip_tbnz40)
	A64_SNIP_BL(snip_bl)
	A64_SNIP_BLR(snip_blr)
	A64_SNIP_B(snip_b)
	A64_SNIP_HELPER
	".balign 4096\n"
	".globl near_buf\n"
	"near_buf:\n"
	".space 32768\n"
	".balign 4096\n");

#define SNIPS(X) \
	X(snip_adrp_ldr) X(snip_adr) X(snip_ldr_x) X(snip_ldr_w) X(snip_ldrsw) X(snip_ldr_s) \
	X(snip_ldr_d) X(snip_ldr_q) X(snip_ldr_x16) X(snip_prfm) X(snip_bcond) \
	X(snip_bcond_first) X(snip_cbz) X(snip_cbnz_x16) X(snip_tbz) X(snip_tbnz40) X(snip_bl) \
	X(snip_blr) X(snip_b)
#define DECLARE(s) extern uint32_t s[];
SNIPS(DECLARE)
extern uint8_t near_buf[];

static const struct snip {
	const char *name;
	uint32_t *code;
} snips[] = {
#define ENTRY(s) { #s, s },
	SNIPS(ENTRY)
};

/* The arguments each snippet is called with: both ways of each branch. */
static const uint64_t args[] = { 0, 1, 5, 8, 9, 10, 0x10000000000ull, 0x10000000008ull };

static int failures;

/*
 * Relocate the snippet s into buf (at its own address) up to the
 * instruction that ends the run: the bytes used, or -errno.
 */
static int relocate(const struct snip *s, uint8_t *buf, size_t room, int *pcrel_long)
{
	size_t used = 0;

	*pcrel_long = 0;
	for (unsigned i = 0;; i++) {
		struct a64_insn in;
		uint64_t pc = (uint64_t)(uintptr_t)&s->code[i];
		uint64_t at = (uint64_t)(uintptr_t)buf + used;
		int n, err;

		err = a64_decode(s->code[i], pc, &in);
		if (err)
			return err;
		n = a64_relocate(&in, at, 0, (uint32_t *)(buf + used), room - used);
		if (n < 0)
			return n;
		if ((in.flags & A64_PCREL) && n > ((in.flags & A64_CALL) ? 8 : 4))
			(*pcrel_long)++;
		used += (size_t)n;
		if (in.flags & A64_ENDS)
			break;
	}
	__builtin___clear_cache((char *)buf, (char *)buf + used);
	return (int)used;
}

static void run_at(const char *place, uint8_t *buf, size_t room, int want_long)
{
	for (size_t i = 0; i < sizeof(snips) / sizeof(snips[0]); i++) {
		const struct snip *s = &snips[i];
		int longs, n = relocate(s, buf, room, &longs);
		int bad = 0;

		if (n < 0) {
			printf("FAIL %s %s: relocation: %s\n", place, s->name, strerror(-n));
			failures++;
			continue;
		}
		for (size_t a = 0; a < sizeof(args) / sizeof(args[0]); a++) {
			uint64_t want = ((fn_t)(uintptr_t)s->code)(args[a]);
			uint64_t got = ((fn_t)(uintptr_t)buf)(args[a]);

			if (got != want) {
				printf("FAIL %s %s(%#" PRIx64 "): %#" PRIx64 ", not %#" PRIx64 "\n",
				       place, s->name, args[a], got, want);
				bad = 1;
			}
		}
		if (want_long >= 0 && (longs > 0) != want_long) {
			printf("FAIL %s %s: %d long forms\n", place, s->name, longs);
			bad = 1;
		}
		failures += bad;
		printf("%s %s: %d bytes, %d long forms%s\n", place, s->name, n, longs,
		       bad ? " FAIL" : "");
	}
}

int main(void)
{
	static const struct {
		const char *name;
		uint64_t dist;
		int want_long;	/* -1: some do, some do not */
	} places[] = {
		{ "64MiB", 64ull << 20, -1 },
		{ "2GiB", 2ull << 30, -1 },	/* ADRP reaches */
		{ "64GiB", 64ull << 30, 1 },
	};
	uint64_t code = (uint64_t)(uintptr_t)snips[0].code;
	size_t len = 1 << 16;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (mprotect(near_buf, 32768, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		printf("FAIL mprotect of the code space: %s\n", strerror(errno));
		return 1;
	}
	run_at("near", near_buf, 32768, 0);
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		uint8_t *buf = a64_map_at(code, places[i].dist, len);

		if (!buf) {
			printf("FAIL mmap at %#" PRIx64 " + %s: %s\n", code, places[i].name,
			       strerror(errno));
			failures++;
			continue;
		}
		run_at(places[i].name, buf, len, places[i].want_long);
		munmap(buf, len);
	}
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

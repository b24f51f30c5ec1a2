/*
 * a64-emu.h - what the arm64 test programs built static for aarch64
 * share (tests/unit/a64-run.c, a64-bp-run.c, a64-detour-run.c, run
 * through qemu-user, and tests/arm64/bp-ptrace.c, run in the arm64
 * guest): the mmap flags an older libc lacks, an executable buffer at a
 * given distance from the code, and the snippets of code they run,
 * as assembler text for a top-level __asm__.
 *
 * A snippet macro takes the snippet's name, a bare identifier: it
 * becomes a global label of the program, at the snippet's first
 * instruction, and the snippet ends in its RET (or its B).  The
 * snippets take their argument in x0 and return in x0; those that load
 * g_val need the program to define it (uint64_t g_val), those that call
 * helper need A64_SNIP_HELPER in the same program.  Numeric labels
 * (1:) are the snippet's own.  Included once per program, by its one
 * C file.
 */
#ifndef A64_EMU_H
#define A64_EMU_H

#include <stdint.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef PROT_BTI
#define PROT_BTI 0x10
#endif

/* The global label name, at the next instruction. */
#define A64_SNIP(name) ".globl " #name "\n" #name ":\n"

/* The global label name, at the start of a page of .text. */
#define A64_CODE_PAGE(name) ".text\n" ".balign 4096\n" A64_SNIP(name)

/* g_val, by ADRP and an LDR of its low 12 bits. */
#define A64_SNIP_ADRP_LDR(name) A64_SNIP(name) \
	"	adrp x0, g_val\n" \
	"	ldr x0, [x0, :lo12:g_val]\n" \
	"	ret\n"

/* 0x5555aaaa5555aaaa, through ADR of its address. */
#define A64_SNIP_ADR(name) A64_SNIP(name) \
	"	adr x1, 1f\n" \
	"	ldr x0, [x1]\n" \
	"	ret\n" \
	"	.balign 8\n" \
	"1:	.quad 0x5555aaaa5555aaaa\n"

/* The literal loads: x, w, sw, q (its halves xored). */
#define A64_SNIP_LDR_X(name) A64_SNIP(name) \
	"	ldr x0, 1f\n" \
	"	ret\n" \
	"	.balign 8\n" \
	"1:	.quad 0x1122334455667788\n"

#define A64_SNIP_LDR_W(name) A64_SNIP(name) \
	"	ldr w0, 1f\n" \
	"	ret\n" \
	"1:	.word 0xfedcba98\n"

#define A64_SNIP_LDRSW(name) A64_SNIP(name) \
	"	ldrsw x0, 1f\n" \
	"	ret\n" \
	"1:	.word 0xfedcba98\n"

#define A64_SNIP_LDR_Q(name) A64_SNIP(name) \
	"	ldr q0, 1f\n" \
	"	mov x0, v0.d[1]\n" \
	"	fmov x1, d0\n" \
	"	eor x0, x0, x1\n" \
	"	ret\n" \
	"	.balign 16\n" \
	"1:	.quad 0x0f0f0f0f0f0f0f0f, 0x0ff00ff00ff00ff0\n"

/* A literal PRFM, then x0 + 7. */
#define A64_SNIP_PRFM(name) A64_SNIP(name) \
	"	prfm pldl1keep, 1f\n" \
	"	add x0, x0, #7\n" \
	"	ret\n" \
	"1:	.quad 0\n"

/*
 * 1 + .. + n, n = (x0 & 15) + 1: the b.ne at +20 goes back n - 1 times
 * and runs n times.
 */
#define A64_SNIP_BCOND(name) A64_SNIP(name) \
	"	and x0, x0, #15\n" \
	"	add x0, x0, #1\n" \
	"	mov x1, #0\n" \
	"1:	add x1, x1, x0\n" \
	"	subs x0, x0, #1\n" \
	"	b.ne 1b\n" \
	"	mov x0, x1\n" \
	"	ret\n"

/* x0 < 10 ? 100 : 200, by a B.cond forward. */
#define A64_SNIP_BCOND_FWD(name) A64_SNIP(name) \
	"	cmp x0, #10\n" \
	"	b.lo 1f\n" \
	"	mov x0, #200\n" \
	"	ret\n" \
	"1:	mov x0, #100\n" \
	"	ret\n"

/* x0 == 0 ? 2 : 1. */
#define A64_SNIP_CBZ(name) A64_SNIP(name) \
	"	cbz x0, 1f\n" \
	"	mov x0, #1\n" \
	"	ret\n" \
	"1:	mov x0, #2\n" \
	"	ret\n"

/* bit 3 of x0 clear ? 2 : 1. */
#define A64_SNIP_TBZ(name) A64_SNIP(name) \
	"	tbz w0, #3, 1f\n" \
	"	mov x0, #1\n" \
	"	ret\n" \
	"1:	mov x0, #2\n" \
	"	ret\n"

/* bit 40 of x0 set ? 2 : 1. */
#define A64_SNIP_TBNZ40(name) A64_SNIP(name) \
	"	tbnz x0, #40, 1f\n" \
	"	mov x0, #1\n" \
	"	ret\n" \
	"1:	mov x0, #2\n" \
	"	ret\n"

/* helper(x0) + 1, the BL at +8. */
#define A64_SNIP_BL(name) A64_SNIP(name) \
	"	stp x29, x30, [sp, #-16]!\n" \
	"	mov x29, sp\n" \
	"	bl helper\n" \
	"	add x0, x0, #1\n" \
	"	ldp x29, x30, [sp], #16\n" \
	"	ret\n"

/* helper(x0) + 2, the BLR at +12. */
#define A64_SNIP_BLR(name) A64_SNIP(name) \
	"	stp x29, x30, [sp, #-16]!\n" \
	"	mov x29, sp\n" \
	"	adr x1, helper\n" \
	"	blr x1\n" \
	"	add x0, x0, #2\n" \
	"	ldp x29, x30, [sp], #16\n" \
	"	ret\n"

/* helper(x0), a tail call by B. */
#define A64_SNIP_B(name) A64_SNIP(name) \
	"	b helper\n"

/* helper(x0) with x30 signed by PACIASP, spilled, and checked by AUTIASP. */
#define A64_SNIP_PAC(name) A64_SNIP(name) \
	"	paciasp\n" \
	"	stp x29, x30, [sp, #-16]!\n" \
	"	mov x29, sp\n" \
	"	bl helper\n" \
	"	ldp x29, x30, [sp], #16\n" \
	"	autiasp\n" \
	"	ret\n"

/* x0 + x0 in a frame: an STP at the entry. */
#define A64_SNIP_STP(name) A64_SNIP(name) \
	"	stp x29, x30, [sp, #-16]!\n" \
	"	mov x29, sp\n" \
	"	add x0, x0, x0\n" \
	"	ldp x29, x30, [sp], #16\n" \
	"	ret\n"

/* x0 + 3 after BTI c: a page of its own mapped PROT_BTI guards it. */
#define A64_SNIP_BTI(name) A64_SNIP(name) \
	"	bti c\n" \
	"	add x0, x0, #3\n" \
	"	ret\n"

/* helper: x0 + 41. */
#define A64_SNIP_HELPER A64_SNIP(helper) \
	"	add x0, x0, #41\n" \
	"	ret\n"

/*
 * A writable, executable private buffer of len bytes at the page of
 * code plus dist: NULL when that place is taken (the mapping there is
 * left alone) or the mmap fails, with errno set by mmap.  The caller
 * munmaps it.
 */
static inline uint8_t *a64_map_at(uint64_t code, uint64_t dist, size_t len)
{
	uint64_t want = (code & ~0xfffull) + dist;
	void *p = mmap((void *)(uintptr_t)want, len, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if ((uint64_t)(uintptr_t)p != want) {	/* a kernel without MAP_FIXED_NOREPLACE */
		munmap(p, len);
		return NULL;
	}
	return p;
}

#endif /* A64_EMU_H */

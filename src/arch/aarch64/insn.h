/*
 * insn.h (aarch64) - the A64 instructions a breakpoint or a detour
 * displaces: what each one is, how it runs at another address, the
 * patch that branches to that address, and where the patch goes after
 * a function's landing pad.
 *
 * Everything here is a pure function of 32-bit instruction words and
 * addresses: no target is read, nothing is written but the caller's
 * buffers, and it computes the same on any host.  Words are values;
 * a64_get() and a64_put() convert them from and to the target's
 * memory, which is little-endian (aarch64 Linux; big-endian aarch64_be
 * is not supported).
 *
 * Lifecycle: a64_decode() the word at its address into a struct
 * a64_insn; a64_reloc_len() says how many bytes it takes at a new
 * address (so a caller sizes its buffer, at most A64_RELOC_MAX);
 * a64_relocate() writes them.  The copy behaves as the original did at
 * its address: same registers and memory afterwards, except the scratch
 * register a64_reloc_scratch() names, and it goes on after itself as
 * the original went on to pc + 4.
 *
 * Calls (BL, BLR) return to the original pc + 4, not into the copy: the
 * return address a callee and an unwinder see is the function's own,
 * and no return comes back into a slot that may be gone by then.  A
 * caller relocating a run of instructions therefore ends the run after
 * a call, as after B, BR and RET (A64_ENDS): whatever follows in the
 * copy never runs, and pc + 4 must stay outside the patch.
 *
 * Scratch: sequences for targets out of reach of the instruction's own
 * immediate may clobber x16 or x17 (IP0/IP1, which AAPCS64 lets a veneer
 * clobber between a call and the callee's entry; DESIGN.md: free at a
 * function's entry).  The caller relocates such an instruction only
 * where that register is dead: among a function's first instructions,
 * before one of them writes it (a64_may_use_ip()).  Loads from a literal load the address
 * into their own destination register instead where they can.
 *
 * BTI: an indirect branch (BR x16) into a page mapped with PROT_BTI
 * must land on a landing pad, which the targets of B, B.cond, CBZ and
 * TBZ inside a function are not.  With A64_RELOC_BTI such a target out
 * of reach of a direct branch fails with -ERANGE.  BR x16/x17 sets
 * BTYPE 01, which BTI c, BTI j, BTI jc, PACIASP and PACIBSP all accept,
 * so a relocated BLR reaches any callee its BLR (BTYPE 10) could.
 */
#ifndef MEMTAP_A64_INSN_H
#define MEMTAP_A64_INSN_H

#include <stddef.h>
#include <stdint.h>

#define A64_INSN_LEN 4
#define A64_NOP 0xd503201fu
#define A64_BRK0 0xd4200000u	/* brk #0: SIGTRAP, pc at the brk */

enum a64_kind {
	A64_OTHER,	/* no pc dependence: copied as it is */
	A64_PAD,	/* BTI c/j/jc, PACIASP, PACIBSP: copied as it is */
	A64_ADR,	/* ADR Xd, target */
	A64_ADRP,	/* ADRP Xd, target (a 4 KiB page) */
	A64_LDR_LIT,	/* LDR Wt/Xt, LDRSW Xt, LDR St/Dt/Qt (literal) */
	A64_PRFM_LIT,	/* PRFM (literal) */
	A64_B,		/* B: A64_ENDS */
	A64_BL,		/* BL: A64_ENDS | A64_CALL */
	A64_BCOND,	/* B.cond, BC.cond */
	A64_CB,		/* CBZ, CBNZ */
	A64_TB,		/* TBZ, TBNZ */
	A64_BLR,	/* BLR Xn: A64_ENDS | A64_CALL */
	A64_BR,		/* BR, BRAA, BRAAZ, BRAB, BRABZ: A64_ENDS, copied */
	A64_RET,	/* RET, RETAA, RETAB: A64_ENDS, copied */
};

/* struct a64_insn.flags */
#define A64_PCREL 0x1	/* its meaning depends on its address */
#define A64_ENDS 0x2	/* nothing after it in a displaced run ever runs */
#define A64_CALL 0x4	/* sets x30 to pc + 4 */

struct a64_insn {
	uint32_t word;
	uint64_t pc;		/* the address it was decoded at */
	enum a64_kind kind;
	unsigned flags;
	unsigned reg;		/* Rd (ADR, ADRP), Rt (LDR, CBZ, TBZ), Rn (BLR, BR, RET) */
	uint64_t target;	/* A64_PCREL: the address it names (ADRP: a page) */
};

/*
 * Decode word, found at address pc (4-aligned).  Returns 0, or:
 *   -EBUSY    a BRK: a breakpoint of memtap's or another debugger's;
 *   -ENOTSUP  an instruction memtap cannot run out of line: the
 *             exclusive loads and stores (LDXR, LDAXR, STXR, STLXR,
 *             LDXP, LDAXP, STXP, STLXP and their byte and halfword
 *             forms: the exception return of a breakpoint's stop clears
 *             the exclusive monitor, so a displaced LDXR/STXR pair may
 *             never succeed), BLRAA/BLRAAZ/BLRAB/BLRABZ (a signed call,
 *             whose return address is pc + 4), HLT;
 *   -EINVAL   undefined: UDF, the unallocated top-level groups, ERET,
 *             DRPS, LDR (literal) with V=1 opc=11, pc not 4-aligned.
 * On an error *in is still filled with word, pc and A64_OTHER.
 *
 * The pc-relative instructions of A64 are ADR, ADRP, the literal loads
 * and PRFM, B, BL, B.cond, CBZ/CBNZ and TBZ/TBNZ; BL and BLR also read
 * pc, writing pc + 4 to x30.  No other user-mode instruction reads the
 * pc (SVC's restart re-runs the copy's svc, which is correct).
 */
int a64_decode(uint32_t word, uint64_t pc, struct a64_insn *in);

/*
 * Is word a landing pad an indirect branch may land on, in a page
 * mapped with PROT_BTI: BTI c, BTI j, BTI jc, PACIASP, PACIBSP (the
 * last two are implicit BTI c)?  A bare BTI (no target) accepts no
 * branch and is not one.
 */
int a64_is_landing_pad(uint32_t word);

/*
 * Where a patch goes at a function whose first words are w[0..n): the
 * offset in bytes past its landing pad, 4 when w[0] is one, else 0.
 * Only the first word: executing a landing pad clears PSTATE.BTYPE, so
 * the next instruction is reached as sequential code and a second pad
 * there (`bti c; paciasp`) is an ordinary instruction, relocated as
 * any other.  After PACIASP x30 holds the signed return address.
 */
size_t a64_landing_pad(const uint32_t *w, size_t n);

/*
 * May word read or write x16 or x17?  Over-approximated from the fields
 * general registers are encoded in (Rd 4..0, Rn 9..5, Rt2/Ra 14..10,
 * Rm/Rs 20..16), immediates included, and pairs (CASP x16, x17, LD64B's
 * eight registers) by their first: 0 is certain, 1 may be an immediate.
 * A caller that needs a scratch register of a64_reloc_scratch() for an
 * instruction of a run checks that none before it in the run returns 1.
 */
int a64_may_use_ip(uint32_t word);

/*
 * Relocation.  flags: A64_RELOC_BTI when the instruction's branch
 * targets are in a page mapped with PROT_BTI (see above).
 * A64_RELOC_MAX: the most bytes any one instruction takes.
 */
#define A64_RELOC_BTI 0x1
#define A64_RELOC_MAX 32

/*
 * The bytes a64_relocate() writes for in at address at: 4..A64_RELOC_MAX,
 * or -EINVAL (at not 4-aligned, in not decoded by a64_decode()),
 * -ERANGE (a target an indirect branch may not reach, A64_RELOC_BTI).
 */
int a64_reloc_len(const struct a64_insn *in, uint64_t at, unsigned flags);

/*
 * Write into out[0..room/4) the code that runs in at address at: the
 * same instruction with a new immediate when its target is in reach
 * from at, else an equivalent sequence:
 *   ADR:        ADRP Xd + ADD Xd, or LDR Xd, #8; B #12; .quad target
 *   ADRP:       LDR Xd, #8; B #12; .quad page
 *   LDR (lit):  the address into Xt (ADR, ADRP + ADD or a literal), then
 *               LDR Wt/Xt / LDRSW Xt, [Xt]; St/Dt/Qt and PRFM through
 *               the scratch register
 *   B:          ADRP x16 + ADD x16 + BR x16, or LDR x16, #8; BR x16;
 *               .quad target
 *   B.cond, CBZ, TBZ: the inverted condition over a branch as B's
 *   BL:         x30 = pc + 4 (ADR, ADRP + ADD, or a literal), then B's
 *   BLR Xn:     MOV x16, Xn (unless n is 16 or 17); x30 = pc + 4; BR x16
 * A destination of xzr (Rd/Rt 31) is kept as a discarded result: ADR
 * and ADRP become a NOP.  A .quad is two words, low first, and need not
 * be 8-aligned (unaligned loads of normal memory are allowed at EL0).
 * Returns the bytes written (those of a64_reloc_len()), or its errors,
 * or -ENOSPC when room (in bytes) is too small (nothing written then).
 * out is not NULL.  A target is taken as it is: a branch into the
 * displaced run itself, which would land in the patch, is the caller's
 * to refuse (its target is in->target).
 */
int a64_relocate(const struct a64_insn *in, uint64_t at, unsigned flags, uint32_t *out,
		 size_t room);

/* The scratch register the code for in at at clobbers: 16, 17, or -1 for none. */
int a64_reloc_scratch(const struct a64_insn *in, uint64_t at, unsigned flags);

/*
 * Patches.  A B reaches +-128 MiB: the 4-byte patch a thread sees
 * whole (one aligned word is written atomically).  Beyond, ADRP x16 +
 * ADD x16 + BR x16 (12 bytes, +-4 GiB of pages) or LDR x16, #8; BR x16;
 * .quad to (16 bytes, anywhere), which clobber x16 and reach to only
 * through an indirect branch: to must then not be in a PROT_BTI page
 * unless it is a landing pad.
 */
int a64_b_in_reach(uint64_t from, uint64_t to);

/* B from to: 0 and *word, or -ERANGE (out of reach or not 4-aligned). */
int a64_enc_b(uint64_t from, uint64_t to, uint32_t *word);

/* The bytes a64_patch() writes at site: 4, 12 or 16. */
size_t a64_patch_len(uint64_t site, uint64_t to);

/*
 * The patch at site (4-aligned) branching to to (4-aligned), into
 * out[0..a64_patch_len()/4): the shortest that reaches.  Returns its
 * bytes.
 */
size_t a64_patch(uint32_t *out, uint64_t site, uint64_t to);

/*
 * Are w[0..n), at addr, a patch as a64_patch() writes?  Its target, with
 * its length in *len; else 0.
 */
uint64_t a64_patched_target(const uint32_t *w, size_t n, uint64_t addr, size_t *len);

/* A word from the target's little-endian memory, and back. */
static inline uint32_t a64_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void a64_put(uint8_t *p, uint32_t w)
{
	p[0] = (uint8_t)w;
	p[1] = (uint8_t)(w >> 8);
	p[2] = (uint8_t)(w >> 16);
	p[3] = (uint8_t)(w >> 24);
}

#endif /* MEMTAP_A64_INSN_H */

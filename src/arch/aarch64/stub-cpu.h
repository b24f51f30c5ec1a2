/*
 * stub-cpu.h (aarch64) - arm64's part of the stub ABI: the layout of a
 * slot's glue, the registers a ring record keeps by their names, the
 * thread pointer the stubs find tid from.  Included at the end of
 * arch/stub-abi.h, which gives the rest of the layout (include that).
 * The glue is written by detour.c; the common routines it enters are
 * detour-stubs.S's, in A64.
 *
 * A slot's glue is entered by the function's `B slot` with x30 = the
 * caller's return address (signed, when the landing pad left in place
 * was PACIASP or PACIBSP) and sp = the caller's sp:
 *   +0  XPACLRI (HINT #7, a NOP without pointer authentication): x30
 *       as the caller's BL left it.  The relocated entry at DT_ORIG
 *       starts with the function's PACIASP or PACIBSP again (detour.c),
 *       so that whoever enters it (the prefilter, the glue's BL, the
 *       glue's B) has it sign x30 with the sp it is entered with, as its
 *       epilogue will authenticate it.
 *   a prefilter (stub-abi.h), from +4 up to DT_PF_LEN: MOVZ/MOVK w9,
 *       DESC; ADR x10, the slot; B dt_common_prefilter.  A call it sends
 *       on into the function goes to slot + DT_ORIG with nothing saved,
 *       x9-x17 and the flags clobbered; any other to slot + DT_PF_LEN.
 *   then the glue (from +4 without a prefilter):
 *       STP x0, x1, [sp, #-DT_GLUE_FRAME]!; STP x2, x3 / x4, x5 / x6, x7
 *       / x8, x30 at sp + 16, 32, 48, 64: the argument registers, the
 *       indirect result register and the return address, sp + 72 =
 *       the caller's return address, sp + DT_GLUE_FRAME = sp at entry;
 *     result probes (malloc...): BL slot + DT_ORIG; MOVZ/MOVK w9, DESC;
 *       B dt_common_result, which records with x0 (the result), pops
 *       the frame and returns to the caller with x0 and x1 as the
 *       function left them;
 *     entry probes (free; execve's sync point): MOVZ/MOVK w9, DESC; BL
 *       dt_common_entry (dt_common_sync), which records and returns
 *       with sp as it found it; LDP the registers back (x0, x1 last,
 *       post-indexed); B slot + DT_ORIG.
 * Far glue reaches the common routines through its page's header:
 * LDR x16, [far + F_*] (a literal); BR x16 (BLR x16 for a call).
 * The common routines may clobber x9-x17 and the flags, which no
 * function's entry gives a meaning to (AAPCS64: x16, x17 are the
 * veneers'), keep x18 (the platform's), x19-x29 and sp as AAPCS64
 * says, and touch no FP/SIMD register (v0-v7 carry arguments into the
 * function after an entry probe, v0-v3 results out of it).  The stub
 * mapping is not mapped with PROT_BTI: the far glue's BR x16 and the
 * prefilter's jump to slot + DT_ORIG need no landing pad there.
 *
 * The stubs find a thread's tid at tp + D_TID_OFF, a negative offset
 * as two's complement (TPIDR_EL0; TLS variant I: glibc's struct pthread
 * is below tp), and key the thread table by tp itself.  A record's R_SP
 * is sp at the function's entry, which is the caller's sp after the
 * return too; R_RET is x30 at entry, without its PAC (the glue's
 * XPACLRI).
 */
#ifndef MEMTAP_ARCH_STUB_CPU_H
#define MEMTAP_ARCH_STUB_CPU_H

/* a slot's glue */
#define DT_TEMPLATE_MAX	0x1c00	/* the common routines fit below this (x86-64's: 0x10e0) */
#define DT_SLOT_SIZE	0x90
#define DT_ORIG		0x58	/* relocated entry, from the slot's start */
#define DT_PF_LEN	0x18	/* XPACLRI and a prefilter: the glue after it */
#define DT_SAVED	0x80	/* length, then the original bytes of the entry */
#define DT_ORIG_ROOM	(DT_SAVED - DT_ORIG)
#define DT_GLUE_FRAME	80	/* the glue's frame: x0-x8, x30 */
#define DT_GLUE_RA	72	/* the caller's return address in it */

/*
 * A record's callee-saved registers.  stub-abi.h's R_SAVED_MAX (6) is
 * fewer than arm64's eleven (x19-x29): x19-x23 are at R_SAVED0 + 8 * i
 * in arch_saved_reg()'s order (STUB_*, cpu.h), x29, the one the
 * unwinders need, in the sixth place; x24-x28 are not kept.
 */
#define R_X19		(R_SAVED0 + 0x00)
#define R_X20		(R_SAVED0 + 0x08)
#define R_X21		(R_SAVED0 + 0x10)
#define R_X22		(R_SAVED0 + 0x18)
#define R_X23		(R_SAVED0 + 0x20)
#define R_X29		(R_SAVED0 + 0x28)

#ifndef __ASSEMBLER__
_Static_assert(R_X19 == R_SAVED0 + 8 * STUB_X19 && R_X20 == R_SAVED0 + 8 * STUB_X20 &&
		       R_X21 == R_SAVED0 + 8 * STUB_X21 && R_X22 == R_SAVED0 + 8 * STUB_X22 &&
		       R_X23 == R_SAVED0 + 8 * STUB_X23,
	       "a record's registers in arch_saved_reg()'s order");
_Static_assert(R_X29 < R_SAVED0 + 8 * R_SAVED_MAX, "a record holds x29");
_Static_assert(DT_ORIG + DT_ORIG_ROOM == DT_SAVED && DT_SAVED + 8 <= DT_SLOT_SIZE &&
		       DT_SLOT_SIZE % 16 == 0 && DT_TEMPLATE_MAX % 16 == 0,
	       "a slot's layout");
_Static_assert(DT_TEMPLATE_MAX + DT_FAR_SLOTS * DT_SLOT_SIZE <= DT_CODE_SIZE &&
		       (DT_ALL_SLOTS << C_SHIFT) <= DT_PAGE &&
		       (DT_ALL_SLOTS << PT_SLOT_SHIFT) <= (1 << PT_SHIFT),
	       "the far pages' slots fit, and the counters of every slot");

/* stub-abi.h: sp as the return left it is sp at the entry (ret pops nothing). */
static inline void arch_regs_from_record(arch_regs_t *r, const uint8_t *rec)
{
	r->r.pc = dt_rec_word(rec, R_RET);
	r->r.sp = dt_rec_word(rec, R_SP);
	for (int i = STUB_X19; i <= STUB_X23; i++)
		arch_set_saved_reg(r, i, dt_rec_word(rec, R_SAVED0 + 8 * (unsigned)i));
	arch_set_fp(r, dt_rec_word(rec, R_X29));
}

/* stub-abi.h: no stub walk in A64 yet; a record holds the stack copied. */
static inline int arch_stub_walks(void)
{
	return 0;
}

/* stub-abi.h: struct pthread ends at tp (TLS variant I): a negative offset. */
#define ARCH_STUB_TID_SIZE 1
static inline uint64_t arch_stub_tid_off(uint64_t in_pthread, uint64_t pthread_size)
{
	if (!pthread_size || in_pthread + 4 > pthread_size)
		return 0;
	return in_pthread - pthread_size;
}
#endif

#endif /* MEMTAP_ARCH_STUB_CPU_H */

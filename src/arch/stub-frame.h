/*
 * stub-frame.h - the frames of the code memtap writes into a target for
 * its in-target probes (stub-abi.h): the common routines of the stub
 * template and each slot's glue and relocated entry, which have no
 * CFI.  The arch finds them by following that code
 * (src/arch/$(arch)/stub-frame.c); probe/detour-frame.c reads a slot's
 * code from the target, or keeps it as memtap wrote it, and hands the
 * frame to the unwinders (stack/modules.h, struct stub_frame).
 */
#ifndef MEMTAP_STUB_FRAME_H
#define MEMTAP_STUB_FRAME_H

#include <stdint.h>

#include "arch/arch.h"

/*
 * A frame in the stub code, at a pc with sp its stack pointer: the
 * caller's return address is at sp + ra_off, and each callee-saved
 * register the code saved (ARCH_NSAVED of them, in the arch's order)
 * is at sp + saved[i] (-1: the code left it alone).
 */
struct arch_stub_frame {
	uint32_t ra_off;
	int32_t saved[ARCH_NSAVED];
};

/*
 * ra_off: the caller's return address is still in the CPU's
 * return-address register, where a function has it at its entry
 * (arch_entry_ra(), the stop's own registers only), and sp is the
 * caller's; never on a CPU whose call pushes it (ARCH_RET_POP not 0).
 * Otherwise the caller's sp is sp + ra_off + 8: the return address is
 * the top word of the frame.
 */
#define STUB_RA_IN_REG UINT32_MAX

/*
 * The frame at offset off of the stub code: with slot NULL, of the
 * template's common routines (off < DT_TEMPLATE_MAX; memtap's own copy
 * of them is followed once, and kept), else of the slot whose code is
 * slot[0..DT_SAVED) (off < DT_SAVED from the slot's start).  0, or -1
 * when the code there has no known frame.  The slot's bytes are only
 * read.
 */
int arch_stub_frame(const uint8_t *slot, uint64_t off, struct arch_stub_frame *f);

#endif /* MEMTAP_STUB_FRAME_H */

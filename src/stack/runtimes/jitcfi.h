/*
 * jitcfi.h - the CFI of run-time code from its jitdump's
 * JIT_CODE_UNWINDING_INFO (stack/runtimes/jitnames.h: jit_names_unwind()).
 *
 * The record's .eh_frame and .eh_frame_hdr are placed, as perf's
 * genelf places them beside the code, at the code's start plus its
 * size rounded up to 8 (the .eh_frame) and right after it (the
 * .eh_frame_hdr): their pc-relative pointers are relative to those
 * addresses, which is where V8 also maps them (mapped_size).  They are
 * wrapped in an ELF image in memory and read by libdw
 * (dwarf_getcfi_elf()): anything libdw refuses there is no CFI, and a
 * rule it gives is checked by the unwinder like any other.
 *
 * Compiled only with libdw (HAVE_LIBDW).  main thread only.
 */
#ifndef MEMTAP_JITCFI_H
#define MEMTAP_JITCFI_H

#include <stdint.h>

#include <elfutils/libdw.h>

/*
 * The CFI of the code at pc of module (a jit_names_module() id), read
 * from its jitdump (more of it read first when nothing read covers
 * pc), or NULL when its load had no UNWINDING_INFO or libdw refuses
 * it.  Addresses in it are the process's (no bias).  Borrowed: valid
 * until the next call or jit_cfi_release().
 */
Dwarf_CFI *jit_cfi_get(uint32_t module, uint64_t pc);

/* Frees what jit_cfi_get() keeps.  jit_cfi_get() may be called again. */
void jit_cfi_release(void);

#endif /* MEMTAP_JITCFI_H */

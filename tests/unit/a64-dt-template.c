/*
 * a64-dt-template.c - the common routines' entry points that the arm64
 * detour glue (src/arch/aarch64/detour.c, arch_detour_glue()) branches
 * to, for the programs that plan and check detours on this host
 * (tests/unit/a64-detour.c, a64-detour-libc.c): dt_template and, at
 * known offsets from it, dt_common_result (0), dt_common_entry (0x100),
 * dt_common_sync (0x200) and dt_common_prefilter (0x300).  They are
 * never run: only their addresses go into the words checked.
 */
#include "config.h"

__asm__(".section .rodata\n"
	".globl dt_template, dt_common_result, dt_common_entry, dt_common_sync\n"
	".globl dt_common_prefilter, dt_template_end\n"
	"dt_template:\n"
	"dt_common_result: .space 0x100\n"
	"dt_common_entry: .space 0x100\n"
	"dt_common_sync: .space 0x100\n"
	"dt_common_prefilter: .space 0x100\n"
	"dt_template_end:\n"
	".text\n");

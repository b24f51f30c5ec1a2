/*
 * regs-libunwind.c (x86_64) - the register file in libunwind's
 * numbering (UNW_X86_64_*), for stack/unwind/unwind-libunwind.c's accessors.
 * Declared in arch/arch.h.  Compiled only with libunwind-ptrace
 * (HAVE_LIBUNWIND), whose headers name these registers.
 */
#include "config.h"

#include <stdint.h>

#include "arch/arch.h"

#ifdef HAVE_LIBUNWIND

#include <libunwind.h>

/* libunwind's numbers of rbx rbp r12 r13 r14 r15, arch_saved_reg()'s order. */
const int arch_unw_saved[ARCH_NSAVED] = {
	UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
	UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15,
};

int arch_unw_get(const arch_regs_t *r, int reg, uint64_t *val)
{
	switch (reg) {
	case UNW_X86_64_RAX: *val = r->rax; break;
	case UNW_X86_64_RDX: *val = r->rdx; break;
	case UNW_X86_64_RCX: *val = r->rcx; break;
	case UNW_X86_64_RBX: *val = r->rbx; break;
	case UNW_X86_64_RSI: *val = r->rsi; break;
	case UNW_X86_64_RDI: *val = r->rdi; break;
	case UNW_X86_64_RBP: *val = r->rbp; break;
	case UNW_X86_64_RSP: *val = r->rsp; break;
	case UNW_X86_64_R8: *val = r->r8; break;
	case UNW_X86_64_R9: *val = r->r9; break;
	case UNW_X86_64_R10: *val = r->r10; break;
	case UNW_X86_64_R11: *val = r->r11; break;
	case UNW_X86_64_R12: *val = r->r12; break;
	case UNW_X86_64_R13: *val = r->r13; break;
	case UNW_X86_64_R14: *val = r->r14; break;
	case UNW_X86_64_R15: *val = r->r15; break;
	case UNW_X86_64_RIP: *val = r->rip; break;
	default:
		return -1;
	}
	return 0;
}

#endif /* HAVE_LIBUNWIND */

/*
 * regs.c (x86_64) - the register file in the numberings of the tools
 * memtap hands it to: DWARF's (the x86-64 psABI's, which libdw walks
 * by) and perf's (a sample's PERF_SAMPLE_REGS_USER).  libunwind's is in
 * regs-libunwind.c.  Declared in arch/arch.h.
 */
#include "config.h"

#include <stdint.h>

#include "arch/arch.h"

/* DWARF's numbers of rbx rbp r12 r13 r14 r15, arch_saved_reg()'s order. */
const uint8_t arch_dw_saved[ARCH_NSAVED] = { 3, 6, 12, 13, 14, 15 };

void arch_dw_initial(const arch_regs_t *r, uint64_t out[ARCH_DW_NREGS])
{
	/* DWARF registers 0-16: the psABI's order, then the return address */
	const uint64_t v[ARCH_DW_NREGS] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rip,
	};

	for (int i = 0; i < ARCH_DW_NREGS; i++)
		out[i] = v[i];
}

void arch_regs_from_perf(arch_regs_t *r, const uint64_t *v)
{
	r->rax = v[PERF_REG_AX];
	r->rbx = v[PERF_REG_BX];
	r->rcx = v[PERF_REG_CX];
	r->rdx = v[PERF_REG_DX];
	r->rsi = v[PERF_REG_SI];
	r->rdi = v[PERF_REG_DI];
	r->rbp = v[PERF_REG_BP];
	r->rsp = v[PERF_REG_SP];
	r->rip = v[PERF_REG_IP];
	r->eflags = v[PERF_REG_FLAGS];
	r->cs = v[PERF_REG_CS];
	r->ss = v[PERF_REG_SS];
	r->r8 = v[PERF_REG_R8];
	r->r9 = v[PERF_REG_R9];
	r->r10 = v[PERF_REG_R10];
	r->r11 = v[PERF_REG_R11];
	r->r12 = v[PERF_REG_R12];
	r->r13 = v[PERF_REG_R13];
	r->r14 = v[PERF_REG_R14];
	r->r15 = v[PERF_REG_R15];
	/* no syscall in progress: no restart for anyone to take */
	r->orig_rax = (unsigned long long)-1;
}

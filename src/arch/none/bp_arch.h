/*
 * bp_arch.h (none) - breakpoints of the stub arch: none can be put in
 * (bp_arch_decode() refuses every instruction), and the return probes'
 * hook is refused (included through arch/arch.h; see cpu.h).
 */
#ifndef MEMTAP_BP_ARCH_H
#define MEMTAP_BP_ARCH_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpu.h"

#define BP_ARCH_TRAP_BYTE 0x00
#define BP_ARCH_MAX_INSN 4
#define BP_ARCH_SLOT_SIZE 32

/* The kinds the layers above name; bp_arch_decode() gives none. */
enum bp_insn_kind {
	BPI_DISPLACE,
	BPI_JCC,
	BPI_ENDBR,
	BPI_JMP,
	BPI_CALL,
};

struct bp_insn {
	enum bp_insn_kind kind;
	unsigned len;
	uint8_t bytes[BP_ARCH_MAX_INSN];
	int riprel;
	unsigned disp_off;
	uint64_t target;
	uint8_t cond;
};

/* none.c: -ENOTSUP, saying so once. */
int bp_arch_decode(uint64_t addr, const uint8_t *buf, size_t n, struct bp_insn *insn);

static inline int bp_arch_needs_slot(const struct bp_insn *insn)
{
	return insn->kind == BPI_DISPLACE || insn->kind == BPI_JCC;
}

int bp_arch_relocate(const struct bp_insn *insn, uint64_t addr, uint64_t slot,
		     uint8_t *code, unsigned *resume_off);

static inline int bp_arch_in_rel32(uint64_t from, uint64_t to)
{
	return arch_in_reach(from, to);
}

typedef int (*arch_mem_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
typedef int (*arch_mem_write_fn)(void *ctx, uint64_t addr, const void *buf, size_t len);

#define ARCH_BP_LEN 4

static inline void arch_bp_fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = BP_ARCH_TRAP_BYTE;
}

static inline uint64_t arch_bp_addr_from_pc(uint64_t pc) { return pc; }

int arch_bp_emulate(const struct bp_insn *insn, uint64_t addr, arch_regs_t *regs,
		    arch_mem_write_fn write, void *ctx);

static inline uint64_t arch_ret_slot_at_entry(const arch_regs_t *regs) { return arch_sp(regs); }
static inline uint64_t arch_ret_slot_at_return(const arch_regs_t *regs) { return arch_sp(regs); }

uint64_t arch_caller_at_entry(const arch_regs_t *regs, arch_mem_read_fn read, void *ctx);
int arch_ret_hook(arch_regs_t *regs, uint64_t tramp, arch_mem_write_fn write, void *ctx);
int arch_ret_hook_refused(pid_t pid);

/*
 * Can this memtap put breakpoints in a process at all?  1, or 0 where
 * its arch does not have them yet (the stub arch's, src/arch/none/bp.c):
 * then the syscalls of an attached process stop by PTRACE_SYSCALL
 * (trace/sc-mech.c) and allocator events are refused.
 */
int arch_bp_supported(void);

/* The slot is a key (sp), not a word of memory; no slot has a target. */
static inline int arch_ret_slot_in_memory(void) { return 0; }

static inline int bp_arch_slot_target(const struct bp_insn *insn, uint64_t *target)
{
	(void)insn, (void)target;
	return 0;
}

static inline uint64_t bp_arch_slot_pc(const struct bp_insn *insn, uint64_t addr,
				       uint64_t slot, unsigned resume_off, uint64_t pc)
{
	if (pc == slot)
		return addr;
	if (pc == slot + resume_off)
		return addr + insn->len;
	return 0;
}

/* No routine for hooked returns at a detach: -ENOTSUP. */
static inline int arch_ret_lookup_page(uint8_t *page, size_t len,
				       const uint64_t (*pairs)[2], size_t n)
{
	(void)page, (void)len, (void)pairs, (void)n;
	return -ENOTSUP;
}

/* No detours: 0. */
static inline int arch_bp_wrappers_detoured(void)
{
	return 0;
}

#endif /* MEMTAP_BP_ARCH_H */

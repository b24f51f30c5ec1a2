/*
 * cpu.h (none) - the stub arch: no CPU (included through arch/arch.h).
 *
 * configure --with-arch=none builds memtap with this folder in place
 * of a CPU's: everything above src/arch/ compiles against it unchanged,
 * on any CPU (scripts/cross-build.sh builds it for aarch64), which
 * shows the arch interface is all the rest of memtap needs.  It traces
 * nothing: what needs a CPU's knowledge fails, with one line saying
 * it is not supported on this CPU (none.c), or returns what a failure
 * returns.  Its register file is a generic one of its own, not any
 * kernel's; its constants are the ones the layers above need to
 * compile, chosen so that nothing follows from them.
 *
 * What it provides is what src/arch/x86_64/'s headers give the layers
 * above: a new arch function there is added here too.
 */
#ifndef MEMTAP_ARCH_CPU_H
#define MEMTAP_ARCH_CPU_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/stop.h"

#define ARCH_NAME "none"
/* No syscall instruction: no remote syscall is ever set up. */
#define ARCH_SYSCALL_INSN_LEN 4

/*
 * The callee-saved registers the stubs keep and the unwinders carry:
 * as many as x86-64 has, so that the layers above size their tables
 * alike.
 */
enum { STUB_RBX, STUB_RBP, STUB_R12, STUB_R13, STUB_R14, STUB_R15, ARCH_NSAVED };
#define STUB_NSAVED ARCH_NSAVED

/* A register file of no CPU: what the layers above ask of one. */
typedef struct arch_regs {
	uint64_t pc, sp, fp, tp;
	uint64_t args[6];	/* a function's integer arguments */
	uint64_t ret;		/* its return value, a syscall's result */
	long nr;		/* the syscall number */
	uint64_t saved[ARCH_NSAVED];
} arch_regs_t;

/* One ABI, so that tables indexed by it have a row. */
enum abi {
	ABI_NONE,
	ABI_COUNT
};
#define ARCH_ABI_NATIVE ABI_NONE

/* No audit arch is this (AUDIT_ARCH_* are never 0): no filter matches. */
#define ARCH_AUDIT_NATIVE 0u

static inline int arch_abi_bits(enum abi abi) { (void)abi; return 64; }

static inline uint64_t arch_pc(const arch_regs_t *r) { return r->pc; }
static inline uint64_t arch_sp(const arch_regs_t *r) { return r->sp; }
static inline uint64_t arch_tp(const arch_regs_t *r) { return r->tp; }
static inline uint64_t arch_stack_top_from_tp(uint64_t tp) { (void)tp; return 0; }

/* none.c: they fail (-ENOTSUP), saying so once. */
int arch_regs_get(pid_t tid, arch_regs_t *r);
int arch_regs_set(pid_t tid, const arch_regs_t *r);
int arch_thread_set_pc(pid_t tid, uint64_t pc);

static inline long arch_syscall_nr(const arch_regs_t *r) { return r->nr; }

static inline uint64_t arch_syscall_arg(const arch_regs_t *r, enum abi abi, int i)
{
	(void)abi;
	return r->args[i];
}

static inline int64_t arch_syscall_ret(const arch_regs_t *r, enum abi abi)
{
	(void)abi;
	return (int64_t)r->ret;
}

/* No registers to ask: -1 (cannot say) at every kind of stop. */
static inline int arch_at_syscall_entry(const arch_regs_t *r, enum arch_stop kind)
{
	(void)r, (void)kind;
	return -1;
}

static inline enum abi
arch_abi_of_stop(const arch_regs_t *r,
		 int (*read)(void *ctx, uint64_t addr, void *buf, size_t len), void *ctx)
{
	(void)r;
	(void)read;
	(void)ctx;
	return ABI_NONE;
}

static inline void arch_set_pc(arch_regs_t *r, uint64_t pc) { r->pc = pc; }
static inline void arch_set_sp(arch_regs_t *r, uint64_t sp) { r->sp = sp; }
static inline uint64_t arch_call_arg(const arch_regs_t *r, int i) { return r->args[i]; }
static inline uint64_t arch_call_ret(const arch_regs_t *r) { return r->ret; }

/* Nothing is in reach: no scratch page, stub or far page is placed. */
#define ARCH_NEAR_REACH 0ULL

static inline int arch_in_reach(uint64_t from, uint64_t to)
{
	(void)from;
	(void)to;
	return 0;
}

static inline uint64_t arch_fp(const arch_regs_t *r) { return r->fp; }
static inline void arch_set_fp(arch_regs_t *r, uint64_t fp) { r->fp = fp; }
#define ARCH_SP_NAME "sp"
#define ARCH_FP_NAME "fp"

static inline uint64_t arch_saved_reg(const arch_regs_t *r, int i) { return r->saved[i]; }
static inline void arch_set_saved_reg(arch_regs_t *r, int i, uint64_t v) { r->saved[i] = v; }

/* DWARF: three columns of its own, none of them a CPU's. */
#define ARCH_DW_FP 0
#define ARCH_DW_SP 1
#define ARCH_DW_RA 2
#define ARCH_DW_NREGS 3

/* No machine: a module of any CPU is not this one's. */
#define ARCH_ELF_MACHINE EM_NONE

/* perf: no user registers asked for. */
#define ARCH_PERF_NREGS 1
#define ARCH_PERF_REGS_MASK 0ULL

static inline void arch_setup_syscall(arch_regs_t *r, uint64_t insn, long nr,
				      const uint64_t args[6])
{
	r->pc = insn;
	r->nr = nr;
	for (int i = 0; i < 6; i++)
		r->args[i] = args[i];
}

static inline void arch_suppress_restart(arch_regs_t *r) { r->nr = -1; }

/* A trampoline of no code (arch_tramp_code() makes none). */
#define ARCH_TRAMP_SIZE 64
#define ARCH_TRAMP_BLOCK_OFF 0
#define ARCH_TRAMP_BLOCK_WORDS 8
/* No code, so no syscall to put a thread back (never asked). */
#define ARCH_TRAMP_RESTORE_NR (-1L)
#define ARCH_TRAMP_RESTORE_ARGS { 0, 0, 0, 0, 0, 0 }

/* No optional feature. */
#define ARCH_CPU_PREFETCHW 0x1u

static inline unsigned arch_cpu_features(void) { return 0; }

/* No counter for the stubs' times (stub-abi.h R_TIME): no ARCH_CPU_COUNTER. */
#define ARCH_CPU_COUNTER 0x2u
static inline uint64_t arch_counter_read(void) { return 0; }

/* memtap traces nothing here (arch.h). */
static inline int arch_supported(void) { return -ENOTSUP; }

/*
 * Frame records: where a frame pointer points, the caller's fp at fp +
 * ARCH_FRAME_FP_OFF and the return address at fp + ARCH_FRAME_RA_OFF;
 * the caller's sp is fp + ARCH_FRAME_SIZE or above.
 */
#define ARCH_FRAME_FP_OFF 0
#define ARCH_FRAME_RA_OFF 8
#define ARCH_FRAME_SIZE 16

/* What a return takes off the stack: the return address call pushed. */
#define ARCH_RET_POP 8

/*
 * A function's return address at its first instruction, before it has
 * a frame: 0 with *ra where a register holds it, 1 where it is the word
 * at sp (x86-64's values: nothing is traced here).  Either way the caller's sp, once
 * returned, is sp + ARCH_RET_POP.
 */
static inline int arch_entry_ra(const arch_regs_t *r, uint64_t *ra)
{
	(void)r;
	(void)ra;
	return 1;
}

/* A return address as the unwinders read it: no signature to strip here. */
static inline uint64_t arch_ra_strip(uint64_t ra) { return ra; }

#endif /* MEMTAP_ARCH_CPU_H */

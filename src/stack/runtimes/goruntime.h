/*
 * goruntime.h - what the unwinders need of a Go program's runtime to
 * follow a stack across the runtime's switch to a thread's scheduler
 * stack (goruntime.c).
 *
 * runtime.systemstack, runtime.mcall, runtime.morestack and
 * runtime.asmcgocall save the running goroutine's pc, sp and bp in its
 * g.sched (a gobuf) and call their function on the thread's g0 stack:
 * a walk of that stack ends at the switch, never reaching the code
 * that asked (main.fill growing the heap ends as
 * runtime.systemstack;runtime.(*mheap).alloc.func1;...).  The way back
 * is the runtime's own: the running g (where the CPU keeps it,
 * arch/go.h), g.m, m.g0, m.curg, curg.sched.
 *
 * Those offsets change between Go versions.  They are read from the
 * instructions of runtime.systemstack itself, which every version
 * since 1.5 writes alike for a CPU (the CPU's reading of them,
 * arch_go_decode_systemstack()), so a stripped program (-ldflags='-s
 * -w') is read as well as one with DWARF; the functions are found by
 * Go's function table (gopclntab.h).  The fields not read there have
 * not moved since Go 1.5, on any CPU: g.stack (lo, hi) first in g, and
 * gobuf's sp, pc, lr and bp.
 *
 * Life cycle: go_runtime_from_elf() allocates; go_runtime_free().
 */
#ifndef MEMTAP_GORUNTIME_H
#define MEMTAP_GORUNTIME_H

#include <stdint.h>
#include <libelf.h>

#include "arch/go.h"

/* Fields of g and of a gobuf whose offsets are the same in every Go since 1.5. */
#define GO_G_STACK_LO 0
#define GO_G_STACK_HI 8
#define GO_GOBUF_SP 0
#define GO_GOBUF_PC 8
#define GO_GOBUF_LR 40
#define GO_GOBUF_BP 48

/* The functions whose callee runs on g0 for the goroutine that called them. */
enum { GO_SW_SYSTEMSTACK, GO_SW_MCALL, GO_SW_MORESTACK, GO_SW_ASMCGOCALL, GO_NSWITCH };

struct go_range {
	uint64_t start, end;	/* file addresses; start == end: none */
};

struct go_runtime {
	struct arch_go_offsets off;	/* g.m, g.sched, m.g0, m.curg; the running g's place */
	struct go_range sw[GO_NSWITCH];
	/*
	 * The return address into each of them of the call it makes on g0
	 * (file addresses; 0: none): a frame of g0 returning there is the
	 * bottom of the g0 stack, the goroutine's sched its caller.
	 */
	uint64_t sw_ret[GO_NSWITCH];
	/*
	 * runtime.systemstack_switch: systemstack and asmcgocall leave its
	 * address (or one within) as the goroutine's sched.pc, sched.sp
	 * theirs: the frame is their caller's (arch_go_switch_caller()).
	 */
	struct go_range sw_pc;
};

/*
 * The runtime of a Go program's ELF file.  NULL when elf is no Go
 * program or its function table is not read (*why NULL: the
 * symbolizer says why), or its runtime was not understood (*why says
 * what failed).
 */
struct go_runtime *go_runtime_from_elf(Elf *elf, const char **why);

void go_runtime_free(struct go_runtime *rt);

#endif /* MEMTAP_GORUNTIME_H */

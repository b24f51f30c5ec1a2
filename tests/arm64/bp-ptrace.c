/*
 * tests/arm64/bp-ptrace.c - arm64 breakpoints on a real kernel
 * (tests/arm64/bp-ptrace.test, built static for aarch64 with
 * src/arch/aarch64/bp_arch.c): a traced child of its own runs snippets
 * with a BRK #0 written over one of their instructions through
 * /proc/PID/mem, and this tracer handles every hit as
 * probe/breakpoint.c does, through PTRACE_GETREGSET/SETREGSET and the
 * arch's functions: the instruction in a slot of a scratch page the
 * child mapped, or emulated; a breakpoint at a function's entry hooks
 * its return by x30 through a trampoline.  The snippets: ADRP, a
 * backward B.cond, PACIASP (the hooked return must pass AUTIASP), BTI c
 * in a PROT_BTI page called through a pointer (BTYPE cleared by the
 * emulation), a plain STP.  The child calls each with arguments that
 * take every branch, compares with what they returned before the
 * breakpoints went in, and exits with the number that differ.
 *
 * Prints "hits N returns N" per snippet, "ok bp-ptrace" when the child
 * exited 0 with the hits and returns expected, and "bti yes|no" (did
 * mprotect take PROT_BTI).  Exit status 0 when all holds.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "arch/arch.h"
#include "../unit/a64-emu.h"

uint64_t g_val = 0x0123456789abcdefull;

__asm__(
	A64_CODE_PAGE(code_start)
	A64_SNIP_ADRP_LDR(snip_adrp)
	A64_SNIP_BCOND(snip_bcond)
	A64_SNIP_PAC(snip_pac)
	A64_SNIP_STP(snip_stp)
	A64_SNIP_HELPER
	".balign 4096\n"
	A64_SNIP_BTI(snip_bti)
	".balign 4096\n");

extern uint32_t snip_adrp[], snip_bcond[], snip_pac[], snip_stp[], snip_bti[];
extern uint8_t code_start[];

typedef uint64_t (*fn_t)(uint64_t);

static const struct snip {
	const char *name;
	uint32_t *code;
	unsigned off;
} snips[] = {
	{ "adrp", snip_adrp, 0 }, { "bcond", snip_bcond, 20 }, { "pac", snip_pac, 0 },
	{ "bti", snip_bti, 0 }, { "stp", snip_stp, 0 },
};
#define NSNIPS (sizeof(snips) / sizeof(snips[0]))

static const uint64_t args[] = { 0, 1, 5, 8, 15 };
#define NARGS (sizeof(args) / sizeof(args[0]))

#define SCRATCH_DIST (1ull << 20)

static uint64_t scratch(void)
{
	return ((uint64_t)(uintptr_t)code_start & ~0xfffull) + SCRATCH_DIST;
}

/* The child: map the scratch page, guard snip_bti's page, stop, run. */
static int child(void)
{
	uint64_t want[NSNIPS][NARGS];
	int bad = 0;
	void *p;

	for (size_t i = 0; i < NSNIPS; i++)
		for (size_t a = 0; a < NARGS; a++)
			want[i][a] = ((fn_t)(uintptr_t)snips[i].code)(args[a]);
	p = mmap((void *)(uintptr_t)scratch(), 4096, PROT_READ | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)(uintptr_t)scratch())
		return 100;
	if (mprotect((void *)((uintptr_t)snip_bti & ~(uintptr_t)4095), 4096,
		     PROT_READ | PROT_EXEC | PROT_BTI) == 0)
		write(1, "bti yes\n", 8);
	else
		write(1, "bti no\n", 7);
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
		return 101;
	raise(SIGSTOP);
	for (size_t i = 0; i < NSNIPS; i++)
		for (size_t a = 0; a < NARGS; a++)
			if (((fn_t)(uintptr_t)snips[i].code)(args[a]) != want[i][a])
				bad++;
	return bad;
}

static int memfd;

static int mem_write(uint64_t addr, const void *buf, size_t len)
{
	return pwrite(memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EIO;
}

struct bp {
	uint64_t addr, slot;
	struct bp_insn insn;
	unsigned hits, returns;
};

int main(void)
{
	struct bp bps[NSNIPS];
	uint64_t tramp = scratch(), orig = 0, key = 0;
	struct bp *live = NULL;
	unsigned bad_returns = 0, want_hits, want_returns;
	char path[64];
	int status, fails = 0;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	pid = fork();
	if (pid == 0)
		_exit(child());
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		printf("FAIL bp-ptrace: the child did not stop (%#x)\n", status);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	memfd = open(path, O_RDWR);
	{
		uint8_t head[32];

		arch_bp_fill(head, sizeof(head));
		if (memfd < 0 || mem_write(tramp, head, sizeof(head))) {
			printf("FAIL bp-ptrace: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	for (size_t i = 0; i < NSNIPS; i++) {
		struct bp *bp = &bps[i];
		uint8_t code[BP_ARCH_SLOT_SIZE], trap[ARCH_BP_LEN];
		unsigned resume;
		int err;

		memset(bp, 0, sizeof(*bp));
		bp->addr = (uint64_t)(uintptr_t)snips[i].code + snips[i].off;
		bp->slot = tramp + 32 + BP_ARCH_SLOT_SIZE * i;
		err = bp_arch_decode(bp->addr, (const uint8_t *)(uintptr_t)bp->addr, 4, &bp->insn);
		if (!err && bp_arch_needs_slot(&bp->insn)) {
			err = bp_arch_relocate(&bp->insn, bp->addr, bp->slot, code, &resume);
			if (err > 0)
				err = mem_write(bp->slot, code, sizeof(code));
		}
		arch_bp_fill(trap, sizeof(trap));
		if (!err)
			err = mem_write(bp->addr, trap, sizeof(trap));
		if (err) {
			printf("FAIL bp-ptrace: %s: %s\n", snips[i].name, strerror(-err));
			kill(pid, SIGKILL);
			return 1;
		}
	}
	ptrace(PTRACE_CONT, pid, 0, 0);
	for (;;) {
		arch_regs_t regs;
		uint64_t pc;
		struct bp *bp = NULL;

		if (waitpid(pid, &status, 0) != pid)
			return 1;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (WSTOPSIG(status) != SIGTRAP || arch_regs_get(pid, &regs)) {
			printf("FAIL bp-ptrace: signal %d in the child\n", WSTOPSIG(status));
			kill(pid, SIGKILL);
			continue;
		}
		pc = arch_bp_addr_from_pc(arch_pc(&regs));
		for (size_t i = 0; i < NSNIPS; i++)
			if (bps[i].addr == pc)
				bp = &bps[i];
		if (pc == tramp) {
			if (!live || arch_ret_slot_at_return(&regs) != key)
				bad_returns++;
			else
				live->returns++;
			live = NULL;
			arch_set_pc(&regs, orig);
		} else if (bp) {
			bp->hits++;
			if (snips[bp - bps].off == 0) {
				orig = arch_caller_at_entry(&regs, NULL, NULL);
				key = arch_ret_slot_at_entry(&regs);
				live = bp;
				arch_ret_hook(&regs, tramp, NULL, NULL);
			}
			if (bp_arch_needs_slot(&bp->insn))
				arch_set_pc(&regs, bp->slot);
			else
				arch_bp_emulate(&bp->insn, bp->addr, &regs, NULL, NULL);
		} else {
			printf("FAIL bp-ptrace: a SIGTRAP at %#" PRIx64 "\n", pc);
			kill(pid, SIGKILL);
			continue;
		}
		if (arch_regs_set(pid, &regs))
			printf("FAIL bp-ptrace: PTRACE_SETREGSET: %s\n", strerror(errno));
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
	for (size_t i = 0; i < NSNIPS; i++) {
		want_hits = 0;
		for (size_t a = 0; a < NARGS; a++)
			want_hits += snips[i].code == snip_bcond ? (unsigned)(args[a] & 15) + 1 : 1;
		want_returns = snips[i].off == 0 ? NARGS : 0;
		printf("%s: hits %u returns %u\n", snips[i].name, bps[i].hits, bps[i].returns);
		if (bps[i].hits != want_hits || bps[i].returns != want_returns) {
			printf("FAIL bp-ptrace: %s: want hits %u returns %u\n", snips[i].name,
			       want_hits, want_returns);
			fails++;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bad_returns) {
		printf("FAIL bp-ptrace: the child ended with %#x, %u returns unmatched\n", status,
		       bad_returns);
		fails++;
	}
	if (fails)
		return 1;
	printf("ok bp-ptrace\n");
	return 0;
}

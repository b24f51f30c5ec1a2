/*
 * a64-bp-run.c - arm64 breakpoints run: a BRK #0 written over one
 * instruction of a real snippet (every pc-relative form, B, BL, BLR,
 * B.cond, CBZ, TBZ, PACIASP, BTI c, a plain STP), and the hit handled
 * as probe/breakpoint.c does, with the arch's functions
 * (src/arch/aarch64/bp_arch.c): the instruction runs in its slot (in
 * the code's own page, 1 MiB away, or 64 MiB away) or is emulated, and
 * a breakpoint at a function's entry also hooks its return through a
 * trampoline (a BRK of its own) by x30.  Each snippet must return what
 * it returns without the breakpoint, for arguments that take every
 * branch both ways, with one hit per pass over the instruction and,
 * where hooked, one return with the same value and the same key.
 *
 * The hit is a SIGTRAP caught here; its handler's ucontext stands for
 * the registers ptrace gives memtap (the same x0-x30, sp, pc, pstate).
 * Built for aarch64 by tests/unit/a64-bp-run.test and run through
 * qemu-user, whose CPU has PAC (a return hooked before PACIASP must
 * pass AUTIASP) and, where mprotect takes PROT_BTI, BTI (an indirect
 * call onto the BRK over a BTI c, emulated, goes on with BTYPE
 * cleared).  Prints one line per case and place, "ok" last.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "arch/arch.h"
#include "a64-emu.h"

uint64_t g_val = 0x0123456789abcdefull;

typedef uint64_t (*fn_t)(uint64_t);

/* The snippets (a64-emu.h): the breakpoint goes at the offset SNIPS gives each. */
__asm__(
	A64_CODE_PAGE(code_start)
	A64_SNIP_ADRP_LDR(snip_adrp)
	A64_SNIP_ADR(snip_adr)
	A64_SNIP_LDR_X(snip_ldr_x)
	A64_SNIP_LDR_W(snip_ldr_w)
	A64_SNIP_LDRSW(snip_ldrsw)
	A64_SNIP_LDR_Q(snip_ldr_q)
	A64_SNIP_PRFM(snip_prfm)
	A64_SNIP_BCOND(snip_bcond)
	A64_SNIP_BCOND_FWD(snip_bcond_fwd)
	A64_SNIP_CBZ(snip_cbz)
	".globl snip_cbnz\n"
	"snip_cbnz:\n"
	"	cbnz w0, 1f\n"
	"	mov x0, #1\n"
	"	ret\n"
	"1:	add x0, x0, #3\n"
	"	ret\n"
	A64_SNIP_TBZ(snip_tbz)
	A64_SNIP_TBNZ40(snip_tbnz)
	A64_SNIP_B(snip_b)
	A64_SNIP_BL(snip_bl)
	A64_SNIP_BLR(snip_blr)
	A64_SNIP_PAC(snip_pac)
	A64_SNIP_STP(snip_stp)
	A64_SNIP_HELPER
	".balign 4096\n"
	A64_SNIP_BTI(snip_bti)	/* a page of its own: mapped with PROT_BTI */
	".balign 4096\n"
	".globl near_buf\n"
	"near_buf:\n"
	".space 8192\n"
	".balign 4096\n");

#define SNIPS(X) \
	X(snip_adrp, 0) X(snip_adr, 0) X(snip_ldr_x, 0) X(snip_ldr_w, 0) X(snip_ldrsw, 0) \
	X(snip_ldr_q, 0) X(snip_prfm, 0) X(snip_bcond, 20) X(snip_bcond_fwd, 4) X(snip_cbz, 0) \
	X(snip_cbnz, 0) X(snip_tbz, 0) X(snip_tbnz, 0) X(snip_b, 0) X(snip_bl, 8) \
	X(snip_blr, 12) X(snip_pac, 0) X(snip_stp, 0) X(snip_bti, 0)
#define DECLARE(s, off) extern uint32_t s[];
SNIPS(DECLARE)
extern uint8_t code_start[], near_buf[];

static const struct snip {
	const char *name;
	uint32_t *code;
	unsigned off;		/* of the instruction under the breakpoint */
} snips[] = {
#define ENTRY(s, off) { #s, s, off },
	SNIPS(ENTRY)
};

static const uint64_t args[] = { 0, 1, 5, 8, 9, 10, 15, 0x10000000000ull, 0x10000000008ull };

/* The breakpoint in place, as struct bp and struct ret_entry hold it. */
static struct {
	uint64_t addr, slot, tramp;
	struct bp_insn insn;
	int hook;		/* at a function's entry: hook its return */
	unsigned hits, returns, bad_keys, nested;
	uint64_t key, orig, retval;
	int live;
} bp;

static void regs_from(arch_regs_t *r, const mcontext_t *mc)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->r.regs, mc->regs, sizeof(r->r.regs));
	r->r.sp = mc->sp;
	r->r.pc = mc->pc;
	r->r.pstate = mc->pstate;
}

static void regs_to(mcontext_t *mc, const arch_regs_t *r)
{
	memcpy(mc->regs, r->r.regs, sizeof(r->r.regs));
	mc->sp = r->r.sp;
	mc->pc = r->r.pc;
	mc->pstate = r->r.pstate;
}

static int no_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx, (void)addr, (void)buf, (void)len;
	return -EIO;
}

/* bp_hit() and on_return() of probe/breakpoint.c, on a signal's registers. */
static void on_trap(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	arch_regs_t regs;
	uint64_t pc;

	(void)sig, (void)si;
	regs_from(&regs, &uc->uc_mcontext);
	pc = arch_bp_addr_from_pc(arch_pc(&regs));
	if (bp.tramp && pc == bp.tramp) {
		if (!bp.live || arch_ret_slot_at_return(&regs) != bp.key)
			bp.bad_keys++;
		bp.live = 0;
		bp.returns++;
		bp.retval = arch_call_ret(&regs);
		arch_set_pc(&regs, bp.orig);
	} else if (pc == bp.addr) {
		bp.hits++;
		if (bp.hook) {
			if (bp.live)
				bp.nested++;
			bp.orig = arch_caller_at_entry(&regs, NULL, NULL);
			bp.key = arch_ret_slot_at_entry(&regs);
			bp.live = 1;
			arch_ret_hook(&regs, bp.tramp, no_write, NULL);
		}
		if (bp_arch_needs_slot(&bp.insn))
			arch_set_pc(&regs, bp.slot);
		else if (arch_bp_emulate(&bp.insn, bp.addr, &regs, no_write, NULL) < 0)
			arch_set_pc(&regs, 0);	/* fail loudly */
	} else {
		signal(SIGTRAP, SIG_DFL);	/* not ours: die of it */
		return;
	}
	regs_to(&uc->uc_mcontext, &regs);
}

static int failures;

static void code_writable(void *page, size_t len, int on, int bti)
{
	int prot = on ? PROT_READ | PROT_WRITE | PROT_EXEC : PROT_READ | PROT_EXEC;

	if (mprotect(page, len, prot | (bti && !on ? PROT_BTI : 0)))
		printf("FAIL mprotect: %s\n", strerror(errno)), failures++;
}

static uint8_t *page_of(const void *p)
{
	return (uint8_t *)((uintptr_t)p & ~(uintptr_t)4095);
}

/* How many times the instruction runs for argument a. */
static unsigned passes(const struct snip *s, uint64_t a)
{
	return s->code == snip_bcond ? (unsigned)(a & 15) + 1 : 1;
}

static void run_case(const char *place, const struct snip *s, uint8_t *slot_buf, int bti)
{
	uint32_t *at = s->code + s->off / 4;
	uint32_t orig = *at;
	uint8_t code[BP_ARCH_SLOT_SIZE];
	unsigned resume = 0;
	int len = 0, err, bad = 0;
	uint64_t want[sizeof(args) / sizeof(args[0])];

	for (size_t a = 0; a < sizeof(args) / sizeof(args[0]); a++)
		want[a] = ((fn_t)(uintptr_t)s->code)(args[a]);

	memset(&bp, 0, sizeof(bp));
	bp.addr = (uint64_t)(uintptr_t)at;
	bp.tramp = (uint64_t)(uintptr_t)slot_buf;	/* BRK words, as a scratch page's head */
	bp.slot = bp.tramp + 32;
	bp.hook = s->off == 0;
	err = bp_arch_decode(bp.addr, (const uint8_t *)at, 4, &bp.insn);
	if (err) {
		printf("FAIL %s %s: decode: %s\n", place, s->name, strerror(-err));
		failures++;
		return;
	}
	arch_bp_fill(slot_buf, 32);
	if (bp_arch_needs_slot(&bp.insn)) {
		len = bp_arch_relocate(&bp.insn, bp.addr, bp.slot, code, &resume);
		if (len < 0) {
			printf("FAIL %s %s: relocate: %s\n", place, s->name, strerror(-len));
			failures++;
			return;
		}
		memcpy(slot_buf + 32, code, sizeof(code));
	}
	__builtin___clear_cache((char *)slot_buf, (char *)slot_buf + 32 + sizeof(code));

	code_writable(page_of(at), 4096, 1, bti);
	a64_put((uint8_t *)at, A64_BRK0);
	code_writable(page_of(at), 4096, 0, bti);
	__builtin___clear_cache((char *)at, (char *)(at + 1));

	for (size_t a = 0; a < sizeof(args) / sizeof(args[0]); a++) {
		uint64_t got;

		bp.hits = bp.returns = 0;
		got = ((fn_t)(uintptr_t)s->code)(args[a]);
		if (got != want[a] || bp.hits != passes(s, args[a]) ||
		    bp.returns != (bp.hook ? 1u : 0u) || (bp.hook && bp.retval != want[a])) {
			printf("FAIL %s %s(%#" PRIx64 "): %#" PRIx64 ", not %#" PRIx64
			       "; %u hits, %u returns of %#" PRIx64 "\n", place, s->name, args[a],
			       got, want[a], bp.hits, bp.returns, bp.retval);
			bad = 1;
		}
	}
	if (bp.bad_keys || bp.nested) {
		printf("FAIL %s %s: %u returns with another key, %u nested\n", place, s->name,
		       bp.bad_keys, bp.nested);
		bad = 1;
	}
	code_writable(page_of(at), 4096, 1, bti);
	*at = orig;
	code_writable(page_of(at), 4096, 0, bti);
	__builtin___clear_cache((char *)at, (char *)(at + 1));
	failures += bad;
	printf("%s %s: kind %d, slot %d bytes%s%s\n", place, s->name, bp.insn.kind, len,
	       bp.hook ? ", return hooked" : "", bad ? " FAIL" : "");
}

int main(void)
{
	static const struct {
		const char *name;
		uint64_t dist;
	} places[] = { { "1MiB", 1ull << 20 }, { "64MiB", 64ull << 20 } };
	struct sigaction sa;
	uint64_t code = (uint64_t)(uintptr_t)code_start;
	int bti = 1;

	setvbuf(stdout, NULL, _IONBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGTRAP, &sa, NULL);
	if (mprotect(page_of(snip_bti), 4096, PROT_READ | PROT_EXEC | PROT_BTI)) {
		printf("no PROT_BTI (%s): snip_bti runs unguarded\n", strerror(errno));
		bti = 0;
	}
	code_writable(near_buf, 8192, 1, 0);
	for (size_t i = 0; i < sizeof(snips) / sizeof(snips[0]); i++)
		run_case("near", &snips[i], near_buf, bti && snips[i].code == snip_bti);
	for (size_t p = 0; p < sizeof(places) / sizeof(places[0]); p++) {
		uint8_t *buf = a64_map_at(code, places[p].dist, 4096);

		if (!buf) {
			printf("FAIL mmap at %#" PRIx64 " + %s: %s\n", code, places[p].name,
			       strerror(errno));
			failures++;
			continue;
		}
		for (size_t i = 0; i < sizeof(snips) / sizeof(snips[0]); i++)
			run_case(places[p].name, &snips[i], buf,
				 bti && snips[i].code == snip_bti);
		munmap(buf, 4096);
	}
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

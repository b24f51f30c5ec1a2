/*
 * a64-detour-run.c - arm64 detours run: functions whose first
 * instruction (alone, after BTI c, or after PACIASP) is each
 * pc-relative form (ADRP, ADR, LDR literal of x, w, sw, d, q, PRFM, B,
 * BL, B.cond, CBZ, TBZ, TBNZ) are planned by arch_detour_plan(), their
 * entry relocated into a slot 64 MiB away (out of reach of every
 * immediate but B's), patched with arch_detour_patch() and called:
 * each must return what it returned before, through
 *   plain    a glue that only strips x30's PAC and branches to the copy;
 *   entry    arch_detour_glue()'s entry probe, whose dt_common_entry
 *            here counts and looks at the saved x0;
 *   result   its result probe (dt_common_result counts, keeps x0 and
 *            returns to the caller from the glue's frame);
 *   sync     its sync point;
 *   far free, far result  the glue of a far page, through its header,
 *            with a prefilter that sends odd arguments on into the
 *            copy at once and the others into the glue;
 * then the original word is written back and the function must run as
 * before (the undo).  qemu's -cpu max has pointer authentication: a
 * PACIASP signed again with the wrong sp, or not at all, makes the
 * function's AUTIASP fail and its return fault.  Built for aarch64 by
 * tests/unit/a64-detour-run.test (aarch64-linux-gnu-gcc -static) and
 * run through qemu-user; not built by make.  Prints one line per
 * function and glue, and "ok" last when all hold.
 *
 * A function whose first instruction is BL has lost its return
 * address: it returns through x19 (call_fn below sets it), and so is
 * not run through a result probe, whose glue it would never return to.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/detour-plan.h"
#include "arch/stub-abi.h"
#include "a64-emu.h"

#define STR(x) #x
#define XSTR(x) STR(x)

uint64_t g_val = 0x0123456789abcdefull;
uint64_t n_entry, n_result, n_prefilter, last_result, last_arg;
uint32_t last_desc;

/*
 * The common routines, as the glue enters them (stub-cpu.h), reduced to
 * counting; the prefilter sends odd x0 on into the function.
 */
__asm__(".text\n"
	".balign 4096\n"
	".globl dt_template, dt_common_result, dt_common_entry, dt_common_sync\n"
	".globl dt_common_prefilter, dt_template_end\n"
	"dt_template:\n"
	"dt_common_result:\n"
	"	adrp x10, n_result\n"
	"	add x10, x10, :lo12:n_result\n"
	"	ldr x11, [x10]\n"
	"	add x11, x11, #1\n"
	"	str x11, [x10]\n"
	"	adrp x10, last_result\n"
	"	str x0, [x10, :lo12:last_result]\n"
	"	adrp x10, last_desc\n"
	"	str w9, [x10, :lo12:last_desc]\n"
	"	ldr x30, [sp, #" XSTR(DT_GLUE_RA) "]\n"
	"	add sp, sp, #" XSTR(DT_GLUE_FRAME) "\n"
	"	ret\n"
	"dt_common_entry:\n"
	"	adrp x10, n_entry\n"
	"	add x10, x10, :lo12:n_entry\n"
	"	ldr x11, [x10]\n"
	"	add x11, x11, #1\n"
	"	str x11, [x10]\n"
	"	ldr x11, [sp]\n"
	"	adrp x10, last_arg\n"
	"	str x11, [x10, :lo12:last_arg]\n"
	"	adrp x10, last_desc\n"
	"	str w9, [x10, :lo12:last_desc]\n"
	"	mov x0, #0x5a5a\n"		/* clobbered: the glue restores them */
	"	mov x1, #0xa5a5\n"
	"	ret\n"
	"dt_common_sync:\n"
	"	b dt_common_entry\n"
	"dt_common_prefilter:\n"
	"	adrp x11, n_prefilter\n"
	"	add x11, x11, :lo12:n_prefilter\n"
	"	ldr x12, [x11]\n"
	"	add x12, x12, #1\n"
	"	str x12, [x11]\n"
	"	tbnz x0, #0, 1f\n"
	"	add x10, x10, #" XSTR(DT_PF_LEN) "\n"
	"	br x10\n"
	"1:	add x10, x10, #" XSTR(DT_ORIG) "\n"
	"	br x10\n"
	"dt_template_end:\n"
	/* uint64_t call_fn(fn, arg): x0 = arg, flags of cmp arg, 10, x19 = the return */
	".globl call_fn\n"
	"call_fn:\n"
	"	stp x29, x30, [sp, #-32]!\n"
	"	mov x29, sp\n"
	"	str x19, [sp, #16]\n"
	"	mov x2, x0\n"
	"	mov x0, x1\n"
	"	adr x19, 1f\n"
	"	cmp x0, #10\n"
	"	blr x2\n"
	"1:	ldr x19, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	"	ret\n"
	"helper:\n"
	"	add x0, x0, #41\n"
	"	ret\n");

/*
 * The functions: NAME_VARIANT from NAME_VARIANT to NAME_VARIANT_end,
 * literals after the end.  pad: none, bti (bti c), pac (paciasp, and
 * autiasp before each ret); as hints, for any assembler.
 */
__asm__(".macro padp pad\n"
	" .ifc \\pad,bti\n"
	"	hint #34\n"
	" .endif\n"
	" .ifc \\pad,pac\n"
	"	hint #25\n"
	" .endif\n"
	".endm\n"
	".macro retp pad\n"
	" .ifc \\pad,pac\n"
	"	hint #29\n"
	" .endif\n"
	"	ret\n"
	".endm\n"
	".macro fn name, pad\n"
	"	.balign 16\n"
	"	.globl \\name\\()_\\pad, \\name\\()_\\pad\\()_end\n"
	"\\name\\()_\\pad:\n"
	"	padp \\pad\n"
	".endm\n"
	".macro snips pad\n"
	"	fn adrp, \\pad\n"
	"	adrp x1, g_val\n"
	"	ldr x1, [x1, :lo12:g_val]\n"
	"	add x0, x0, x1\n"
	"	retp \\pad\n"
	"adrp_\\pad\\()_end:\n"
	"	fn adr, \\pad\n"
	"	adr x1, 1f\n"
	"	ldr x1, [x1]\n"
	"	add x0, x0, x1\n"
	"	retp \\pad\n"
	"adr_\\pad\\()_end:\n"
	"	.balign 8\n"
	"1:	.quad 0x5555aaaa5555aaaa\n"
	"	fn ldrx, \\pad\n"
	"	ldr x1, 1f\n"
	"	add x0, x0, x1\n"
	"	retp \\pad\n"
	"ldrx_\\pad\\()_end:\n"
	"	.balign 8\n"
	"1:	.quad 0x1122334455667788\n"
	"	fn ldrw, \\pad\n"
	"	ldr w1, 1f\n"
	"	add x0, x0, x1\n"
	"	retp \\pad\n"
	"ldrw_\\pad\\()_end:\n"
	"1:	.word 0xfedcba98\n"
	"	fn ldrsw, \\pad\n"
	"	ldrsw x1, 1f\n"
	"	add x0, x0, x1\n"
	"	retp \\pad\n"
	"ldrsw_\\pad\\()_end:\n"
	"1:	.word 0xfedcba98\n"
	"	fn ldrd, \\pad\n"
	"	ldr d0, 1f\n"
	"	fmov x1, d0\n"
	"	add x0, x0, x1\n"
	"	retp \\pad\n"
	"ldrd_\\pad\\()_end:\n"
	"	.balign 8\n"
	"1:	.quad 0x400921fb54442d18\n"
	"	fn ldrq, \\pad\n"
	"	ldr q0, 1f\n"
	"	mov x1, v0.d[1]\n"
	"	fmov x2, d0\n"
	"	eor x1, x1, x2\n"
	"	add x0, x0, x1\n"
	"	retp \\pad\n"
	"ldrq_\\pad\\()_end:\n"
	"	.balign 16\n"
	"1:	.quad 0x0f0f0f0f0f0f0f0f, 0x0ff00ff00ff00ff0\n"
	"	fn prfm, \\pad\n"
	"	prfm pldl1keep, 1f\n"
	"	add x0, x0, #7\n"
	"	retp \\pad\n"
	"prfm_\\pad\\()_end:\n"
	"1:	.quad 0\n"
	"	fn bl, \\pad\n"
	"	bl helper\n"
	"	add x0, x0, #1\n"
	"	br x19\n"
	"bl_\\pad\\()_end:\n"
	"	fn bcond, \\pad\n"
	"	b.lo 1f\n"
	"	mov x0, #200\n"
	"	retp \\pad\n"
	"1:	mov x0, #100\n"
	"	retp \\pad\n"
	"bcond_\\pad\\()_end:\n"
	"	fn cbz, \\pad\n"
	"	cbz x0, 1f\n"
	"	mov x0, #1\n"
	"	retp \\pad\n"
	"1:	mov x0, #2\n"
	"	retp \\pad\n"
	"cbz_\\pad\\()_end:\n"
	"	fn tbz, \\pad\n"
	"	tbz w0, #3, 1f\n"
	"	mov x0, #1\n"
	"	retp \\pad\n"
	"1:	mov x0, #2\n"
	"	retp \\pad\n"
	"tbz_\\pad\\()_end:\n"
	"	fn tbnz, \\pad\n"
	"	tbnz x0, #40, 1f\n"
	"	mov x0, #1\n"
	"	retp \\pad\n"
	"1:	mov x0, #2\n"
	"	retp \\pad\n"
	"tbnz_\\pad\\()_end:\n"
	".endm\n"
	".text\n"
	".balign 4096\n"
	".globl fn_start\n"
	"fn_start:\n"
	"	snips none\n"
	"	snips bti\n"
	"	snips pac\n"
	/* b: a tail call, so not after paciasp, which signs x30 for a return of its own */
	"	fn b, none\n"
	"	b helper\n"
	"b_none_end:\n"
	"	fn b, bti\n"
	"	b helper\n"
	"b_bti_end:\n"
	".balign 4096\n"
	".globl fn_stop\n"
	"fn_stop:\n");

typedef uint64_t (*fn_t)(uint64_t);
uint64_t call_fn(void *fn, uint64_t arg);
extern uint8_t fn_start[], fn_stop[];

#define FORMS(X, pad) \
	X(adrp, pad) X(adr, pad) X(ldrx, pad) X(ldrw, pad) X(ldrsw, pad) X(ldrd, pad) \
	X(ldrq, pad) X(prfm, pad) X(bl, pad) X(bcond, pad) X(cbz, pad) X(tbz, pad) X(tbnz, pad)
#define ALL(X) FORMS(X, none) FORMS(X, bti) FORMS(X, pac) X(b, none) X(b, bti)
#define DECLARE(f, pad) extern uint8_t f##_##pad[], f##_##pad##_end[];
ALL(DECLARE)

static const struct func {
	const char *name;
	uint8_t *start, *end;
	int no_result;		/* returns through x19 */
} funcs[] = {
#define ENTRY(f, pad) { #f "_" #pad, f##_##pad, f##_##pad##_end, !strcmp(#f, "bl") },
	ALL(ENTRY)
};

enum glue_kind { G_PLAIN, G_ENTRY, G_RESULT, G_SYNC, G_FAR_FREE, G_FAR_RESULT, G_N };
static const char *const glue_names[] = { "plain", "entry", "result", "sync", "far free",
					  "far result" };

static const uint64_t args[] = { 0, 1, 5, 8, 9, 10, 0x10000000000ull, 0x10000000008ull };
#define NARGS (sizeof(args) / sizeof(args[0]))

static int failures;

/* One aligned word of code, written whole, then the I-cache made coherent. */
static void write_word(uint8_t *at, const uint8_t *bytes)
{
	uint32_t w;

	memcpy(&w, bytes, 4);
	__atomic_store_n((uint32_t *)(void *)at, w, __ATOMIC_RELEASE);
	__builtin___clear_cache((char *)at, (char *)at + 4);
}

/* The glue of kind k for slot s (far: its far page) into code[0..DT_ORIG). */
static void glue(enum glue_kind k, uint64_t far, uint64_t s, uint8_t *code)
{
	uint64_t base = (uint64_t)(uintptr_t)dt_template;
	uint32_t slotno = 7;

	switch (k) {
	case G_PLAIN:
		for (unsigned i = 0; i < DT_ORIG; i += 4)
			a64_put(code + i, A64_BRK0);
		a64_put(code, 0xd50320ff);	/* xpaclri */
		a64_put(code + 4, 0x14000000 | ((DT_ORIG - 4) >> 2));
		break;
	case G_ENTRY:
		arch_detour_glue(base, 0, s, 0, 0, slotno | (uint32_t)DF_ALWAYS << 24, code);
		break;
	case G_RESULT:
		arch_detour_glue(base, 0, s, 1, 0, slotno | (uint32_t)DF_ALWAYS << 24, code);
		break;
	case G_SYNC:
		arch_detour_glue(base, 0, s, 0, 1, slotno, code);
		break;
	case G_FAR_FREE:
		arch_detour_glue(base, far, s, 0, 0, slotno | (uint32_t)DF_SETDEL << 24, code);
		break;
	default:
		arch_detour_glue(base, far, s, 1, 0, slotno | (uint32_t)SK_ARG0 << 16, code);
		break;
	}
}

/* The counters kind k must leave after the calls, of which n took the prefilter's fast way. */
static int counts_ok(enum glue_kind k, uint64_t want_last)
{
	uint64_t even = 0;

	for (size_t a = 0; a < NARGS; a++)
		even += !(args[a] & 1);
	switch (k) {
	case G_PLAIN:
		return !n_entry && !n_result && !n_prefilter;
	case G_ENTRY:
	case G_SYNC:
		return n_entry == NARGS && !n_result && !n_prefilter && last_arg == args[NARGS - 1];
	case G_RESULT:
		return n_result == NARGS && !n_entry && !n_prefilter && last_result == want_last;
	case G_FAR_FREE:
		return n_prefilter == NARGS && n_entry == even && !n_result &&
		       last_desc == (7 | (uint32_t)DF_SETDEL << 24);
	default:
		return n_prefilter == NARGS && n_result == even && !n_entry &&
		       last_desc == (7 | (uint32_t)SK_ARG0 << 16);
	}
}

static void run(const struct func *f, uint8_t *region)
{
	uint64_t func = (uint64_t)(uintptr_t)f->start, want[NARGS];
	uint8_t *far = region + 0x8000;
	const char *why = NULL;
	struct plan p;
	uint8_t orig[4];
	int err;

	for (size_t a = 0; a < NARGS; a++)
		want[a] = call_fn(f->start, args[a]);
	err = arch_detour_plan(func, f->start, (size_t)(f->end - f->start), &p, &why);
	if (err) {
		printf("FAIL %s: refused: %s\n", f->name, why ? why : "?");
		failures++;
		return;
	}
	memcpy(orig, (uint8_t *)(uintptr_t)p.site, 4);
	for (int k = 0; k < G_N; k++) {
		int isfar = k == G_FAR_FREE || k == G_FAR_RESULT;
		uint8_t *slot = isfar ? far + DT_TEMPLATE_MAX + 3 * DT_SLOT_SIZE : region + 0x1000;
		uint64_t s = (uint64_t)(uintptr_t)slot;
		uint8_t code[DT_SLOT_SIZE], patch[4];
		int bad = 0;

		if (f->no_result && (k == G_RESULT || k == G_FAR_RESULT))
			continue;
		if (!arch_detour_in_reach(&p, s)) {
			printf("FAIL %s %s: the slot out of reach\n", f->name, glue_names[k]);
			failures++;
			continue;
		}
		memset(code, 0, sizeof(code));
		glue((enum glue_kind)k, (uint64_t)(uintptr_t)far, s, code);
		err = arch_detour_relocate(&p, s + DT_ORIG, code + DT_ORIG);
		if (err) {
			printf("FAIL %s %s: relocation: %s\n", f->name, glue_names[k], strerror(-err));
			failures++;
			continue;
		}
		memcpy(slot, code, sizeof(code));
		__builtin___clear_cache((char *)slot, (char *)slot + sizeof(code));
		arch_detour_patch(patch, p.site, s);
		write_word((uint8_t *)(uintptr_t)p.site, patch);
		n_entry = n_result = n_prefilter = last_result = last_arg = 0;
		last_desc = 0;
		for (size_t a = 0; a < NARGS; a++) {
			uint64_t got = call_fn(f->start, args[a]);

			if (got != want[a]) {
				printf("FAIL %s %s(%#" PRIx64 "): %#" PRIx64 ", not %#" PRIx64 "\n",
				       f->name, glue_names[k], args[a], got, want[a]);
				bad = 1;
			}
		}
		if (!counts_ok((enum glue_kind)k, want[NARGS - 1])) {
			printf("FAIL %s %s: counted entry %" PRIu64 " result %" PRIu64
			       " prefilter %" PRIu64 " (last result %#" PRIx64 ", arg %#" PRIx64
			       ", desc %#" PRIx32 ")\n", f->name, glue_names[k], n_entry, n_result,
			       n_prefilter, last_result, last_arg, last_desc);
			bad = 1;
		}
		/* the undo: the original word back, and the function as it was */
		write_word((uint8_t *)(uintptr_t)p.site, orig);
		for (size_t a = 0; a < NARGS; a++)
			if (call_fn(f->start, args[a]) != want[a]) {
				printf("FAIL %s %s: after the undo\n", f->name, glue_names[k]);
				bad = 1;
				break;
			}
		failures += bad;
		printf("%s %s: %u bytes of copy%s\n", f->name, glue_names[k], p.moved[1],
		       bad ? " FAIL" : "");
	}
}

int main(void)
{
	uint64_t code = (uint64_t)(uintptr_t)fn_start;
	uint8_t *region;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (mprotect(fn_start, (size_t)(fn_stop - fn_start), PROT_READ | PROT_WRITE | PROT_EXEC)) {
		printf("FAIL mprotect of the functions: %s\n", strerror(errno));
		return 1;
	}
	region = a64_map_at(code, 64ull << 20, 0x10000);
	if (!region) {
		printf("FAIL mmap 64 MiB above %#" PRIx64 ": %s\n", code, strerror(errno));
		return 1;
	}
	/* the far page's header: the common routines' addresses */
	{
		uint64_t hdr[F_SIZE / 8] = { 0 };

		hdr[F_MAGIC / 8] = DT_FAR_MAGIC;
		hdr[F_BASE / 8] = (uint64_t)(uintptr_t)dt_template;
		hdr[F_RESULT / 8] = (uint64_t)(uintptr_t)dt_common_result;
		hdr[F_ENTRY / 8] = (uint64_t)(uintptr_t)dt_common_entry;
		hdr[F_SYNC / 8] = (uint64_t)(uintptr_t)dt_common_sync;
		hdr[F_INDEX / 8] = 1;
		hdr[F_PREFILTER / 8] = (uint64_t)(uintptr_t)dt_common_prefilter;
		memcpy(region + 0x8000, hdr, sizeof(hdr));
	}
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		run(&funcs[i], region);
	munmap(region, 0x10000);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

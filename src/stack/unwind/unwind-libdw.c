/*
 * unwind-libdw.c - DWARF unwinding with elfutils' libdwfl over a stack
 * snapshot (--unwind=libdw).
 *
 * One Dwfl per process, kept for the process's life: it holds each
 * module's ELF and parsed CFI, which is what makes a walk cheap.  Its
 * module list comes from the process's struct proc_modules (no second
 * read of /proc/PID/maps) and is re-reported when that list changes:
 * dwfl_report_begin() + dwfl_report_module() for every module instance
 * + dwfl_report_end() keeps the Dwfl_Module (and its caches) of every
 * module reported again with the same name and range, and drops the
 * others (unwind-dwfl.c).  ELF files are opened from the module
 * table, that is through /proc/PID/map_files or /proc/PID/root
 * (libdwfl's own dwfl_linux_proc_find_elf opens the path as seen by
 * memtap, which fails across mount namespaces).
 *
 * Thread state comes from Dwfl_Thread_Callbacks over the snapshot:
 * registers from the stop, memory from the copy (then the process).
 * dwfl_attach_state() is called once; each walk points the callbacks at
 * its snapshot.
 *
 * Rule cache.  libdwfl interprets the CFI of every frame anew (FDE
 * search, CFA program, a malloc per frame), about 1-2 µs per frame
 * here.  Nearly every x86-64 frame follows one of a few rules: the CFA
 * is sp or fp plus a constant, the return address is saved at
 * CFA + constant, and fp is either untouched or saved at CFA +
 * constant.  So each pc's rule is extracted once with libdw
 * (dwarf_cfi_addrframe) into a hash table, and a walk whose frames all
 * have such rules runs from the table with three registers and one or
 * two memory reads per frame.  The first frame with any other rule
 * (CFA expressions as in PLT entries, signal frames, a CFA in another
 * register) sends the whole walk to dwfl_getthread_frames().
 * The table is emptied when the process's mappings change.
 *
 * No CFI (code of no module, or no FDE for the pc: musl's libc, hand-
 * written assembly, JIT code): the rule comes from the instructions
 * (stack/unwind/unwind-insn.h), else it is the frame pointer's (CFA = fp +
 * 16), cached like the others.  libdwfl's walk ends at such a frame
 * (its own frame-pointer guess is not taken) and goes on from its
 * caller with that rule, as after a stub.
 *
 * Stubs (the in-target probes' code, stack/modules.h) have no CFI: both
 * walks stop at a frame there, unwind_stub_step() gives the registers
 * of its caller, and the walk goes on from them, the caller's return
 * address less 1 as its pc (the call instruction's rule).
 *
 * Compiled only with libdw (HAVE_LIBDW).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack/unwind/unwind.h"

#ifdef HAVE_LIBDW

#include <dwarf.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "stack/codecopy.h"
#include "stack/unwind/cfi-rule.h"
#include "stack/runtimes/jitcfi.h"
#include "stack/runtimes/jitnames.h"
#include "stack/modules.h"
#include "stack/unwind/unwind-dwfl.h"
#include "stack/unwind/unwind-insn.h"
#include "util/error.h"
#include "util/xmalloc.h"

int unwind_libdw_rule_cache = 1;

/*
 * RULE_LR: the return address is still in the link register (arm64's
 * x30 in a leaf or before its prologue: CFI's "same value" for the
 * return address column, or the instruction analysis' ra_off 0), which
 * only the first frame of a stop knows (arch_entry_ra()); elsewhere the
 * walk ends there, as at RULE_END.
 */
enum { RULE_SIMPLE = 1, RULE_END, RULE_COMPLEX, RULE_LR };
/* where a rule comes from (struct unwinder: by_cfi, by_insn, by_fp,
 * by_jit): a module's CFI, the instructions, the frame pointer, a
 * jitdump's CFI */
enum { SRC_CFI, SRC_INSN, SRC_FP, SRC_JIT };

/* How far above the stack pointer a frame pointer's CFA may be. */
#define FP_MAX_FRAME (64u << 20)

struct dw_rule {
	uint64_t pc;		/* the address looked up; 0 = empty slot */
	int32_t cfa_off;	/* CFA = cfa_reg + cfa_off */
	int32_t ra_off;		/* return address at CFA + ra_off */
	int32_t fp_off;	/* caller's fp at CFA + fp_off; 0 = unchanged */
	uint8_t kind;		/* RULE_* */
	uint8_t cfa_reg;	/* ARCH_DW_SP or ARCH_DW_FP */
	uint8_t src;		/* SRC_* */
	uint8_t gen;		/* code in no module (run-time code): the
				 * dw_state gen it was made at; 0: a module's */
};

#define RULES_MIN 1024
#define RULES_MAX 65536

struct dw_state {
	Dwfl *dwfl;
	struct dw_rule *rules;		/* open addressing on pc */
	size_t nrules, rules_size;
	int attached;
	int attach_failures;
	int reported;			/* modules reported at least once */
	const struct stack_snapshot *snap;	/* the walk in progress */
	struct unwind_memcache cache;
	uint64_t *pcs;
	int n, max;
	const struct proc_modules *pm;	/* the unwinder's */
	pid_t pid;
	unsigned code_gen;		/* the unwinder's code_gen last seen */
	uint8_t gen;			/* and its count, 1..255 (struct dw_rule) */
	int bump;			/* the walk's pc is a return address less 1 */
	int stub;			/* libdwfl's walk ended in a stub: */
	int nocfi;			/* or at a frame without CFI: */
	arch_regs_t stub_regs;		/* the registers of that frame */
	int stub_fp;			/* its fp is known */
	uint64_t nocfi_key;		/* the rule of that frame */
	int nocfi_exact;
	uint64_t by_cfi;		/* frames libdwfl stepped, this walk */
	int go;				/* or at Go's switch: stub_regs the
					 * goroutine's (unwind_go_step()'s 1 or 2;
					 * -1 the end) */
};

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct dw_state *st = arg;

	(void)dwfl;
	if (*thread_argp || !st->snap)
		return 0;
	*thread_argp = st;
	return st->snap->tid;
}

static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct dw_state *st = arg;

	(void)dwfl;
	if (!st->snap || st->snap->tid != tid)
		return false;
	*thread_argp = st;
	return true;
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct dw_state *st = arg;
	uint64_t w;

	(void)dwfl;
	if (!st->snap || unwind_memcache_read(&st->cache, st->snap, addr, &w, sizeof(w)) < 0)
		return false;
	*result = w;
	return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct dw_state *st = arg;
	const arch_regs_t *r = &st->snap->regs;
	Dwarf_Word regs[ARCH_DW_NREGS];

	arch_dw_initial(r, regs);
	/* a stub walk's tail: only fp and sp known, the others undefined */
	if (st->snap->walked ?
	    !dwfl_thread_state_registers(thread, ARCH_DW_FP, 1, regs + ARCH_DW_FP) ||
	    !dwfl_thread_state_registers(thread, ARCH_DW_SP, 1, regs + ARCH_DW_SP) :
	    !dwfl_thread_state_registers(thread, 0, ARCH_DW_NREGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, arch_pc(r));
	return true;
}

static const Dwfl_Thread_Callbacks dw_thread_callbacks = {
	.next_thread = dw_next_thread,
	.get_thread = dw_get_thread,
	.memory_read = dw_memory_read,
	.set_initial_registers = dw_set_initial_registers,
};

static void rule_classify(Dwarf_Frame *frame, struct dw_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	Dwarf_Addr start, end;
	bool signal = false;
	int ra = dwarf_frame_info(frame, &start, &end, &signal);

	r->kind = RULE_COMPLEX;
	if (ra != ARCH_DW_RA || signal)
		return;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != ARCH_DW_SP && ops[0].number != ARCH_DW_FP) ||
	    (int64_t)ops[0].number2 < INT32_MIN || (int64_t)ops[0].number2 > INT32_MAX)
		return;
	r->cfa_reg = (uint8_t)ops[0].number;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	if (dwarf_frame_register(frame, ARCH_DW_RA, mem, &ops, &nops) != 0)
		return;
	/* undefined: the outermost frame; same value: in the link register */
	if (nops == 0 && ops != NULL) {
		r->kind = RULE_END;
		return;
	}
	r->ra_off = 0;
	if (nops != 0 && !cfi_saved_at(ops, nops, &r->ra_off))
		return;
	if (dwarf_frame_register(frame, ARCH_DW_FP, mem, &ops, &nops) != 0)
		return;
	r->fp_off = 0;
	if (nops != 0 && !cfi_saved_at(ops, nops, &r->fp_off))
		return;
	r->kind = r->ra_off ? RULE_SIMPLE : RULE_LR;
}

static int dw_code_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct dw_state *st = arg;

	/* run-time code: as it was when made executable, if copied then */
	if (st->pm && code_copy_read(st->pm->code, addr, buf, len) == 1)
		return 0;
	return st->snap ? unwind_memcache_read_code(&st->cache, st->snap, addr, buf, len) : -1;
}

static const char *const src_names[] = { "CFI", "instructions", "frame pointer",
					 "the jitdump's CFI" };

/*
 * No CFI covers the frame at key (a pc without a module, or without an
 * FDE): its rule from its instructions (stack/unwind/unwind-insn.h), else the
 * frame pointer's (the frame record at fp, ARCH_FRAME_*: CFA = fp + 16,
 * fp saved at fp).
 */
static void rule_nocfi(struct dw_state *st, uint64_t key, int exact, struct dw_rule *r)
{
	const struct insn_code code = { dw_code_read, st, unwind_insn_probe_entry, st->pm };
	struct insn_rule ir;

	r->kind = RULE_SIMPLE;
	/* a return address still in its register: the first frame's only */
	if (unwind_insn_rule(&code, exact ? key : key + 1, exact, &ir) == 0 &&
	    (ir.ra_off || exact)) {
		r->kind = ir.ra_off ? RULE_SIMPLE : RULE_LR;
		r->src = SRC_INSN;
		r->cfa_reg = ir.cfa_reg == INSN_REG_FP ? ARCH_DW_FP : ARCH_DW_SP;
		r->cfa_off = ir.cfa_off;
		r->ra_off = ir.ra_off;
		r->fp_off = ir.fp_off;
	} else {
		r->src = SRC_FP;
		r->cfa_reg = ARCH_DW_FP;
		r->cfa_off = ARCH_FRAME_SIZE;
		r->ra_off = ARCH_FRAME_RA_OFF - ARCH_FRAME_SIZE;
		r->fp_off = ARCH_FRAME_FP_OFF - ARCH_FRAME_SIZE;
	}
	debug_msg("unwind: no CFI at %s 0x%" PRIx64 ": by %s, CFA %%%s%+d, %%" ARCH_FP_NAME " %s%+d",
		  exact ? "pc" : "return address", exact ? key : key + 1, src_names[r->src],
		  r->cfa_reg == ARCH_DW_SP ? ARCH_SP_NAME : ARCH_FP_NAME, r->cfa_off,
		  r->fp_off ? "at CFA" : "kept", r->fp_off);
}

/*
 * Run-time code at key: the rule of the CFI of its jitdump's
 * UNWINDING_INFO (stack/runtimes/jitcfi.h), when it is one of the simple ones or
 * an end.  0, or -1 (r untouched) when there is none such.
 */
static int rule_jit(struct dw_state *st, uint64_t key, struct dw_rule *r)
{
	uint32_t module = jit_names_module(st->pid);
	Dwarf_CFI *cfi = module != UINT32_MAX ? jit_cfi_get(module, key) : NULL;
	Dwarf_Frame *frame;
	struct dw_rule jr = *r;

	if (!cfi || dwarf_cfi_addrframe(cfi, key, &frame) != 0)
		return -1;
	rule_classify(frame, &jr);
	free(frame);
	if (jr.kind == RULE_COMPLEX)
		return -1;
	jr.src = SRC_JIT;
	*r = jr;
	debug_msg("unwind: run-time code at 0x%" PRIx64 ": by %s, CFA %%%s%+d, %%" ARCH_FP_NAME
		  " %s%+d", key, src_names[r->src],
		  r->cfa_reg == ARCH_DW_SP ? ARCH_SP_NAME : ARCH_FP_NAME, r->cfa_off,
		  r->fp_off ? "at CFA" : "kept", r->fp_off);
	return 0;
}

/* The rule at key: an exact pc, or (!exact) a return address less 1. */
static __attribute__((noinline)) void rule_compute(struct dw_state *st, uint64_t key, int exact,
						  struct dw_rule *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(st->dwfl, key);

	r->pc = key;
	r->kind = RULE_COMPLEX;
	r->src = SRC_CFI;
	r->gen = mod ? 0 : st->gen;	/* run-time code may be written again */
	for (int pass = 0; mod && pass < 2; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass ? dwfl_module_dwarf_cfi(mod, &bias)
				      : dwfl_module_eh_cfi(mod, &bias);
		Dwarf_Frame *frame;

		if (!cfi || dwarf_cfi_addrframe(cfi, key - bias, &frame) != 0)
			continue;
		rule_classify(frame, r);
		free(frame);
		return;
	}
	if (!mod && rule_jit(st, key, r) == 0)
		return;
	rule_nocfi(st, key, exact, r);
}

static size_t rule_slot(uint64_t pc, size_t size)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 32) & (size - 1);
}

static void rules_clear(struct dw_state *st)
{
	if (st->rules)
		memset(st->rules, 0, st->rules_size * sizeof(*st->rules));
	st->nrules = 0;
}

/* The table has no room for one more rule: grow it, or empty it at its bound. */
static __attribute__((noinline)) void rules_grow(struct dw_state *st)
{
	struct dw_rule *old = st->rules;
	size_t old_size = st->rules_size, j, mask;

	if (old_size >= RULES_MAX) {
		rules_clear(st);	/* bounded: start over */
		return;
	}
	st->rules_size = old_size ? old_size * 2 : RULES_MIN;
	st->rules = xcalloc(st->rules_size, sizeof(*st->rules));
	mask = st->rules_size - 1;
	for (size_t i = 0; i < old_size; i++)
		if (old[i].pc) {
			for (j = rule_slot(old[i].pc, st->rules_size); st->rules[j].pc;
			     j = (j + 1) & mask)
				;
			st->rules[j] = old[i];
		}
	free(old);
}

/* The rule at pc, from the table or computed into it (exact: see rule_compute). */
static inline __attribute__((always_inline)) const struct dw_rule *
rule_get(struct dw_state *st, uint64_t pc, int exact)
{
	size_t j, mask;

	if ((st->nrules + 1) * 2 > st->rules_size)
		rules_grow(st);
	mask = st->rules_size - 1;
	for (j = rule_slot(pc, st->rules_size); st->rules[j].pc; j = (j + 1) & mask)
		if (st->rules[j].pc == pc) {
			/* run-time code written since: the rule of the new code */
			if (__builtin_expect(st->rules[j].gen && st->rules[j].gen != st->gen, 0))
				rule_compute(st, pc, exact, &st->rules[j]);
			return &st->rules[j];
		}
	rule_compute(st, pc, exact, &st->rules[j]);
	st->nrules++;
	return &st->rules[j];
}

/* pc is in run-time code that a perf map or jitdump of the process names. */
static __attribute__((noinline)) int jit_code(struct dw_state *st, uint64_t pc)
{
	uint32_t module = jit_names_module(st->pid);
	uint64_t start;
	const char *file;
	int line;

	return module != UINT32_MAX && jit_names_lookup(module, pc, &start, &file, &line);
}

/*
 * One step by rule r from the frame whose stack pointer is *sp and
 * fp *fp: the caller's into *sp and *fp, its return address into *ra.
 * lr: the registers of the stop when this is its first frame, for a
 * return address in the link register (RULE_LR), else NULL.
 * 1 stepped, 0 the walk ends here, -1 the frame needs libdwfl.  A rule
 * not from CFI is checked more: its CFA above the stack pointer, and a
 * frame pointer's return address into code (a module's, a stub's, or
 * run-time code a perf map or jitdump names).
 */
static inline __attribute__((always_inline)) int
rule_step(struct dw_state *st, const struct dw_rule *r, const arch_regs_t *lr, uint64_t *sp,
	  uint64_t *fp, uint64_t *ra)
{
	uint64_t cfa, nfp, w;

	if (r->kind == RULE_END)
		return 0;
	if (r->kind == RULE_LR && !lr)
		return 0;
	if (r->kind != RULE_SIMPLE && r->kind != RULE_LR)
		return -1;
	cfa = (r->cfa_reg == ARCH_DW_SP ? *sp : *fp) + (uint64_t)(int64_t)r->cfa_off;
	if (r->kind == RULE_LR ? cfa < *sp : cfa <= *sp)
		return r->src == SRC_CFI ? -1 : 0;	/* a module's CFI: libdwfl's walk */
	if (__builtin_expect(r->src == SRC_FP, 0) && cfa - *sp > FP_MAX_FRAME)
		return 0;
	if (r->kind == RULE_LR ? arch_entry_ra(lr, &w) != 0 :
	    unwind_memcache_read(&st->cache, st->snap, cfa + (uint64_t)(int64_t)r->ra_off,
				 &w, sizeof(w)) < 0)
		return 0;
	w = arch_ra_strip(w);
	if (r->fp_off) {
		if (unwind_memcache_read(&st->cache, st->snap, cfa + (uint64_t)(int64_t)r->fp_off,
					 &nfp, sizeof(nfp)) < 0)
			return 0;
		*fp = nfp;
	}
	if (w == 0)
		return 0;
	if (__builtin_expect(r->src != SRC_CFI, 0) &&
	    (w < 4096 || (r->src == SRC_FP && !modules_is_code(st->pm, w) &&
			  !jit_code(st, w - 1))))
		return 0;
	*sp = cfa;
	*ra = w;
	return 1;
}

/* steps frames stepped, insn, fp and jit of them by those rules */
static void count_src(struct unwinder *uw, uint64_t steps, uint64_t insn, uint64_t fp,
		      uint64_t jit)
{
	uw->by_cfi += steps - insn - fp - jit;
	uw->by_insn += insn;
	uw->by_fp += fp;
	uw->by_jit += jit;
}

/*
 * Walk with cached rules.  Returns the depth, or -1 when a frame needs
 * libdwfl's full unwinder.  A frame in a stub (unwind_stub_step()) is
 * stepped over; a return address into one is replaced by the stub's
 * caller's.  bump: the pc is a return address less 1 (see dw_walk_from).
 */
static int dw_fast_walk(struct unwinder *uw, const struct stack_snapshot *s,
			uint64_t *pcs, int max_depth, int bump)
{
	struct dw_state *st = uw->priv;
	uint64_t pc = arch_pc(&s->regs), sp = arch_sp(&s->regs), fp = arch_fp(&s->regs);
	uint64_t insn = 0, fps = 0, jit = 0;
	int n = 0, stub0 = 0;

	for (;;) {
		const struct dw_rule *r;
		arch_regs_t at;
		int k;

		pcs[n++] = pc;
		at = s->regs;
		arch_set_pc(&at, pc);
		arch_set_sp(&at, sp);
		arch_set_fp(&at, fp);
		if ((n < max_depth || n > 1) && (k = unwind_stub_step(uw, s, &at)) != 0) {
			if (k < 0)
				break;
			if (n > 1 || bump)
				n--;	/* the stub's caller in its place */
			else
				stub0 = 1;	/* a frame more, no rule's */
			/* bump: pcs[0] is a return address less 1 */
			pc = arch_pc(&at) - (uint64_t)(bump && n == 0);
			sp = arch_sp(&at);
			fp = arch_fp(&at);
			continue;
		}
		if (n >= max_depth)
			break;
		if (n > 1 && (k = unwind_go_step(uw->pm, s, &at)) != 0) {
			if (k < 0)
				break;
			if (k == 2) {
				pcs[n++] = s->go_pc;	/* its function, frameless */
				if (n >= max_depth)
					break;
			}
			pc = arch_pc(&at);	/* the goroutine's frame: on from there */
			sp = arch_sp(&at);
			fp = arch_fp(&at);
			continue;
		}
		/* callers: the call instruction's rule, not the next one's */
		r = rule_get(st, n == 1 ? pc : pc - 1, n == 1 && !bump);
		k = rule_step(st, r, n == 1 && !bump && !s->walked ? &s->regs : NULL, &sp, &fp,
			      &pc);
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		if (__builtin_expect(r->src != SRC_CFI, 0)) {
			insn += r->src == SRC_INSN;
			fps += r->src == SRC_FP;
			jit += r->src == SRC_JIT;
		}
	}
	count_src(uw, (uint64_t)(n - 1 - stub0), insn, fps, jit);
	return n;
}

/* Report the module instances of uw->pm to the Dwfl. */
static void dw_report(struct unwinder *uw)
{
	struct dw_state *st = uw->priv;

	unwind_dwfl_report(st->dwfl, uw->pm);
	st->reported = 1;
}

static int dw_init(struct unwinder *uw)
{
	struct dw_state *st;

	if (!uw->pm) {
		errno = EINVAL;
		return -1;
	}
	st = xcalloc(1, sizeof(*st));
	st->dwfl = unwind_dwfl_new();
	if (!st->dwfl) {
		free(st);
		errno = ENOMEM;
		return -1;
	}
	st->pm = uw->pm;
	st->pid = uw->pid;
	st->gen = 1;
	uw->priv = st;
	return 0;
}

static void dw_fini(struct unwinder *uw)
{
	struct dw_state *st = uw->priv;

	if (!st)
		return;
	st->snap = NULL;
	dwfl_end(st->dwfl);
	jit_cfi_release();	/* a cache of any process's */
	free(st->rules);
	free(st);
	uw->priv = NULL;
}

static void dw_maps_changed(struct unwinder *uw)
{
	struct dw_state *st = uw->priv;

	st->reported = 0;
	rules_clear(st);
}

/*
 * The registers of a frame of libdwfl's walk, at pc, into st->stub_regs
 * (what libdwfl does not know stays the stop's).  0, or -1 when it
 * knows no stack pointer.
 */
static int frame_regs(struct dw_state *st, Dwfl_Frame *frame, Dwarf_Addr pc)
{
	arch_regs_t r = st->snap->regs;
	Dwarf_Word v;

	st->stub_fp = 0;
	if (dwfl_frame_reg(frame, ARCH_DW_SP, &v) != 0)
		return -1;	/* no stack pointer: no step */
	arch_set_sp(&r, v);
	for (int i = 0; i < ARCH_NSAVED; i++) {
		if (dwfl_frame_reg(frame, arch_dw_saved[i], &v) != 0)
			continue;
		if (arch_dw_saved[i] == ARCH_DW_FP)
			st->stub_fp = 1;
		arch_set_saved_reg(&r, i, v);
	}
	arch_set_pc(&r, pc);
	st->stub_regs = r;
	return 0;
}

static int dw_frame(Dwfl_Frame *frame, void *arg)
{
	struct dw_state *st = arg;
	Dwarf_Addr pc;
	bool activation = false;
	const struct dw_rule *r;
	uint64_t key;
	int exact;

	if (!dwfl_frame_pc(frame, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	pc = arch_ra_strip(pc);
	/* Convention of unwind.h: exact pcs after frame 0 are stored + 1. */
	st->pcs[st->n] = st->n > 0 && activation ? pc + 1 : pc;
	st->n++;
	if (st->n > 1)
		st->by_cfi++;
	if (modules_find_stubs(st->pm, pc)) {
		/* no CFI there: memtap steps over it, then walks on */
		st->stub = frame_regs(st, frame, pc) == 0;
		return DWARF_CB_ABORT;
	}
	if (st->n >= st->max)
		return DWARF_CB_ABORT;
	if (st->n > 1 && !activation && st->snap->go_g0) {
		arch_regs_t gr = st->snap->regs;
		Dwarf_Word v;

		arch_set_pc(&gr, pc);
		arch_set_sp(&gr, dwfl_frame_reg(frame, ARCH_DW_SP, &v) == 0 ? v : 0);
		if ((st->go = unwind_go_step(st->pm, st->snap, &gr)) != 0) {
			st->stub_regs = gr;
			return DWARF_CB_ABORT;
		}
	}
	/* no CFI either: memtap goes on with the rule of its instructions */
	key = activation ? pc : pc - 1;
	exact = activation && !(st->bump && st->n == 1);
	r = rule_get(st, key, exact);
	if (r->src != SRC_CFI) {
		st->nocfi = frame_regs(st, frame, pc) == 0;
		st->nocfi_key = key;
		st->nocfi_exact = exact;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/*
 * Walk from s, whose pc is exact, or (bump) a caller's return address
 * less 1 (the frame after a stub), stored as the return address.
 */
static int dw_walk_from(struct unwinder *uw, const struct stack_snapshot *s,
			uint64_t *pcs, int max_depth, int bump)
{
	struct dw_state *st = uw->priv;
	struct stack_snapshot next;
	int n = -1, keep;

	st->snap = s;
	unwind_memcache_reset(&st->cache);
	if (unwind_libdw_rule_cache)
		n = dw_fast_walk(uw, s, pcs, max_depth, bump);
	if (n > 0) {
		if (bump)
			pcs[0]++;
		return n;
	}
	unwind_memcache_reset(&st->cache);
	st->pcs = pcs;
	st->n = 0;
	st->max = max_depth;
	st->bump = bump;
	st->stub = st->nocfi = 0;
	st->by_cfi = 0;
	st->go = 0;
	dwfl_getthread_frames(st->dwfl, s->tid, dw_frame, st);
	uw->by_cfi += st->by_cfi;
	n = st->n;
	if (bump && n > 0)
		pcs[0]++;
	if (st->go == 2 && n < max_depth)
		pcs[n++] = s->go_pc;
	if (st->go > 0 && n < max_depth) {
		/* on from the goroutine's frame, its pc a return address */
		next = *s;
		next.regs = st->stub_regs;
		arch_set_pc(&next.regs, arch_pc(&next.regs) - 1);
		n += dw_walk_from(uw, &next, pcs + n, max_depth - n, 1);
		stack_snapshot_marks(s, &next);
		return n;
	}
	next = *s;
	next.regs = st->stub_regs;
	if (st->nocfi) {
		/* the frame without CFI stays; on from its caller */
		const struct dw_rule *r = rule_get(st, st->nocfi_key, st->nocfi_exact);
		uint64_t ra, sp = arch_sp(&next.regs), fp = arch_fp(&next.regs);

		if ((r->cfa_reg == ARCH_DW_FP && !st->stub_fp) || n >= max_depth ||
		    rule_step(st, r, NULL, &sp, &fp, &ra) <= 0)
			return n;
		count_src(uw, 1, r->src == SRC_INSN, r->src == SRC_FP, r->src == SRC_JIT);
		arch_set_sp(&next.regs, sp);
		arch_set_fp(&next.regs, fp);
		arch_set_pc(&next.regs, ra - 1);
		n += dw_walk_from(uw, &next, pcs + n, max_depth - n, 1);
		stack_snapshot_marks(s, &next);
		return n;
	}
	if (!st->stub || unwind_stub_step(uw, s, &next.regs) <= 0)
		return n;
	/* the stub's pc stays only as the exact pc of the stop */
	keep = n == 1 && !bump ? 1 : n - 1;
	if (keep >= max_depth)
		return n;
	arch_set_pc(&next.regs, arch_pc(&next.regs) - 1);
	keep += dw_walk_from(uw, &next, pcs + keep, max_depth - keep, 1);
	stack_snapshot_marks(s, &next);
	return keep;
}

static int dw_walk(struct unwinder *uw, const struct stack_snapshot *s,
		   uint64_t *pcs, int max_depth)
{
	struct dw_state *st = uw->priv;
	int n;

	if (!st->reported)
		dw_report(uw);
	if (uw->code_gen != st->code_gen) {
		/* a rule of run-time code is valid at its gen only: at the
		 * wrap, none of the 255 before may stay */
		st->code_gen = uw->code_gen;
		st->gen = st->gen % 255 + 1;
		if (st->gen == 1)
			rules_clear(st);
	}
	if (!st->attached) {
		st->snap = s;
		/* Retried on later walks: no module may have an ELF yet. */
		if (st->attach_failures > 16 ||
		    !dwfl_attach_state(st->dwfl, NULL, uw->pid, &dw_thread_callbacks, st)) {
			st->attach_failures++;
			st->snap = NULL;
			return 0;
		}
		st->attached = 1;
	}
	if (s->walked) {
		/* a stub walk's tail: its pc a return address, its call's rule */
		struct stack_snapshot call = *s;

		arch_set_pc(&call.regs, arch_pc(&call.regs) - 1);
		n = dw_walk_from(uw, &call, pcs, max_depth, 1);
		stack_snapshot_marks(s, &call);
	} else {
		n = dw_walk_from(uw, s, pcs, max_depth, 0);
	}
	st->snap = NULL;
	return n;
}

static const struct unwinder_ops dw_ops = {
	.name = "libdw",
	.init = dw_init,
	.fini = dw_fini,
	.maps_changed = dw_maps_changed,
	.walk = dw_walk,
};

const struct unwinder_ops *const unwinder_libdw_ops = &dw_ops;

#else /* !HAVE_LIBDW */

int unwind_libdw_rule_cache;

const struct unwinder_ops *const unwinder_libdw_ops = NULL;

#endif /* HAVE_LIBDW */

/*
 * insn-unwind.c (x86_64) - the frame of code without CFI, from its
 * instructions (arch/insn-unwind.h; what the analysis does,
 * stack/unwind/unwind-insn.h): x86-64's, decoded with Zydis.
 *
 * Followed: push, pop, add, sub, lea, leave and mov %rbp,%rsp, which
 * move %rsp; calls, jmp (also through a rip-relative pointer: a PLT
 * entry) and the conditional branches.  A path's state, before each
 * instruction: %rsp as base + offset, the base being the %rsp or the
 * %rbp of the pc (or unknown); what %rbp holds (its value at the pc, a
 * value base + offset, the word loaded from the stack slot at base +
 * offset, or unknown); and a short list of the stack slots written on
 * the way (pushes, stores): a pop of %rbp from a slot the path itself
 * wrote gives back what was stored there, not what the slot held at the
 * pc.  At a ret the return address is at %rsp: CFA = %rsp + 8, the
 * return address at CFA - 8.
 *
 * Paths: straight on through calls and jmps; a conditional branch's
 * other arm is kept (with the state) and tried when the path ends
 * without a usable ret.  A jump to a place visited already ends a path
 * (a loop), so the search ends.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "arch/insn-unwind.h"
#include "arch/insn-walk.h"

#define NSLOTS 16		/* stack slots a path remembers */
#define WINDOW 256		/* code bytes read at a time */

enum { B_RSP = INSN_B_SP, B_RBP = INSN_B_FP, B_NONE = INSN_B_NONE };	/* struct insn_val's base */
enum { BP_SAME, BP_VAL, BP_SLOT, BP_UNK };	/* what %rbp holds */

struct slot {
	struct insn_val at;		/* the slot's address */
	uint8_t bp;		/* BP_*: the %rbp stored there, BP_UNK: another value */
	struct insn_val bpv;
};

struct path {
	uint64_t ip;
	struct insn_val sp;
	uint8_t bp;
	struct insn_val bpv;		/* BP_VAL: %rbp's value; BP_SLOT: where it was loaded from */
	uint8_t nslots;
	struct slot slots[NSLOTS];
};

struct scan {
	struct insn_walk walk;	/* first: step_path() is given it */
	ZydisDecoder dec;
	struct path alts[INSN_WALK_MAX_ALTS];
	uint64_t wbase;		/* code window */
	size_t wlen;
	int wshort;		/* the window ends where the readable code does */
	uint8_t window[WINDOW];
};

static const struct insn_val unknown_val = { B_NONE, 0 };

/* The code at ip: a pointer and the bytes available (0: unreadable). */
static const uint8_t *code_at(struct scan *sc, uint64_t ip, size_t *avail)
{
	size_t n;

	if (!(ip >= sc->wbase && ip < sc->wbase + sc->wlen &&
	      (sc->wbase + sc->wlen - ip >= ZYDIS_MAX_INSTRUCTION_LENGTH || sc->wshort))) {
		sc->wlen = 0;
		sc->wshort = 0;
		if (ip < 4096)
			return NULL;
		if (sc->walk.code->read(sc->walk.code->arg, ip, sc->window, WINDOW) == 0) {
			n = WINDOW;
		} else {
			/* up to the page's end, then a byte at a time */
			n = 4096 - (ip & 4095);
			if (n > WINDOW)
				n = WINDOW;
			while (n && sc->walk.code->read(sc->walk.code->arg, ip, sc->window, n) != 0)
				n = n > ZYDIS_MAX_INSTRUCTION_LENGTH ? ZYDIS_MAX_INSTRUCTION_LENGTH : n - 1;
			if (!n)
				return NULL;
			sc->wshort = 1;
		}
		sc->wbase = ip;
		sc->wlen = n;
	}
	*avail = sc->wbase + sc->wlen - ip;
	return sc->window + (ip - sc->wbase);
}

static ZydisRegister full_reg(ZydisRegister r)
{
	return ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

static int is_reg(const ZydisDecodedOperand *op, ZydisRegister r)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && full_reg(op->reg.value) == r;
}

/* Does a visible operand of the instruction write r (or a part of it)? */
static int writes(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops,
		  ZydisRegister r)
{
	for (unsigned i = 0; i < zi->operand_count_visible; i++)
		if (is_reg(&ops[i], r) && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return 1;
	return 0;
}

/* %rbp's value as a struct insn_val, or unknown. */
static struct insn_val bp_value(const struct path *p)
{
	if (p->bp == BP_SAME)
		return (struct insn_val){ B_RBP, 0 };
	if (p->bp == BP_VAL)
		return p->bpv;
	return unknown_val;
}

/* The address of a memory operand on the stack (base %rsp or %rbp, no index). */
static struct insn_val mem_addr(const struct path *p, const ZydisDecodedOperand *op)
{
	ZydisRegister base;

	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.index != ZYDIS_REGISTER_NONE ||
	    (op->mem.segment != ZYDIS_REGISTER_SS && op->mem.segment != ZYDIS_REGISTER_DS &&
	     op->mem.segment != ZYDIS_REGISTER_NONE))
		return unknown_val;
	base = op->mem.base;
	if (base == ZYDIS_REGISTER_RSP)
		return insn_val_add(p->sp, op->mem.disp.value);
	if (base == ZYDIS_REGISTER_RBP)
		return insn_val_add(bp_value(p), op->mem.disp.value);
	return unknown_val;
}

/* The path stored into the slot at: %rbp's state when is_bp, else another value. */
static void store(struct path *p, struct insn_val at, int is_bp)
{
	struct slot *s = NULL;

	if (at.base == B_NONE)
		return;
	for (int i = 0; i < p->nslots; i++)
		if (insn_val_same(p->slots[i].at, at))
			s = &p->slots[i];
	if (!s) {
		if (p->nslots == NSLOTS) {
			memmove(p->slots, p->slots + 1, sizeof(p->slots[0]) * (NSLOTS - 1));
			p->nslots--;
		}
		s = &p->slots[p->nslots++];
	}
	s->at = at;
	s->bp = is_bp ? p->bp : BP_UNK;
	s->bpv = p->bpv;
}

/* %rbp loaded from the slot at. */
static void load_bp(struct path *p, struct insn_val at)
{
	for (int i = 0; i < p->nslots; i++)
		if (insn_val_same(p->slots[i].at, at)) {
			p->bp = p->slots[i].bp;
			p->bpv = p->slots[i].bpv;
			return;
		}
	/* below the pc's %rsp: written after the pc by what the path did not see */
	if (at.base == B_NONE || (at.base == B_RSP && at.off < 0)) {
		p->bp = BP_UNK;
		return;
	}
	p->bp = BP_SLOT;
	p->bpv = at;
}

/*
 * Is target the entry of a function that memtap probes: an int3 (a
 * breakpoint), or a jump into the stubs (a detour)?  The code there is
 * not the function's, but the function starts there: its return
 * address at %rsp.
 */
static int entry_probed(struct scan *sc, uint64_t target)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	uint64_t to;
	size_t avail;
	const uint8_t *c;

	if (insn_walk_probe_code(&sc->walk, target))
		return 1;
	c = code_at(sc, target, &avail);
	if (!c || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&sc->dec, c, avail, &zi, ops)))
		return 0;
	if (zi.mnemonic == ZYDIS_MNEMONIC_INT3)
		return 1;
	return sc->walk.code->is_probe_entry && zi.mnemonic == ZYDIS_MNEMONIC_JMP &&
	       ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], target, &to)) &&
	       insn_walk_probe_code(&sc->walk, to);
}

/* The path reached a ret: its rule, 0; or -1 when its state says nothing. */
static int at_ret(const struct path *p, struct insn_rule *rule)
{
	struct insn_val cfa = insn_val_add(p->sp, 8);

	if (cfa.base == B_NONE || cfa.off <= 0)
		return -1;
	rule->cfa_reg = cfa.base == B_RSP ? INSN_REG_SP : INSN_REG_FP;
	rule->cfa_off = cfa.off;
	rule->ra_off = -8;
	if (p->bp == BP_SAME) {
		rule->fp_off = 0;
		return 0;
	}
	if (p->bp != BP_SLOT || p->bpv.base != cfa.base || p->bpv.off >= cfa.off)
		return -1;
	rule->fp_off = p->bpv.off - cfa.off;
	return 0;
}

/*
 * Is the code at ip padding (a nop, int3, ud2)?  After a call, it says
 * the callee does not return (__stack_chk_fail, abort): the compiler
 * put the next function or its alignment right after the call.
 */
static int padding_at(struct scan *sc, uint64_t ip)
{
	ZydisDecodedInstruction zi;
	size_t avail;
	const uint8_t *c = code_at(sc, ip, &avail);

	if (!c || !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&sc->dec, NULL, c, avail, &zi)))
		return 1;
	switch (zi.mnemonic) {
	case ZYDIS_MNEMONIC_NOP:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
		return 1;
	default:
		return 0;
	}
}

enum { GO_ON = INSN_GO_ON, DEAD = INSN_DEAD, FOUND = INSN_FOUND };

/* One instruction of path p; p->ip moves to the next one. */
static int step(struct scan *sc, struct path *p, const ZydisDecodedInstruction *zi,
		const ZydisDecodedOperand *ops, struct insn_rule *rule)
{
	uint64_t next = p->ip + zi->length, target;
	const ZydisDecodedOperand *o0 = &ops[0], *o1 = &ops[1];
	int nvis = zi->operand_count_visible;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
		p->sp = insn_val_add(p->sp, -8);
		store(p, p->sp, nvis > 0 && is_reg(o0, ZYDIS_REGISTER_RBP));
		break;
	case ZYDIS_MNEMONIC_PUSHFQ:
		p->sp = insn_val_add(p->sp, -8);
		store(p, p->sp, 0);
		break;
	case ZYDIS_MNEMONIC_POP:
		if (nvis > 0 && is_reg(o0, ZYDIS_REGISTER_RSP)) {
			p->sp = unknown_val;
			break;
		}
		if (nvis > 0 && is_reg(o0, ZYDIS_REGISTER_RBP))
			load_bp(p, p->sp);
		p->sp = insn_val_add(p->sp, 8);
		break;
	case ZYDIS_MNEMONIC_POPFQ:
		p->sp = insn_val_add(p->sp, 8);
		break;
	case ZYDIS_MNEMONIC_LEAVE:
		p->sp = bp_value(p);
		load_bp(p, p->sp);
		p->sp = insn_val_add(p->sp, 8);
		break;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (nvis == 2 && is_reg(o0, ZYDIS_REGISTER_RSP)) {
			if (o1->type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
				p->sp = unknown_val;
			else
				p->sp = insn_val_add(p->sp, zi->mnemonic == ZYDIS_MNEMONIC_ADD ?
						o1->imm.value.s : -o1->imm.value.s);
			break;
		}
		goto other;
	case ZYDIS_MNEMONIC_LEA:
		if (nvis == 2 && is_reg(o0, ZYDIS_REGISTER_RSP) && o0->size == 64) {
			p->sp = mem_addr(p, o1);
			break;
		}
		if (nvis == 2 && is_reg(o0, ZYDIS_REGISTER_RBP) && o0->size == 64) {
			p->bpv = mem_addr(p, o1);
			p->bp = p->bpv.base == B_NONE ? BP_UNK : BP_VAL;
			break;
		}
		goto other;
	case ZYDIS_MNEMONIC_MOV:
		if (nvis != 2)
			goto other;
		if (is_reg(o0, ZYDIS_REGISTER_RSP) && o0->size == 64 && is_reg(o1, ZYDIS_REGISTER_RBP)) {
			p->sp = bp_value(p);
			break;
		}
		if (is_reg(o0, ZYDIS_REGISTER_RBP) && o0->size == 64) {
			if (is_reg(o1, ZYDIS_REGISTER_RSP)) {
				p->bpv = p->sp;
				p->bp = p->sp.base == B_NONE ? BP_UNK : BP_VAL;
			} else if (o1->type == ZYDIS_OPERAND_TYPE_MEMORY) {
				load_bp(p, mem_addr(p, o1));
			} else {
				p->bp = BP_UNK;
			}
			break;
		}
		if (o0->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			store(p, mem_addr(p, o0), is_reg(o1, ZYDIS_REGISTER_RBP) && o1->size == 64);
			break;
		}
		goto other;
	case ZYDIS_MNEMONIC_CALL:
		if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, o0, p->ip, &target)) && target == next) {
			/* call to the next instruction: a push of the pc */
			p->sp = insn_val_add(p->sp, -8);
			store(p, p->sp, 0);
		}
		/* the callee returns here with %rsp and %rbp as they were,
		 * unless it never returns: padding after a call says so */
		if (padding_at(sc, next))
			return DEAD;
		break;
	case ZYDIS_MNEMONIC_RET:
		return at_ret(p, rule) == 0 ? FOUND : DEAD;
	case ZYDIS_MNEMONIC_JMP:
		if (o0->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, o0, p->ip, &target)))
				return DEAD;
		} else if (o0->type == ZYDIS_OPERAND_TYPE_MEMORY &&
			   o0->mem.base == ZYDIS_REGISTER_RIP &&
			   o0->mem.index == ZYDIS_REGISTER_NONE) {
			/* through a pointer (a PLT entry: a tail call) */
			const struct insn_code *code = sc->walk.code;

			if (code->read(code->arg, next + (uint64_t)o0->mem.disp.value, &target,
				       sizeof(target)) != 0)
				return DEAD;
		} else {
			return DEAD;
		}
		if (entry_probed(sc, target))
			/* a tail call of a probed function: it returns as a ret would */
			return at_ret(p, rule) == 0 ? FOUND : DEAD;
		if (!insn_walk_enterable(&sc->walk, target))
			return DEAD;
		p->ip = target;
		return GO_ON;
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_ENTER:
	case ZYDIS_MNEMONIC_IRETQ:
	case ZYDIS_MNEMONIC_SYSRET:
		return DEAD;
	default:
		if (zi->meta.category == ZYDIS_CATEGORY_COND_BR) {
			struct path *alt;

			if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, o0, p->ip, &target)) &&
			    (alt = insn_walk_fork(&sc->walk, p, target)))
				alt->ip = target;
			break;
		}
	other:
		if (writes(zi, ops, ZYDIS_REGISTER_RSP))
			p->sp = unknown_val;
		if (writes(zi, ops, ZYDIS_REGISTER_RBP))
			p->bp = BP_UNK;
		break;
	}
	p->ip = next;
	return GO_ON;
}

/* The instruction at path p's ip, stepped (insn_walk_run()'s step): w is the scan's. */
static int step_path(struct insn_walk *w, void *p_, struct insn_rule *rule)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	struct scan *sc = (struct scan *)w;
	struct path *p = p_;
	size_t avail;
	const uint8_t *c = code_at(sc, p->ip, &avail);

	if (!c || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&sc->dec, c, avail, &zi, ops)))
		return DEAD;
	return step(sc, p, &zi, ops, rule);
}

void arch_insn_entry_rule(struct insn_rule *rule)
{
	/* the call pushed the return address: the caller's %rsp is 8 above */
	rule->cfa_reg = INSN_REG_SP;
	rule->cfa_off = 8;
	rule->ra_off = -8;
	rule->fp_off = 0;
}

int arch_insn_rule(const struct insn_code *code, uint64_t pc, int exact,
		   struct insn_rule *rule)
{
	struct scan *sc;
	struct path p;
	int k;

	/* a call leaves nothing in a register: a return address starts as
	 * an exact pc does */
	(void)exact;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -1;
	insn_walk_init(&sc->walk, code, 1, sc->alts, sizeof(sc->alts[0]));
	ZydisDecoderInit(&sc->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	memset(&p, 0, sizeof(p));
	p.ip = pc;
	p.sp.base = B_RSP;
	p.bp = BP_SAME;
	k = insn_walk_run(&sc->walk, &p, step_path, rule);
	free(sc);
	return k;
}

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

#define MAX_INSNS 4096		/* decoded, over every path */
#define MAX_ALTS 32		/* other arms waiting */
#define MAX_VISITED 256		/* jump targets seen */
#define NSLOTS 16		/* stack slots a path remembers */
#define WINDOW 256		/* code bytes read at a time */
#define MAX_OFF (1 << 24)	/* larger frames: not believed */

enum { B_RSP, B_RBP, B_NONE };			/* what a value is relative to */
enum { BP_SAME, BP_VAL, BP_SLOT, BP_UNK };	/* what %rbp holds */

struct val {
	int8_t base;		/* B_*: the %rsp or %rbp of the pc */
	int32_t off;
};

struct slot {
	struct val at;		/* the slot's address */
	uint8_t bp;		/* BP_*: the %rbp stored there, BP_UNK: another value */
	struct val bpv;
};

struct path {
	uint64_t ip;
	struct val sp;
	uint8_t bp;
	struct val bpv;		/* BP_VAL: %rbp's value; BP_SLOT: where it was loaded from */
	uint8_t nslots;
	struct slot slots[NSLOTS];
};

struct scan {
	const struct insn_code *code;
	ZydisDecoder dec;
	int budget;
	struct path alts[MAX_ALTS];
	int nalts;
	uint64_t visited[MAX_VISITED];
	int nvisited;
	uint64_t wbase;		/* code window */
	size_t wlen;
	int wshort;		/* the window ends where the readable code does */
	uint8_t window[WINDOW];
};

static const struct val unknown_val = { B_NONE, 0 };

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
		if (sc->code->read(sc->code->arg, ip, sc->window, WINDOW) == 0) {
			n = WINDOW;
		} else {
			/* up to the page's end, then a byte at a time */
			n = 4096 - (ip & 4095);
			if (n > WINDOW)
				n = WINDOW;
			while (n && sc->code->read(sc->code->arg, ip, sc->window, n) != 0)
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

static struct val add_off(struct val v, int64_t d)
{
	int64_t o = (int64_t)v.off + d;

	if (v.base == B_NONE || o < -MAX_OFF || o > MAX_OFF)
		return unknown_val;
	v.off = (int32_t)o;
	return v;
}

/* %rbp's value as a struct val, or unknown. */
static struct val bp_value(const struct path *p)
{
	if (p->bp == BP_SAME)
		return (struct val){ B_RBP, 0 };
	if (p->bp == BP_VAL)
		return p->bpv;
	return unknown_val;
}

/* The address of a memory operand on the stack (base %rsp or %rbp, no index). */
static struct val mem_addr(const struct path *p, const ZydisDecodedOperand *op)
{
	ZydisRegister base;

	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.index != ZYDIS_REGISTER_NONE ||
	    (op->mem.segment != ZYDIS_REGISTER_SS && op->mem.segment != ZYDIS_REGISTER_DS &&
	     op->mem.segment != ZYDIS_REGISTER_NONE))
		return unknown_val;
	base = op->mem.base;
	if (base == ZYDIS_REGISTER_RSP)
		return add_off(p->sp, op->mem.disp.value);
	if (base == ZYDIS_REGISTER_RBP)
		return add_off(bp_value(p), op->mem.disp.value);
	return unknown_val;
}

static int same_val(struct val a, struct val b)
{
	return a.base != B_NONE && a.base == b.base && a.off == b.off;
}

/* The path stored into the slot at: %rbp's state when is_bp, else another value. */
static void store(struct path *p, struct val at, int is_bp)
{
	struct slot *s = NULL;

	if (at.base == B_NONE)
		return;
	for (int i = 0; i < p->nslots; i++)
		if (same_val(p->slots[i].at, at))
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
static void load_bp(struct path *p, struct val at)
{
	for (int i = 0; i < p->nslots; i++)
		if (same_val(p->slots[i].at, at)) {
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

/* 1 when target was not visited yet (now it is), 0 otherwise. */
static int visit(struct scan *sc, uint64_t target)
{
	for (int i = 0; i < sc->nvisited; i++)
		if (sc->visited[i] == target)
			return 0;
	if (sc->nvisited == MAX_VISITED)
		return 0;
	sc->visited[sc->nvisited++] = target;
	return 1;
}

/* Is addr in the code of memtap's in-target probes (code->is_probe_entry)? */
static int probe_code(const struct scan *sc, uint64_t addr)
{
	return sc->code->is_probe_entry && sc->code->is_probe_entry(sc->code->probes, addr);
}

/* May a path go on at target? */
static int enterable(struct scan *sc, uint64_t target)
{
	return target >= 4096 && !probe_code(sc, target) && visit(sc, target);
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

	if (probe_code(sc, target))
		return 1;
	c = code_at(sc, target, &avail);
	if (!c || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&sc->dec, c, avail, &zi, ops)))
		return 0;
	if (zi.mnemonic == ZYDIS_MNEMONIC_INT3)
		return 1;
	return sc->code->is_probe_entry && zi.mnemonic == ZYDIS_MNEMONIC_JMP &&
	       ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], target, &to)) &&
	       probe_code(sc, to);
}

/* The path reached a ret: its rule, 0; or -1 when its state says nothing. */
static int at_ret(const struct path *p, struct insn_rule *rule)
{
	struct val cfa = add_off(p->sp, 8);

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

enum { GO_ON, DEAD, FOUND };

/* One instruction of path p; p->ip moves to the next one. */
static int step(struct scan *sc, struct path *p, const ZydisDecodedInstruction *zi,
		const ZydisDecodedOperand *ops, struct insn_rule *rule)
{
	uint64_t next = p->ip + zi->length, target;
	const ZydisDecodedOperand *o0 = &ops[0], *o1 = &ops[1];
	int nvis = zi->operand_count_visible;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
		p->sp = add_off(p->sp, -8);
		store(p, p->sp, nvis > 0 && is_reg(o0, ZYDIS_REGISTER_RBP));
		break;
	case ZYDIS_MNEMONIC_PUSHFQ:
		p->sp = add_off(p->sp, -8);
		store(p, p->sp, 0);
		break;
	case ZYDIS_MNEMONIC_POP:
		if (nvis > 0 && is_reg(o0, ZYDIS_REGISTER_RSP)) {
			p->sp = unknown_val;
			break;
		}
		if (nvis > 0 && is_reg(o0, ZYDIS_REGISTER_RBP))
			load_bp(p, p->sp);
		p->sp = add_off(p->sp, 8);
		break;
	case ZYDIS_MNEMONIC_POPFQ:
		p->sp = add_off(p->sp, 8);
		break;
	case ZYDIS_MNEMONIC_LEAVE:
		p->sp = bp_value(p);
		load_bp(p, p->sp);
		p->sp = add_off(p->sp, 8);
		break;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (nvis == 2 && is_reg(o0, ZYDIS_REGISTER_RSP)) {
			if (o1->type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
				p->sp = unknown_val;
			else
				p->sp = add_off(p->sp, zi->mnemonic == ZYDIS_MNEMONIC_ADD ?
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
			p->sp = add_off(p->sp, -8);
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
			if (sc->code->read(sc->code->arg, next + (uint64_t)o0->mem.disp.value,
					   &target, sizeof(target)) != 0)
				return DEAD;
		} else {
			return DEAD;
		}
		if (entry_probed(sc, target))
			/* a tail call of a probed function: it returns as a ret would */
			return at_ret(p, rule) == 0 ? FOUND : DEAD;
		if (!enterable(sc, target))
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
			if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, o0, p->ip, &target)) &&
			    sc->nalts < MAX_ALTS && enterable(sc, target)) {
				sc->alts[sc->nalts] = *p;
				sc->alts[sc->nalts++].ip = target;
			}
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

/* Follow path p until a ret or a dead end. */
static int follow(struct scan *sc, struct path *p, struct insn_rule *rule)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;

	while (sc->budget-- > 0) {
		size_t avail;
		const uint8_t *c = code_at(sc, p->ip, &avail);
		int k;

		if (!c || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&sc->dec, c, avail, &zi, ops)))
			return DEAD;
		if ((k = step(sc, p, &zi, ops, rule)) != GO_ON)
			return k;
	}
	return DEAD;
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
	int k = DEAD;

	/* a call leaves nothing in a register: a return address starts as
	 * an exact pc does */
	(void)exact;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -1;
	sc->code = code;
	sc->budget = MAX_INSNS;
	ZydisDecoderInit(&sc->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	memset(&p, 0, sizeof(p));
	p.ip = pc;
	p.sp.base = B_RSP;
	p.bp = BP_SAME;
	for (;;) {
		k = follow(sc, &p, rule);
		if (k == FOUND || sc->nalts == 0 || sc->budget <= 0)
			break;
		p = sc->alts[--sc->nalts];
	}
	free(sc);
	return k == FOUND ? 0 : -1;
}

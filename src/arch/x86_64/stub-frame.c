/*
 * stub-frame.c (x86_64) - the frames of the stub mapping's code
 * (arch/stub-frame.h): memtap wrote that code, and it has no CFI.
 *
 * At each instruction, the distance from the stack pointer to the
 * frame's return address is found by following the code from its entry
 * points: the common routines (decoded once, in memtap's own copy of
 * the template: dt_common_result, dt_common_entry and every routine
 * they call) and a slot's glue and relocated entry (its bytes as probe/
 * has them: as memtap wrote them, or as an earlier memtap left them in
 * the target).  push, pop, pushfq, popfq, sub and add rsp, imm, lea
 * rsp, [rsp + disp] move it; a jcc or jmp carries it to its target;
 * after a ret or a jmp the code is unknown until a branch target or an
 * entry point; any other write to rsp makes it unknown.  Pushes and
 * pops of the callee-saved registers are followed too (keep_record
 * saves rbx and uses it).
 *
 * So a return address in a result probe's glue (the function runs,
 * called by the glue: its five pushes below the caller's return
 * address) gives the caller at rsp + 40; a pc in keep_record gives its
 * return into dt_common_result or dt_common_entry, which give the
 * glue's frame, which gives the caller: the unwinders step until they
 * are out of the stubs.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "arch/arch.h"
#include "arch/stub-frame.h"
#include "arch/stub-abi.h"

/* The callee-saved registers, in ARCH_NSAVED's order (cpu.h). */
enum { S_RBX, S_RBP, S_R12, S_R13, S_R14, S_R15 };
_Static_assert(S_R15 + 1 == ARCH_NSAVED, "each callee-saved register has its place");

/* rdi rsi rdx rcx r8, pushed by the glue (stub-cpu.h) */
#define GLUE_PUSHED 40

/* The state before an instruction: depth -1 = unknown. */
struct fstate {
	int16_t depth;			/* the return address at rsp + depth */
	int16_t push[ARCH_NSAVED];	/* depth before the register's push, -1: not saved */
};

static int saved_index(ZydisRegister r)
{
	switch (r) {
	case ZYDIS_REGISTER_RBX: return S_RBX;
	case ZYDIS_REGISTER_RBP: return S_RBP;
	case ZYDIS_REGISTER_R12: return S_R12;
	case ZYDIS_REGISTER_R13: return S_R13;
	case ZYDIS_REGISTER_R14: return S_R14;
	case ZYDIS_REGISTER_R15: return S_R15;
	default: return -1;
	}
}

static void unknown(struct fstate *f)
{
	f->depth = -1;
	for (int i = 0; i < ARCH_NSAVED; i++)
		f->push[i] = -1;
}

/* Does an explicit operand of the instruction write rsp? */
static int writes_rsp(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops)
{
	for (unsigned i = 0; i < zi->operand_count_visible; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ops[i].reg.value == ZYDIS_REGISTER_RSP &&
		    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return 1;
	return 0;
}

/* The state after the instruction at off, from cur; branch targets into pend. */
static void step(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops, size_t off,
		 size_t len, struct fstate *cur, struct fstate *pend)
{
	int64_t d = cur->depth, target = -1;
	int r;

	for (int i = 0; i < 2; i++)
		if (zi->raw.imm[i].is_relative)
			target = (int64_t)(off + zi->length) + zi->raw.imm[i].value.s;
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
		if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (r = saved_index(ops[0].reg.value)) >= 0)
			cur->push[r] = (int16_t)d;
		d += 8;
		break;
	case ZYDIS_MNEMONIC_PUSHFQ:
		d += 8;
		break;
	case ZYDIS_MNEMONIC_POP:
		if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER) {
			if (ops[0].reg.value == ZYDIS_REGISTER_RSP)
				d = -1;
			else if ((r = saved_index(ops[0].reg.value)) >= 0)
				cur->push[r] = -1;
		}
		d -= 8;
		break;
	case ZYDIS_MNEMONIC_POPFQ:
		d -= 8;
		break;
	case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_ADD:
		if (!writes_rsp(zi, ops))
			break;
		if (ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
			d = -1;
		else
			d += zi->mnemonic == ZYDIS_MNEMONIC_SUB ? ops[1].imm.value.s
								: -ops[1].imm.value.s;
		break;
	case ZYDIS_MNEMONIC_LEA:
		if (!writes_rsp(zi, ops))
			break;
		if (ops[1].mem.base != ZYDIS_REGISTER_RSP || ops[1].mem.index != ZYDIS_REGISTER_NONE)
			d = -1;
		else
			d -= ops[1].mem.disp.value;
		break;
	case ZYDIS_MNEMONIC_CALL:
		/* the callee's frame is its own: an entry point */
		if (target >= 0 && (size_t)target < len) {
			unknown(&pend[target]);
			pend[target].depth = 0;
		}
		return;
	case ZYDIS_MNEMONIC_RET:
		unknown(cur);
		return;
	case ZYDIS_MNEMONIC_JMP:
		if (target >= 0 && (size_t)target < len && pend[target].depth < 0)
			pend[target] = *cur;
		unknown(cur);
		return;
	default:
		if (zi->meta.category == ZYDIS_CATEGORY_COND_BR) {
			if (target >= 0 && (size_t)target < len && pend[target].depth < 0)
				pend[target] = *cur;
			return;
		}
		if (writes_rsp(zi, ops))
			d = -1;
		break;
	}
	if (d < 0 || d > INT16_MAX)
		unknown(cur);
	else
		cur->depth = (int16_t)d;
}

/*
 * Follow code[0..len) (at any address: only relative targets inside it
 * matter) from the entry points entries[] (the depth at each); out[off]
 * for each offset, pend[] the branch targets' states.
 */
struct entry {
	size_t off;
	int16_t depth;
};

static void follow(const uint8_t *code, size_t len, const struct entry *entries, size_t nentries,
		   struct fstate *out, struct fstate *pend)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisDecoder dec;
	struct fstate cur;

	for (size_t i = 0; i < len; i++) {
		unknown(&out[i]);
		unknown(&pend[i]);
	}
	for (size_t i = 0; i < nentries; i++)
		pend[entries[i].off].depth = entries[i].depth;
	unknown(&cur);
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t off = 0; off < len; ) {
		if (pend[off].depth >= 0)
			cur = pend[off];
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &zi, ops))) {
			unknown(&cur);
			off++;
			continue;
		}
		for (size_t k = 1; k < zi.length; k++)
			if (pend[off + k].depth >= 0) {
				/* padding decoded across an entry point: start again there */
				zi.length = (ZyanU8)k;
				unknown(&cur);
				break;
			}
		for (size_t k = 0; k < zi.length; k++)
			out[off + k] = cur;	/* the instruction's bytes: its state */
		if (cur.depth >= 0)
			step(&zi, ops, off, len, &cur, pend);
		off += zi.length;
	}
}

static void to_frame(const struct fstate *s, struct arch_stub_frame *f)
{
	f->ra_off = (uint32_t)s->depth;
	for (int i = 0; i < ARCH_NSAVED; i++)
		f->saved[i] = s->push[i] >= 0 ? s->depth - s->push[i] - 8 : -1;
}

int arch_stub_frame(const uint8_t *slot, uint64_t off, struct arch_stub_frame *f)
{
	static struct fstate tmpl[DT_TEMPLATE_MAX], pend[DT_TEMPLATE_MAX];
	static int have_tmpl;
	struct fstate st[DT_SAVED], spend[DT_SAVED];
	size_t len = (size_t)(dt_template_end - dt_template);

	if (!slot) {
		if (off >= DT_TEMPLATE_MAX)
			return -1;
		if (!have_tmpl) {
			/* dt_common_result is entered by a jmp, the glue's pushes on the stack */
			const struct entry entries[] = {
				{ (size_t)(dt_common_result - dt_template), GLUE_PUSHED },
				{ (size_t)(dt_common_entry - dt_template), 0 },
				{ (size_t)(dt_common_sync - dt_template), 0 },
				{ (size_t)(dt_common_prefilter - dt_template), 0 },
			};

			follow(dt_template, len, entries, 4, tmpl, pend);
			have_tmpl = 1;
		}
		if (off >= len || tmpl[off].depth < 0)
			return -1;
		to_frame(&tmpl[off], f);
		return 0;
	}
	if (off >= DT_SAVED)
		return -1;
	{
		/* a prefilter (mov r10d first, not a push) jumps back to its glue */
		const struct entry entries[] = { { 0, 0 }, { DT_ORIG, 0 }, { DT_PF_LEN, 0 } };

		follow(slot, DT_SAVED, entries, slot[0] == 0x41 ? 3 : 2, st, spend);
	}
	if (st[off].depth < 0)
		return -1;
	to_frame(&st[off], f);
	return 0;
}

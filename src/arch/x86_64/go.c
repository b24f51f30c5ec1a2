/*
 * go.c (x86_64) - the CPU's part of a Go program's runtime (arch/go.h):
 * its offsets read from runtime.systemstack's amd64 code, the return
 * address of the switch functions' call on g0, the running g in TLS,
 * and the return address a call pushed at a goroutine's saved sp.
 *
 * runtime.systemstack is written alike in every Go since 1.5
 * (asm_amd64.s):
 *
 *	MOVQ	g(CX), AX		load from %fs: tls_g
 *	MOVQ	g_m(AX), BX		g_m
 *	CMPQ	AX, m_gsignal(BX)
 *	MOVQ	m_g0(BX), DX		m_g0
 *	CMPQ	AX, m_curg(BX)		the last compare with m: m_curg
 *	...
 *	MOVQ	(g_sched+gobuf_sp)(DX), BX or SP	g_sched
 *	...
 *	CALL	DI			the end
 *
 * so a stripped program (-ldflags='-s -w') is read as well as one with
 * DWARF.  g is at fs_base + tls_g in every Go thread (runtime·settls),
 * and a goroutine's switch is made from a function with no frame of its
 * own (systemstack and asmcgocall, $0; morestack, before the function
 * that called it made its frame): the return address into its caller
 * is the word at the saved sp, the caller's sp 8 above.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "arch/go.h"

/* Instructions of a runtime function read at most. */
#define DECODE_MAX 64
/* Offsets beyond this in g or m are not believed. */
#define FIELD_MAX 4096

/* What a register holds, as runtime.systemstack goes. */
enum held { H_NONE, H_CONST, H_G, H_M, H_G0 };

static int gpr(ZydisRegister r)
{
	return r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15 ? (int)(r - ZYDIS_REGISTER_RAX) : -1;
}

struct decode {
	enum held held[16];
	int64_t konst[16];
	int64_t tls_g, g_m, m_g0, m_curg, g_sched;
	int tls_ok;
};

/* A memory operand [base + disp] with a base register of kind h: its disp, else -1. */
static int64_t field(const struct decode *st, const ZydisDecodedOperand *op, enum held h)
{
	int b;

	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.index != ZYDIS_REGISTER_NONE ||
	    op->mem.segment == ZYDIS_REGISTER_FS || (b = gpr(op->mem.base)) < 0 || st->held[b] != h ||
	    op->mem.disp.value < 0 || op->mem.disp.value >= FIELD_MAX)
		return -1;
	return op->mem.disp.value;
}

/* MOV reg64, src: what reg holds after it. */
static void mov(struct decode *st, int dst, const ZydisDecodedOperand *src)
{
	int64_t off;
	int b;

	st->held[dst] = H_NONE;
	if (src->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		st->held[dst] = H_CONST;
		st->konst[dst] = src->imm.value.s;
	} else if (src->type == ZYDIS_OPERAND_TYPE_REGISTER && (b = gpr(src->reg.value)) >= 0) {
		st->held[dst] = st->held[b];
		st->konst[dst] = st->konst[b];
	} else if (src->type != ZYDIS_OPERAND_TYPE_MEMORY) {
		return;
	} else if (src->mem.segment == ZYDIS_REGISTER_FS && src->mem.index == ZYDIS_REGISTER_NONE) {
		/* get_tls + g(CX): %fs:disp, or %fs:(reg) with the offset in reg */
		b = gpr(src->mem.base);
		if (src->mem.base != ZYDIS_REGISTER_NONE && (b < 0 || st->held[b] != H_CONST))
			return;
		st->tls_g = src->mem.disp.value + (b >= 0 ? st->konst[b] : 0);
		st->tls_ok = 1;
		st->held[dst] = H_G;
	} else if ((off = field(st, src, H_G)) >= 0) {
		if (st->g_m < 0)
			st->g_m = off;
		if (st->g_m == off)
			st->held[dst] = H_M;
	} else if ((off = field(st, src, H_M)) >= 0) {
		if (st->m_g0 < 0)
			st->m_g0 = off;
		if (st->m_g0 == off)
			st->held[dst] = H_G0;
	} else if ((off = field(st, src, H_G0)) >= 0 && st->g_sched < 0) {
		st->g_sched = off;	/* (g_sched+gobuf_sp)(DX): gobuf_sp is 0 */
	}
}

int arch_go_decode_systemstack(const uint8_t *code, size_t len, struct arch_go_offsets *off)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct decode st;
	size_t at = 0;

	memset(&st, 0, sizeof(st));
	st.g_m = st.m_g0 = st.m_curg = st.g_sched = -1;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (int n = 0; n < DECODE_MAX && at < len; n++) {
		int dst;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + at, len - at, &zi, ops)))
			return -1;
		at += zi.length;
		if (zi.mnemonic == ZYDIS_MNEMONIC_CALL && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
			break;	/* CALL DI: the function, on g0 */
		if (zi.mnemonic == ZYDIS_MNEMONIC_RET || zi.mnemonic == ZYDIS_MNEMONIC_JMP)
			break;
		if (zi.mnemonic == ZYDIS_MNEMONIC_CMP && zi.operand_count_visible == 2) {
			for (int i = 0; i < 2; i++) {
				int other = gpr(ops[1 - i].type == ZYDIS_OPERAND_TYPE_REGISTER ?
						ops[1 - i].reg.value : ZYDIS_REGISTER_NONE);
				int64_t f = field(&st, &ops[i], H_M);

				if (f >= 0 && other >= 0 && st.held[other] == H_G)
					st.m_curg = f;	/* the last one: CMPQ AX, m_curg(BX) */
			}
			continue;
		}
		if (zi.mnemonic == ZYDIS_MNEMONIC_CALL)
			continue;	/* gosave_systemstack_switch keeps them */
		if (zi.mnemonic == ZYDIS_MNEMONIC_MOV && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ops[0].size == 64 && (dst = gpr(ops[0].reg.value)) >= 0) {
			mov(&st, dst, &ops[1]);
			continue;
		}
		/* anything else that writes a register: unknown after it */
		for (unsigned i = 0; i < zi.operand_count; i++)
			if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
			    (dst = gpr(ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
									ops[i].reg.value))) >= 0)
				st.held[dst] = H_NONE;
	}
	if (!st.tls_ok || st.g_m < 0 || st.m_g0 < 0 || st.m_curg < 0 || st.g_sched < 0 ||
	    st.tls_g < -4096 || st.tls_g > 4096)
		return -1;
	off->tls_g = st.tls_g;
	off->g_m = (uint32_t)st.g_m;
	off->m_g0 = (uint32_t)st.m_g0;
	off->m_curg = (uint32_t)st.m_curg;
	off->g_sched = (uint32_t)st.g_sched;
	return 0;
}

/*
 * The first call after the first instruction that writes %rsp other
 * than by a push, a pop or a call (MOVQ (g_sched+gobuf_sp)(BX), SP, or
 * MOVQ BX, SP).
 */
uint64_t arch_go_switch_return(const uint8_t *code, size_t len, uint64_t start)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t off = 0;
	int switched = 0;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (int n = 0; n < DECODE_MAX && off < len; n++) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &zi, ops)))
			return 0;
		off += zi.length;
		if (zi.mnemonic == ZYDIS_MNEMONIC_CALL) {
			if (switched)
				return start + off;
			continue;
		}
		if (zi.mnemonic == ZYDIS_MNEMONIC_PUSH || zi.mnemonic == ZYDIS_MNEMONIC_POP)
			continue;
		for (unsigned i = 0; i < zi.operand_count_visible; i++)
			if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    ops[i].reg.value == ZYDIS_REGISTER_RSP &&
			    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
				switched = 1;
	}
	return 0;
}

/* g at fs_base + tls_g; no fs_base yet (no TLS set up): none. */
int arch_go_running_g(const arch_regs_t *r, const struct arch_go_offsets *off,
		      arch_go_read_fn *read, void *ctx, uint64_t *g)
{
	uint64_t tp = arch_tp(r);

	if (!tp || read(ctx, tp + (uint64_t)off->tls_g, g, sizeof(*g)) < 0)
		return -1;
	return 0;
}

/* The return address a call pushed at sp, popped: sp + 8. */
static int pushed_return(uint64_t sp, arch_go_read_fn *read, void *ctx, uint64_t *ra,
			 uint64_t *caller_sp)
{
	if (read(ctx, sp, ra, sizeof(*ra)) < 0)
		return -1;
	*caller_sp = sp + 8;
	return 0;
}

/*
 * systemstack and asmcgocall have no frame ($0): their return address
 * at sched.sp, and sched.bp their caller's.
 */
int arch_go_switch_caller(const struct arch_go_sched *sched, arch_go_read_fn *read, void *ctx,
			  uint64_t *ra, uint64_t *sp, uint64_t *fp)
{
	*fp = sched->bp;
	return pushed_return(sched->sp, read, ctx, ra, sp);
}

/* sched.sp is the function's at its entry: its return address there. */
int arch_go_morestack_caller(const struct arch_go_sched *sched, arch_go_read_fn *read,
			     void *ctx, uint64_t *ra, uint64_t *sp)
{
	return pushed_return(sched->sp, read, ctx, ra, sp);
}

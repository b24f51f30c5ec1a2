/*
 * goruntime.c - a Go program's runtime, from its ELF file: the
 * functions that switch to g0 and the offsets that lead from the
 * running g to the goroutine that switched (goruntime.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include <Zydis/Zydis.h>

#include "stack/gopclntab.h"
#include "stack/goruntime.h"
#include "util/xmalloc.h"

/* Instructions of runtime.systemstack read at most. */
#define DECODE_MAX 64
/* Offsets beyond this in g or m are not believed. */
#define FIELD_MAX 4096

/* The names of the switch functions (GO_SW_*), then systemstack_switch. */
static const char *const names[GO_NSWITCH + 1] = {
	[GO_SW_SYSTEMSTACK] = "runtime.systemstack",
	[GO_SW_MCALL] = "runtime.mcall",
	[GO_SW_MORESTACK] = "runtime.morestack",
	[GO_SW_ASMCGOCALL] = "runtime.asmcgocall",
	[GO_NSWITCH] = "runtime.systemstack_switch",
};

/* The bytes of file address [addr, addr + len) of elf, or NULL. */
static const unsigned char *code_at(Elf *elf, uint64_t addr, size_t len)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz ||
		    len > ph.p_filesz - (addr - ph.p_vaddr))
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (addr - ph.p_vaddr)), len,
					 ELF_T_BYTE);
		return d && d->d_buf && d->d_size == len ? d->d_buf : NULL;
	}
	return NULL;
}

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

/* Read runtime.systemstack's code (see goruntime.h); 0, or -1. */
static int decode(const unsigned char *code, size_t len, struct go_runtime *rt)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct decode st;
	size_t off = 0;

	memset(&st, 0, sizeof(st));
	st.g_m = st.m_g0 = st.m_curg = st.g_sched = -1;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (int n = 0; n < DECODE_MAX && off < len; n++) {
		int dst;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &zi, ops)))
			return -1;
		off += zi.length;
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
	    st.m_curg == st.m_g0 || st.g_sched == st.g_m || st.g_m < GO_G_STACK_HI + 8 ||
	    st.g_sched < GO_G_STACK_HI + 8 || st.tls_g < -4096 || st.tls_g > 4096)
		return -1;
	rt->tls_g = st.tls_g;
	rt->g_m = (uint32_t)st.g_m;
	rt->m_g0 = (uint32_t)st.m_g0;
	rt->m_curg = (uint32_t)st.m_curg;
	rt->g_sched = (uint32_t)st.g_sched;
	return 0;
}

/*
 * The return address of the call a switch function makes on g0: the
 * first call after the first instruction that writes %rsp other than
 * by a push, a pop or a call (MOVQ (g_sched+gobuf_sp)(BX), SP, or MOVQ
 * BX, SP).  Its file address, or 0.
 */
static uint64_t switch_return(const unsigned char *code, size_t len, uint64_t start)
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

/*
 * The switch function named name (i): its range and return address.
 * Go 1.17 on, an assembly function called from Go code has a wrapper
 * of the same name in the table, which only calls it: the one that
 * switches is taken.  0, or -1 when none does.
 */
static int find_switch(Elf *elf, const struct gopcln *t, int i, struct go_runtime *rt)
{
	uint64_t next = 0, start, end;

	while (gopcln_next_func(t, names[i], &next, &start, &end) == 0) {
		const unsigned char *code = code_at(elf, start, end - start);
		uint64_t ra = code ? switch_return(code, end - start, start) : 0;

		if (!ra)
			continue;
		rt->sw[i].start = start;
		rt->sw[i].end = end;
		rt->sw_ret[i] = ra;
		return 0;
	}
	return -1;
}

struct go_runtime *go_runtime_from_elf(Elf *elf, const char **why)
{
	struct go_runtime rt;
	struct gopcln *t;
	const unsigned char *code;
	uint64_t next = 0;
	int ok;

	*why = NULL;
	if (!elf || !gopcln_elf_is_go(elf))
		return NULL;
	/* a table not read is said by the symbolizer (symbolize-go.c) */
	t = gopcln_from_elf(elf, why);
	*why = NULL;
	if (!t)
		return NULL;
	memset(&rt, 0, sizeof(rt));
	ok = gopcln_next_func(t, names[GO_NSWITCH], &next, &rt.sw_pc.start, &rt.sw_pc.end) == 0;
	for (int i = 0; ok && i < GO_NSWITCH; i++)
		if (find_switch(elf, t, i, &rt) < 0 && i == GO_SW_SYSTEMSTACK)
			ok = 0;
	gopcln_free(t);
	if (!ok) {
		*why = "no runtime.systemstack_switch, or no runtime.systemstack that switches";
		return NULL;
	}
	code = code_at(elf, rt.sw[GO_SW_SYSTEMSTACK].start,
		       rt.sw[GO_SW_SYSTEMSTACK].end - rt.sw[GO_SW_SYSTEMSTACK].start);
	if (!code || decode(code, rt.sw[GO_SW_SYSTEMSTACK].end - rt.sw[GO_SW_SYSTEMSTACK].start,
			    &rt) < 0) {
		*why = "runtime.systemstack's code not understood";
		return NULL;
	}
	struct go_runtime *r = xmalloc(sizeof(*r));

	*r = rt;
	return r;
}

void go_runtime_free(struct go_runtime *rt)
{
	free(rt);
}

/*
 * bp_arch.c (x86_64) - decode and relocate the instruction under a
 * breakpoint, with Zydis (libzydis 4).
 *
 * A copied instruction keeps its length: a rip-relative displacement is
 * relative to the end of the instruction, so moving it from addr to slot
 * only adds (addr - slot) to the displacement.  Conditional branches are
 * re-encoded as jcc rel32 so that their target stays reachable.
 *
 * Also what a hit does without a slot (endbr64, jmp, call emulated) and
 * the return probes' return slot, which is the stack word at rsp.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "bp_arch.h"

int bp_arch_decode(uint64_t addr, const uint8_t *buf, size_t n, struct bp_insn *insn)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisDecoder dec;

	memset(insn, 0, sizeof(*insn));
	if (n == 0)
		return -EINVAL;
	if (buf[0] == BP_ARCH_TRAP_BYTE)
		return -EBUSY;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, buf, n, &zi, ops)))
		return -EINVAL;
	insn->len = zi.length;
	memcpy(insn->bytes, buf, zi.length);
	insn->kind = BPI_DISPLACE;

	switch (zi.mnemonic) {
	case ZYDIS_MNEMONIC_ENDBR64:
		insn->kind = BPI_ENDBR;
		return 0;
	case ZYDIS_MNEMONIC_INT3:
		return -EBUSY;
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_XBEGIN:
		return -ENOTSUP;
	default:
		break;
	}

	/* relative branches: the immediate is relative to the next insn */
	for (int i = 0; i < 2; i++) {
		if (!zi.raw.imm[i].is_relative)
			continue;
		insn->target = addr + zi.length + (uint64_t)zi.raw.imm[i].value.s;
		if (zi.meta.category == ZYDIS_CATEGORY_UNCOND_BR) {
			insn->kind = BPI_JMP;
			return 0;
		}
		if (zi.meta.category == ZYDIS_CATEGORY_CALL) {
			insn->kind = BPI_CALL;
			return 0;
		}
		if (zi.meta.category == ZYDIS_CATEGORY_COND_BR) {
			insn->kind = BPI_JCC;
			insn->cond = zi.opcode & 0x0f;	/* 7x rel8 and 0f 8x rel32 */
			return 0;
		}
		return -ENOTSUP;
	}
	/* an indirect call would leave a return address into the slot */
	if (zi.meta.category == ZYDIS_CATEGORY_CALL)
		return -ENOTSUP;

	for (unsigned i = 0; i < zi.operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    ops[i].mem.base != ZYDIS_REGISTER_RIP)
			continue;
		if (zi.raw.disp.size != 32)
			return -ENOTSUP;
		insn->riprel = 1;
		insn->disp_off = zi.raw.disp.offset;
		insn->target = addr + zi.length + (uint64_t)zi.raw.disp.value;
		break;
	}
	return 0;
}

static void put_rel32(uint8_t *p, int64_t rel)
{
	int32_t v = (int32_t)rel;

	memcpy(p, &v, sizeof(v));
}

int bp_arch_relocate(const struct bp_insn *insn, uint64_t addr, uint64_t slot,
		     uint8_t *code, unsigned *resume_off)
{
	unsigned n;

	memset(code, BP_ARCH_TRAP_BYTE, BP_ARCH_SLOT_SIZE);
	if (insn->kind == BPI_JCC) {
		if (!bp_arch_in_rel32(slot + 6, insn->target))
			return -ERANGE;
		code[0] = 0x0f;
		code[1] = 0x80 | insn->cond;
		put_rel32(code + 2, (int64_t)(insn->target - (slot + 6)));
		n = 6;
	} else if (insn->kind == BPI_DISPLACE) {
		memcpy(code, insn->bytes, insn->len);
		n = insn->len;
		if (insn->riprel) {
			int32_t disp;
			int64_t nd;

			if (!bp_arch_in_rel32(slot + n, insn->target))
				return -ERANGE;
			memcpy(&disp, insn->bytes + insn->disp_off, sizeof(disp));
			nd = (int64_t)disp + (int64_t)(addr - slot);
			put_rel32(code + insn->disp_off, nd);
		}
	} else {
		return -EINVAL;
	}
	/* jmp rel32 back to the instruction after the original one */
	if (!bp_arch_in_rel32(slot + n + 5, addr + insn->len))
		return -ERANGE;
	*resume_off = n;
	code[n] = 0xe9;
	put_rel32(code + n + 1, (int64_t)(addr + insn->len - (slot + n + 5)));
	return (int)(n + 5);
}

int arch_bp_emulate(const struct bp_insn *insn, uint64_t addr, arch_regs_t *regs,
		    arch_mem_write_fn write, void *ctx)
{
	switch (insn->kind) {
	case BPI_ENDBR:
		arch_set_pc(regs, addr + insn->len);
		return 0;
	case BPI_JMP:
		arch_set_pc(regs, insn->target);
		return 0;
	case BPI_CALL: {
		uint64_t ret = addr + insn->len;
		int err = write(ctx, arch_sp(regs) - 8, &ret, sizeof(ret));

		if (err < 0)
			return err;
		arch_set_sp(regs, arch_sp(regs) - 8);
		arch_set_pc(regs, insn->target);
		return 0;
	}
	case BPI_DISPLACE:
	case BPI_JCC:
		break;
	}
	return -EINVAL;
}

uint64_t arch_caller_at_entry(const arch_regs_t *regs, arch_mem_read_fn read, void *ctx)
{
	uint64_t ra = 0;

	read(ctx, arch_sp(regs), &ra, sizeof(ra));
	return ra;
}

int arch_ret_hook(arch_regs_t *regs, uint64_t tramp, arch_mem_write_fn write, void *ctx)
{
	return write(ctx, arch_ret_slot_at_entry(regs), &tramp, sizeof(tramp));
}

int arch_ret_hook_refused(pid_t pid)
{
	char path[64], line[256];
	int on = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_features:", 20) == 0 && strstr(line, "shstk"))
			on = 1;
	fclose(f);
	return on;
}

int arch_bp_supported(void)
{
	return 1;
}

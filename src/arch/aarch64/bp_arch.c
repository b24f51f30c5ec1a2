/*
 * bp_arch.c (aarch64) - the instruction under a breakpoint: decoded by
 * insn.c, moved into its slot by reloc.c, or emulated at the hit; and
 * the return probes' hook, which is x30 (see bp_arch.h).
 *
 * A slot holds what a64_relocate() makes of the word for the slot's
 * address, then a B back to addr + 4, then BRK words.  The branches of
 * a relocated conditional branch are direct (A64_RELOC_BTI: never an
 * indirect branch into code that may be in a PROT_BTI page); the slot
 * is chosen within a B's reach of their target, so they always are.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bp_arch.h"

int bp_arch_decode(uint64_t addr, const uint8_t *buf, size_t n, struct bp_insn *insn)
{
	int err;

	memset(insn, 0, sizeof(*insn));
	if (n < A64_INSN_LEN)
		return -EINVAL;
	insn->len = A64_INSN_LEN;
	memcpy(insn->bytes, buf, A64_INSN_LEN);
	err = a64_decode(a64_get(buf), addr, &insn->a);
	if (err < 0)
		return err;
	insn->target = insn->a.target;
	switch (insn->a.kind) {
	case A64_PAD:
		/* PACIASP and PACIBSP sign x30: run after the hook, in the slot */
		insn->kind = (insn->a.word == 0xd503233f || insn->a.word == 0xd503237f) ?
			     BPI_DISPLACE : BPI_PAD;
		return 0;
	case A64_B:
		insn->kind = BPI_JMP;
		return 0;
	case A64_BL:
		insn->kind = BPI_CALL;
		return 0;
	case A64_BCOND:
	case A64_CB:
	case A64_TB:
		insn->kind = BPI_JCC;
		return 0;
	case A64_BLR:
		if (insn->a.reg == 30)
			return -ENOTSUP;	/* x30 = pc + 4 is set before Xn is read */
		break;
	default:
		break;
	}
	insn->kind = BPI_DISPLACE;
	return 0;
}

int bp_arch_relocate(const struct bp_insn *insn, uint64_t addr, uint64_t slot,
		     uint8_t *code, unsigned *resume_off)
{
	uint32_t w[BP_ARCH_SLOT_SIZE / 4], back;
	int n;

	arch_bp_fill(code, BP_ARCH_SLOT_SIZE);
	if (!bp_arch_needs_slot(insn) || (slot & 3) || (addr & 3))
		return -EINVAL;
	n = a64_relocate(&insn->a, slot, A64_RELOC_BTI, w, sizeof(w) - A64_INSN_LEN);
	if (n < 0)
		return n == -ENOSPC ? -ERANGE : n;
	if (a64_enc_b(slot + (unsigned)n, addr + insn->len, &back) < 0)
		return -ERANGE;
	w[n / 4] = back;
	for (int i = 0; i <= n / 4; i++)
		a64_put(code + 4 * i, w[i]);
	*resume_off = (unsigned)n;
	return n + A64_INSN_LEN;
}

int arch_bp_emulate(const struct bp_insn *insn, uint64_t addr, arch_regs_t *regs,
		    arch_mem_write_fn write, void *ctx)
{
	(void)write, (void)ctx;
	switch (insn->kind) {
	case BPI_PAD:
		arch_set_pc(regs, addr + insn->len);
		break;
	case BPI_JMP:
		arch_set_pc(regs, insn->target);
		break;
	case BPI_CALL:
		regs->r.regs[30] = addr + insn->len;
		arch_set_pc(regs, insn->target);
		break;
	case BPI_DISPLACE:
	case BPI_JCC:
	default:
		return -EINVAL;
	}
	regs->r.pstate &= ~A64_PSTATE_BTYPE;
	return 0;
}

uint64_t arch_caller_at_entry(const arch_regs_t *regs, arch_mem_read_fn read, void *ctx)
{
	(void)read, (void)ctx;
	return regs->r.regs[30];
}

int arch_ret_hook(arch_regs_t *regs, uint64_t tramp, arch_mem_write_fn write, void *ctx)
{
	(void)write, (void)ctx;
	regs->r.regs[30] = tramp;
	return 0;
}

int a64_bp_smaps_shadow_stack(const char *path)
{
	char line[512];
	int on = 0, at_start = 1;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (!on && fgets(line, sizeof(line), f)) {
		/* a long line (a mapped file's name is the target's) comes in pieces */
		int start = at_start;
		char *tok, *save;

		at_start = strchr(line, '\n') != NULL;
		if (!start || strncmp(line, "VmFlags:", 8) != 0)
			continue;
		for (tok = strtok_r(line + 8, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			if (strcmp(tok, "ss") == 0)
				on = 1;
	}
	fclose(f);
	return on;
}

int arch_ret_hook_refused(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	return a64_bp_smaps_shadow_stack(path);
}

int arch_bp_supported(void)
{
	return 1;
}

/* The routine of arch_ret_lookup_page() (bp_arch.h), its table after it. */
static const uint32_t ret_lookup_code[] = {
	0x10000110,	/* adr  x16, table (pc + 32) */
	0xf8410611,	/* ldr  x17, [x16], #16 */
	0xb40000b1,	/* cbz  x17, 2f */
	0xeb3163ff,	/* cmp  sp, x17 */
	0x54ffffa1,	/* b.ne 1b */
	0xf85f8211,	/* ldur x17, [x16, #-8] */
	0xd65f0220,	/* ret  x17 */
	A64_BRK0,	/* 2: brk #0 */
};
#define RET_LOOKUP_TABLE sizeof(ret_lookup_code)

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int arch_ret_lookup_page(uint8_t *page, size_t len, const uint64_t (*pairs)[2], size_t n)
{
	size_t i;

	if (len < RET_LOOKUP_TABLE || (len - RET_LOOKUP_TABLE) / 16 < n + 1)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		if (!pairs[i][0])
			return -EINVAL;
	memset(page, 0, len);
	for (i = 0; i < sizeof(ret_lookup_code) / 4; i++)
		a64_put(page + 4 * i, ret_lookup_code[i]);
	for (i = 0; i < n; i++) {
		put64(page + RET_LOOKUP_TABLE + 16 * i, pairs[i][0]);
		put64(page + RET_LOOKUP_TABLE + 16 * i + 8, pairs[i][1]);
	}
	return (int)n;
}

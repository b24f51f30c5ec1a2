/*
 * patch.c - plan, relocate and write a `jmp rel32` detour at a function
 * entry, reusing bp_arch.c's decoder and relocator for each displaced
 * instruction (the relocations chain: each one's jmp back is overwritten
 * by the next instruction, the last one's stays).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "patch.h"

/* Does a relative branch of the function land inside (site, site + len)? */
static int branch_into(uint64_t func, const uint8_t *buf, size_t size,
		       uint64_t site, unsigned len, uint64_t *from)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	size_t off = 0;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (off < size) {
		uint64_t at = func + off;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf + off,
								size - off, &zi))) {
			off++;	/* padding or data: resynchronise */
			continue;
		}
		for (int i = 0; i < 2; i++) {
			uint64_t t;

			if (!zi.raw.imm[i].is_relative)
				continue;
			t = at + zi.length + (uint64_t)zi.raw.imm[i].value.s;
			if (t > site && t < site + len) {
				*from = at;
				return 1;
			}
		}
		off += zi.length;
	}
	return 0;
}

int patch_plan(uint64_t func, const uint8_t *buf, size_t size, struct patch *p,
	       const char **why)
{
	size_t off = 0;
	uint64_t from;

	memset(p, 0, sizeof(*p));
	p->func = func;
	if (size >= 4 && buf[0] == 0xf3 && buf[1] == 0x0f && buf[2] == 0x1e && buf[3] == 0xfa) {
		/* indirect branches (the PLT's jmp *GOT) land here under IBT */
		p->endbr = 1;
		off = 4;
	}
	p->site = func + off;
	while (p->len < PATCH_JMP_LEN) {
		struct bp_insn *in = &p->insns[p->ninsns];
		int err;

		if (p->ninsns == PATCH_MAX_INSNS || off >= size) {
			*why = "function too short";
			return -ENOTSUP;
		}
		err = bp_arch_decode(func + off, buf + off, size - off, in);
		if (err < 0 || !bp_arch_needs_slot(in)) {
			*why = err == -EBUSY ? "an int3 in the entry" :
				"an entry instruction that cannot be relocated";
			return -ENOTSUP;
		}
		p->len += in->len;
		off += in->len;
		p->ninsns++;
	}
	memcpy(p->orig, buf + (p->site - func), p->len);
	if (branch_into(func, buf, size, p->site, p->len, &from)) {
		*why = "a branch into the displaced bytes";
		return -ENOTSUP;
	}
	return 0;
}

int patch_relocate(const struct patch *p, uint64_t at, uint8_t *code)
{
	uint8_t tmp[BP_ARCH_SLOT_SIZE];
	uint64_t addr = p->site;
	unsigned used = 0, resume;

	memset(code, BP_ARCH_TRAP_BYTE, PATCH_ORIG_ROOM);
	for (unsigned i = 0; i < p->ninsns; i++) {
		int n = bp_arch_relocate(&p->insns[i], addr, at + used, tmp, &resume);

		if (n < 0)
			return n;
		if (used + (unsigned)n > PATCH_ORIG_ROOM)
			return -ENOSPC;
		memcpy(code + used, tmp, (size_t)n);
		used += resume;	/* the next one overwrites this jmp back */
		addr += p->insns[i].len;
	}
	return 0;
}

int patch_jmp(const struct patch *p, uint64_t stub, uint8_t *bytes)
{
	int32_t rel;

	if (!bp_arch_in_rel32(p->site + PATCH_JMP_LEN, stub))
		return -ERANGE;
	rel = (int32_t)(int64_t)(stub - (p->site + PATCH_JMP_LEN));
	memset(bytes, BP_ARCH_TRAP_BYTE, p->len);
	bytes[0] = 0xe9;
	memcpy(bytes + 1, &rel, sizeof(rel));
	return 0;
}

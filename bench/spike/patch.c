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

static int range_free(const struct procfs_map *r, size_t n, uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (a < r[i].end && a + len > r[i].start)
			return 0;
		/* leave the heap 1 GiB to grow into, as breakpoint.c does */
		if (a + len > r[i].end && a < r[i].end + (1ULL << 30) && r[i].path &&
		    strstr(r[i].path, "[heap]"))
			return 0;
	}
	return a >= 0x10000;
}

uint64_t patch_find_hole(const struct procfs_map *r, size_t n, uint64_t lo,
			 uint64_t hi, uint64_t len)
{
	const uint64_t reach = 0x7fff0000ULL - 2 * len;

	for (size_t k = n; k-- > 0;) {
		uint64_t a = r[k].start - len;

		if (r[k].start > lo || r[k].start < len)
			continue;
		if (hi - a > reach)
			break;
		if (range_free(r, n, a, len))
			return a;
	}
	for (size_t k = 0; k < n; k++) {
		uint64_t a = r[k].end;

		if (a < hi)
			continue;
		if (a + len - lo > reach)
			break;
		if (range_free(r, n, a, len))
			return a;
	}
	return 0;
}

/*
 * detour.c (x86_64) - where a detour goes and what it displaces (see
 * arch/detour-plan.h).
 *
 * Planning: the instructions displaced by the 5-byte `jmp rel32` are
 * decoded by bp_arch_decode() (endbr64 stays in place: the jmp goes
 * after it, where indirect branches under IBT still land on it); each
 * must be one bp_arch_relocate() can move (rip-relative operands and
 * relative jcc are fixed up; a relative call is refused).  A relative
 * jmp ends the plan (musl's malloc, free, realloc and memalign are one
 * `jmp rel32` to the code that does the work): nothing after it runs
 * from the entry, and the bytes up to the patch's end, if any, must be
 * the function's own (or its nop padding, arch_detour_padded_size()).  The
 * whole function (st_size) is then decoded for a relative branch into
 * bytes 1.. of the patch: such a branch would land inside the jmp.
 *
 * Relocation chains bp_arch_relocate()'s output: each instruction's jmp
 * back is overwritten by the next one, the last one's stays and
 * continues the function after the displaced bytes.  A jmp that ends
 * the plan becomes a jmp to the same target: rel32 when it reaches,
 * else jmp qword [rip] and the target's address after it.
 *
 * The glue (stub-cpu.h) saves the argument registers, calls the
 * function for a result probe, and goes to the stub routines; the patch
 * is a jmp rel32 to the slot, which arch_patched_target() recognises
 * again in the entry of a process an earlier memtap left.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "arch/arch.h"
#include "arch/stub-abi.h"
#include "arch/detour-plan.h"

size_t arch_landing_pad(const uint8_t *buf, size_t n)
{
	return n >= 4 && buf[0] == 0xf3 && buf[1] == 0x0f && buf[2] == 0x1e && buf[3] == 0xfa ?
		4 : 0;	/* endbr64 */
}

/* Does a relative branch of the function land inside (site, site + len)? */
static int branch_into(uint64_t func, const uint8_t *buf, size_t size, uint64_t site,
		       unsigned len)
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
			if (t > site && t < site + len)
				return 1;
		}
		off += zi.length;
	}
	return 0;
}

size_t arch_syscall_sites(uint64_t func, const uint8_t *buf, size_t size, uint64_t *sites,
			  size_t max)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	size_t off = 0, n = 0;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (off < size) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf + off,
								size - off, &zi))) {
			off++;	/* padding or data: resynchronise */
			continue;
		}
		if (zi.mnemonic == ZYDIS_MNEMONIC_SYSCALL) {
			if (n < max)
				sites[n] = func + off;
			n++;
		}
		off += zi.length;
	}
	return n;
}

int arch_detour_plan(uint64_t func, const uint8_t *buf, size_t size, struct plan *p,
		const char **why)
{
	size_t off = arch_landing_pad(buf, size);

	memset(p, 0, sizeof(*p));
	p->site = func + off;
	while (p->len < ARCH_PATCH_LEN) {
		struct bp_insn *in = &p->cpu.insn[p->ninsns];
		int err;

		if (p->ninsns == ARCH_PLAN_MAX_INSNS || off >= size) {
			*why = "the function is too short";
			return -ENOTSUP;
		}
		err = bp_arch_decode(func + off, buf + off, size - off, in);
		if (err == 0 && in->kind == BPI_JMP) {
			/* the last one: the bytes after it up to the patch's end never run */
			off += in->len;
			p->ninsns++;
			p->tail = 1;
			if (p->len + in->len < ARCH_PATCH_LEN &&
			    p->site + ARCH_PATCH_LEN > func + size) {
				*why = "the function is too short";
				return -ENOTSUP;
			}
			p->len = p->len + in->len < ARCH_PATCH_LEN ? ARCH_PATCH_LEN : p->len + in->len;
			break;
		}
		if (err < 0 || !bp_arch_needs_slot(in)) {
			*why = err == -EBUSY ? "an int3 in its entry" :
				"an entry instruction that cannot be relocated";
			return -ENOTSUP;
		}
		p->len += in->len;
		off += in->len;
		p->ninsns++;
	}
	if (branch_into(func, buf, size, p->site, p->len)) {
		*why = "a branch into its first instructions";
		return -ENOTSUP;
	}
	return 0;
}

size_t arch_detour_padded_size(uint64_t func, const uint8_t *buf, size_t got, size_t size)
{
	uint64_t end = (func + size + 15) & ~(uint64_t)15;
	size_t off = size, room = ARCH_PATCH_LEN + arch_landing_pad(buf, size);	/* it stays */
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;

	if (!size || size >= room || end - func < room || end - func > got)
		return size;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	while (func + off < end) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf + off,
								(size_t)(end - func) - off, &zi)) ||
		    zi.mnemonic != ZYDIS_MNEMONIC_NOP)
			return size;
		off += zi.length;
	}
	return off;
}

#define TAIL_JMP_MAX 14

/* At code, for address at: a jmp to target (rel32, else through [rip]); its length. */
static unsigned tail_jmp(uint8_t *code, uint64_t at, uint64_t target)
{
	int32_t rel = (int32_t)(int64_t)(target - (at + ARCH_PATCH_LEN));

	if (arch_in_reach(at + ARCH_PATCH_LEN, target)) {
		code[0] = 0xe9;
		memcpy(code + 1, &rel, sizeof(rel));
		return ARCH_PATCH_LEN;
	}
	code[0] = 0xff;		/* jmp qword [rip + 0] */
	code[1] = 0x25;
	memset(code + 2, 0, 4);
	memcpy(code + 6, &target, sizeof(target));
	return TAIL_JMP_MAX;
}

/* The relocated entry at address at, into code[DT_ORIG_ROOM]. */
int arch_detour_relocate(struct plan *p, uint64_t at, uint8_t *code)
{
	uint8_t tmp[BP_ARCH_SLOT_SIZE];
	uint64_t addr = p->site;
	unsigned used = 0, resume;

	arch_bp_fill(code, DT_ORIG_ROOM);
	for (unsigned i = 0; i < p->ninsns; i++) {
		int n;

		if (p->cpu.insn[i].kind == BPI_JMP) {
			/* the last: no jmp back */
			if (used + TAIL_JMP_MAX > DT_ORIG_ROOM)
				return -ENOSPC;
			p->moved[i] = used;
			used += tail_jmp(code + used, at + used, p->cpu.insn[i].target);
			p->moved[i + 1] = used;
			return 0;
		}
		n = bp_arch_relocate(&p->cpu.insn[i], addr, at + used, tmp, &resume);

		if (n < 0)
			return n;
		if (used + (unsigned)n > DT_ORIG_ROOM)
			return -ENOSPC;
		memcpy(code + used, tmp, (size_t)n);
		p->moved[i] = used;
		used += resume;
		addr += p->cpu.insn[i].len;
	}
	p->moved[p->ninsns] = used;
	return 0;
}

int arch_detour_moved_pc(const struct plan *p, uint64_t at, uint64_t pc, uint64_t *to)
{
	uint64_t addr = p->site;

	for (unsigned i = 0; i <= p->ninsns; i++) {
		if (i == p->ninsns && p->tail) {
			/* after a jmp that ends the plan: no instruction of its path */
			if (pc == p->site + p->len) {
				*to = pc;
				return 0;
			}
			break;
		}
		if (pc == addr) {
			*to = at + p->moved[i];
			return 0;
		}
		if (i < p->ninsns)
			addr += p->cpu.insn[i].len;
	}
	return -1;
}

/* Can every displaced instruction reach its target from the slot? */
int arch_detour_in_reach(const struct plan *p, uint64_t slot)
{
	if (!arch_in_reach(slot, p->site) || !arch_in_reach(slot, p->site + p->len))
		return 0;
	for (unsigned i = 0; i < p->ninsns; i++)
		if ((p->cpu.insn[i].riprel || p->cpu.insn[i].kind == BPI_JCC) &&
		    !arch_in_reach(slot, p->cpu.insn[i].target))
			return 0;
	return 1;
}

static void put32(uint8_t *at, int64_t v)
{
	int32_t w = (int32_t)v;

	memcpy(at, &w, sizeof(w));
}

/* At code[*k], for address s + *k: op (e8 call, e9 jmp) rel32 to target. */
static void emit_rel(uint8_t *code, size_t *k, uint64_t s, uint8_t op, uint64_t target)
{
	code[*k] = op;
	put32(code + *k + 1, (int64_t)(target - (s + *k + 5)));
	*k += 5;
}

/* mov r10d, desc */
static void emit_desc(uint8_t *code, size_t *k, uint32_t desc)
{
	code[*k] = 0x41;
	code[*k + 1] = 0xba;
	memcpy(code + *k + 2, &desc, 4);
	*k += 6;
}

/*
 * At code[*k]: a jmp (call) to a common routine, at base + off; from a
 * far page, jmp (call) qword [rip + disp32] to the far page's header
 * word at far + f.
 */
static void emit_common(uint8_t *code, size_t *k, uint64_t s, int call, uint64_t base,
			const uint8_t *routine, uint64_t far, unsigned f)
{
	if (!far) {
		emit_rel(code, k, s, call ? 0xe8 : 0xe9, base + (uint64_t)(routine - dt_template));
		return;
	}
	code[*k] = 0xff;
	code[*k + 1] = call ? 0x15 : 0x25;
	put32(code + *k + 2, (int64_t)(far + f - (s + *k + 6)));
	*k += 6;
}

void arch_detour_glue(uint64_t base, uint64_t far, uint64_t s, int result, int sync,
		      uint32_t desc, uint8_t *code)
{
	static const uint8_t pushes[] = { 0x57, 0x56, 0x52, 0x51, 0x41, 0x50 };
	static const uint8_t pops[] = { 0x41, 0x58, 0x59, 0x5a, 0x5e, 0x5f };
	uint64_t orig = s + DT_ORIG;
	size_t k = 0;
	int pf = dt_prefiltered(result, sync, desc);

	arch_bp_fill(code, DT_ORIG);
	if (pf) {
		emit_desc(code, &k, desc);
		code[k] = 0x4c;		/* lea r11, [rip + disp32]: the slot */
		code[k + 1] = 0x8d;
		code[k + 2] = 0x1d;
		put32(code + k + 3, -(int64_t)(k + 7));
		k += 7;
		emit_common(code, &k, s, 0, base, dt_common_prefilter, far, F_PREFILTER);
		k = DT_PF_LEN;
	}
	if (result && (desc >> 24 & DF_ARG0_KEEP)) {
		/* HEAD at the call's entry in r8's place (stub-cpu.h) */
		memcpy(code + k, pushes, 4);
		k += 4;
		if (pf) {
			code[k] = 0x41;		/* push r10: the prefilter read it */
			code[k + 1] = 0x52;
			k += 2;
		} else if (!far) {
			code[k] = 0xff;		/* push qword [rip + disp32] */
			code[k + 1] = 0x35;
			put32(code + k + 2, (int64_t)(base + DT_DATA + D_HEAD - (s + k + 6)));
			k += 6;
		} else {
			code[k] = 0x4c;		/* mov r11, qword [rip + disp32]: F_BASE */
			code[k + 1] = 0x8b;
			code[k + 2] = 0x1d;
			put32(code + k + 3, (int64_t)(far + F_BASE - (s + k + 7)));
			code[k + 7] = 0x41;	/* push qword [r11 + disp32] */
			code[k + 8] = 0xff;
			code[k + 9] = 0xb3;
			put32(code + k + 10, DT_DATA + D_HEAD);
			k += 14;
		}
	} else {
		memcpy(code + k, pushes, sizeof(pushes));
		k += sizeof(pushes);
	}
	if (result) {
		emit_rel(code, &k, s, 0xe8, orig);
		emit_desc(code, &k, desc);
		emit_common(code, &k, s, 0, base, dt_common_result, far, F_RESULT);
		return;
	}
	emit_desc(code, &k, desc);
	emit_common(code, &k, s, 1, base, sync ? dt_common_sync : dt_common_entry, far,
		    sync ? F_SYNC : F_ENTRY);
	memcpy(code + k, pops, sizeof(pops));
	k += sizeof(pops);
	if (k + ARCH_PATCH_LEN <= DT_ORIG) {
		emit_rel(code, &k, s, 0xe9, orig);
		return;
	}
	/* a prefilter and a far call leave no room for the jmp: into it */
	memset(code + k, 0x90, DT_ORIG - k);
}

void arch_detour_patch(uint8_t *patch, uint64_t site, uint64_t to)
{
	patch[0] = 0xe9;	/* jmp rel32 */
	put32(patch + 1, (int64_t)(to - (site + ARCH_PATCH_LEN)));
}

uint64_t arch_patched_target(const uint8_t *buf, size_t n, uint64_t addr, size_t *off)
{
	int32_t rel;

	*off = arch_landing_pad(buf, n);
	if (n < *off + ARCH_PATCH_LEN || buf[*off] != 0xe9)
		return 0;
	memcpy(&rel, buf + *off + 1, sizeof(rel));
	return addr + *off + ARCH_PATCH_LEN + (uint64_t)(int64_t)rel;
}

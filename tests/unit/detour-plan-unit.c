/*
 * detour-plan-unit.c - arch_detour_plan() and arch_detour_relocate()
 * (src/arch/x86_64/detour.c) on entries that are a relative jmp, as
 * musl's malloc, free, realloc and memalign are: the jmp ends the
 * instructions displaced, the slot jumps to the same target (rel32, or
 * jmp [rip] and the address when out of reach); a jmp rel8 takes the
 * function's nop padding; a pc after the jmp stays where it is.  The
 * patch at an entry after endbr64 (arch_landing_pad()), filled with
 * int3, and found again by arch_patched_target(), as a memtap that
 * attaches after one that died finds its slots.  A realloc's glue
 * (arch_detour_glue()) keeps HEAD in r8's place: pushed from rax after
 * a prefilter, else read from the data page, through the far page's
 * header in a far page.
 * Prints "ok" last.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/detour-plan.h"
#include "arch/stub-abi.h"
#include "unit-check.h"

#define FUNC UINT64_C(0x7f0000027920)

/* The target of the jmp rel32 at code (e9 rel32), for address at. */
static uint64_t rel32_target(const uint8_t *code, uint64_t at)
{
	int32_t rel;

	memcpy(&rel, code + 1, 4);
	return at + 5 + (uint64_t)(int64_t)rel;
}

static void jmp_rel32(void)
{
	/* musl's malloc: jmp 29290; cs nopw; nop */
	static const uint8_t buf[16] = { 0xe9, 0x6b, 0x19, 0x00, 0x00, 0x66, 0x2e, 0x0f, 0x1f,
					 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90 };
	uint64_t target = FUNC + 5 + 0x196b, to, far;
	uint8_t code[DT_ORIG_ROOM];
	const char *why = NULL;
	struct plan p;
	size_t size = arch_detour_padded_size(FUNC, buf, sizeof(buf), 5);

	CHECK(arch_detour_plan(FUNC, buf, size, &p, &why) == 0, "refused: %s", why);
	CHECK(p.tail && p.len == 5 && p.ninsns == 1, "tail %d len %u ninsns %u", p.tail, p.len,
	      p.ninsns);
	/* a slot within reach */
	CHECK(arch_detour_relocate(&p, FUNC - 0x100000, code) == 0, "relocate near");
	CHECK(code[0] == 0xe9 && rel32_target(code, FUNC - 0x100000) == target,
	      "near: %02x to %#" PRIx64, code[0], rel32_target(code, FUNC - 0x100000));
	CHECK(code[5] == 0xcc, "near: after the jmp %02x", code[5]);
	/* a slot just within reach of the entry, the target (after it) beyond */
	far = FUNC - UINT64_C(0x7ffeff00);
	CHECK(arch_detour_relocate(&p, far, code) == 0, "relocate far");
	CHECK(code[0] == 0xff && code[1] == 0x25 && !memcmp(code + 2, "\0\0\0\0", 4),
	      "far: %02x %02x", code[0], code[1]);
	memcpy(&to, code + 6, 8);
	CHECK(to == target && arch_detour_in_reach(&p, far), "far: to %#" PRIx64, to);
	/* a pc after the jmp stays, one inside is refused */
	CHECK(arch_detour_moved_pc(&p, far, FUNC + 5, &to) == 0 && to == FUNC + 5, "pc after");
	CHECK(arch_detour_moved_pc(&p, far, FUNC, &to) == 0 && to == far, "pc at the entry");
	CHECK(arch_detour_moved_pc(&p, far, FUNC + 2, &to) < 0, "pc inside");
}

static void jmp_rel8(void)
{
	/* a jmp rel8 and its padding to 16 bytes */
	uint8_t buf[16], code[DT_ORIG_ROOM];
	const char *why = NULL;
	struct plan p;
	size_t size;
	uint64_t to;

	memset(buf, 0x90, sizeof(buf));
	buf[0] = 0xeb;
	buf[1] = 0x30;
	size = arch_detour_padded_size(FUNC, buf, sizeof(buf), 2);
	CHECK(size == 16, "padded size %zu", size);
	CHECK(arch_detour_plan(FUNC, buf, size, &p, &why) == 0, "refused: %s", why);
	CHECK(p.tail && p.len == 5 && p.ninsns == 1, "tail %d len %u", p.tail, p.len);
	CHECK(arch_detour_relocate(&p, FUNC + 0x1000, code) == 0, "relocate");
	CHECK(code[0] == 0xe9 && rel32_target(code, FUNC + 0x1000) == FUNC + 2 + 0x30,
	      "rel8 to %#" PRIx64, rel32_target(code, FUNC + 0x1000));
	CHECK(arch_detour_moved_pc(&p, FUNC + 0x1000, FUNC + 3, &to) < 0, "pc in the padding");
	/* no padding: too short */
	CHECK(arch_detour_plan(FUNC, buf, 2, &p, &why) < 0, "a 2-byte function planned");
}

static void push_then_jmp(void)
{
	/* push rbp; jmp rel32: the push copied, then the jmp to the target */
	static const uint8_t buf[6] = { 0x55, 0xe9, 0x00, 0x01, 0x00, 0x00 };
	uint8_t code[DT_ORIG_ROOM];
	const char *why = NULL;
	struct plan p;

	CHECK(arch_detour_plan(FUNC, buf, sizeof(buf), &p, &why) == 0, "refused: %s", why);
	CHECK(p.tail && p.len == 6 && p.ninsns == 2, "len %u ninsns %u", p.len, p.ninsns);
	CHECK(arch_detour_relocate(&p, FUNC + 0x1000, code) == 0, "relocate");
	CHECK(code[0] == 0x55 && code[1] == 0xe9 &&
	      rel32_target(code + 1, FUNC + 0x1001) == FUNC + 6 + 0x100,
	      "%02x %02x to %#" PRIx64, code[0], code[1], rel32_target(code + 1, FUNC + 0x1001));
}

static void patch_again(void)
{
	/* endbr64; push rbp; mov rbp, rsp; push rbx: the patch after endbr64 */
	static const uint8_t entry[9] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x53 };
	static const uint8_t other[9] = { 0xe8, 0x00, 0x01, 0x00, 0x00, 0x90, 0x90, 0x90, 0x90 };
	uint64_t slot = FUNC - 0x7000000;
	uint8_t buf[sizeof(entry)];
	const char *why = NULL;
	struct plan p;
	size_t off = 99;

	CHECK(arch_landing_pad(entry, sizeof(entry)) == 4 && arch_landing_pad(entry, 3) == 0 &&
	      arch_landing_pad(entry + 4, 5) == 0, "landing pad");
	CHECK(arch_detour_plan(FUNC, entry, sizeof(entry), &p, &why) == 0, "refused: %s", why);
	CHECK(p.site == FUNC + 4 && p.len == 5 && p.ninsns == 3 && !p.tail, "site +%u len %u",
	      (unsigned)(p.site - FUNC), p.len);
	memcpy(buf, entry, sizeof(buf));
	arch_bp_fill(buf + 4, p.len);
	CHECK(buf[4] == 0xcc && buf[8] == 0xcc, "fill %02x %02x", buf[4], buf[8]);
	arch_detour_patch(buf + 4, p.site, slot);
	CHECK(buf[4] == 0xe9 && rel32_target(buf + 4, p.site) == slot, "patch %02x to %#" PRIx64,
	      buf[4], rel32_target(buf + 4, p.site));
	CHECK(arch_patched_target(buf, sizeof(buf), FUNC, &off) == slot && off == 4,
	      "found again: off %zu", off);
	CHECK(arch_patched_target(buf + 4, 5, FUNC + 4, &off) == slot && off == 0,
	      "without endbr64: off %zu", off);
	CHECK(arch_patched_target(buf, 8, FUNC, &off) == 0, "a patch cut short");
	CHECK(arch_patched_target(entry, sizeof(entry), FUNC, &off) == 0, "the entry as it was");
	CHECK(arch_patched_target(other, sizeof(other), FUNC, &off) == 0, "a call");
}

/* The address a rip-relative disp32 at code[at] (instruction end at end) reaches, slot at s. */
static uint64_t riprel(const uint8_t *code, size_t at, size_t end, uint64_t s)
{
	int32_t d;

	memcpy(&d, code + at, 4);
	return s + end + (uint64_t)(int64_t)d;
}

static void realloc_glue(void)
{
	static const uint8_t four[4] = { 0x57, 0x56, 0x52, 0x51 };	/* push rdi rsi rdx rcx */
	uint64_t base = FUNC - 0x100000, far = FUNC + 0x10000000000, s, head;
	uint32_t keep = DF_ARG0_KEEP | DF_SETADD | DF_SETDEL, tails = keep | DF_TAILS;
	uint8_t code[DT_ORIG];
	uint32_t disp;

	head = base + DT_DATA + D_HEAD;
	/* prefiltered: the prefilter read HEAD into r10 (rax is the caller's) */
	s = base + DT_TEMPLATE_MAX;
	arch_detour_glue(base, 0, s, 1, 0, 3 | SK_ARG1 << 16 | keep << 24, code);
	CHECK(!memcmp(code + DT_PF_LEN, four, 4) && code[DT_PF_LEN + 4] == 0x41 &&
	      code[DT_PF_LEN + 5] == 0x52 && code[DT_PF_LEN + 6] == 0xe8,
	      "prefiltered: %02x %02x %02x", code[DT_PF_LEN + 4], code[DT_PF_LEN + 5],
	      code[DT_PF_LEN + 6]);
	/* malloc's: r8 as it was */
	arch_detour_glue(base, 0, s, 1, 0, 3 | SK_ARG0 << 16 | DF_SETADD << 24, code);
	CHECK(code[DT_PF_LEN + 4] == 0x41 && code[DT_PF_LEN + 5] == 0x50, "malloc: %02x %02x",
	      code[DT_PF_LEN + 4], code[DT_PF_LEN + 5]);
	/* no prefilter (reallocarray): push qword [rip + disp32] of D_HEAD */
	arch_detour_glue(base, 0, s, 1, 0, 3 | SK_ARG12 << 16 | tails << 24, code);
	CHECK(!memcmp(code, four, 4) && code[4] == 0xff && code[5] == 0x35 &&
	      riprel(code, 6, 10, s) == head && code[10] == 0xe8, "near: %#" PRIx64,
	      riprel(code, 6, 10, s));
	/* in a far page: mov r11, [rip + disp32] of F_BASE; push qword [r11 + disp32] */
	s = far + DT_TEMPLATE_MAX;
	arch_detour_glue(base, far, s, 1, 0, 3 | SK_ARG12 << 16 | tails << 24, code);
	memcpy(&disp, code + 14, 4);
	CHECK(!memcmp(code, four, 4) && code[4] == 0x4c && code[5] == 0x8b && code[6] == 0x1d &&
	      riprel(code, 7, 11, s) == far + F_BASE && code[11] == 0x41 && code[12] == 0xff &&
	      code[13] == 0xb3 && disp == DT_DATA + D_HEAD && code[18] == 0xe8,
	      "far: %#" PRIx64 " + %#x", riprel(code, 7, 11, s), disp);
	/* prefiltered in a far page: r10, and the glue still fits */
	arch_detour_glue(base, far, s, 1, 0, 3 | SK_ARG1 << 16 | keep << 24, code);
	CHECK(code[DT_PF_LEN + 4] == 0x41 && code[DT_PF_LEN + 5] == 0x52 &&
	      code[DT_PF_LEN + 6] == 0xe8 && code[DT_PF_LEN + 17] == 0xff &&
	      code[DT_PF_LEN + 18] == 0x25 && DT_PF_LEN + 23 <= DT_ORIG,
	      "far prefiltered: %02x %02x", code[DT_PF_LEN + 17], code[DT_PF_LEN + 18]);
}

int main(void)
{
	jmp_rel32();
	jmp_rel8();
	push_then_jmp();
	patch_again();
	realloc_glue();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

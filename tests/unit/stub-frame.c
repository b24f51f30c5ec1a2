/*
 * stub-frame.c - the stub frames of the in-target probes
 * (src/probe/detour-frame.c) against the layout of stub-abi.h: a
 * result probe's glue and relocated entry, written here as detour.c
 * writes them into a slot of a stub mapping laid out in this process's
 * memory (the frame of a slot is read from the process), and the
 * common routines: every syscall the stubs make has a known frame,
 * whose return address leads, stub by stub, to the glue's caller, and
 * so does chain_walk's frame with its buffer below.  A
 * far page's glue too, which reaches the routines through its header
 * (jmp or call [rip + disp32]).
 * Prints "ok" last.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/stub-abi.h"
#include "probe/detour.h"
#include "stack/modules.h"
#include "unit-check.h"

static uint8_t map[DT_CODE_SIZE] __attribute__((aligned(4096)));

static int frame_at(uint64_t off, struct stub_frame *f)
{
	return detour_stub_frame(getpid(), (uint64_t)(uintptr_t)map, (uint64_t)(uintptr_t)map + off, f);
}

static void put_rel(uint8_t *at, uint8_t op, uint64_t from_off, uint64_t to_off)
{
	int32_t rel = (int32_t)((int64_t)to_off - (int64_t)(from_off + 5));

	at[0] = op;
	memcpy(at + 1, &rel, 4);
}

/*
 * A result probe's glue at slot s + at (after a prefilter: at =
 * DT_PF_LEN) and a relocated `push r12; jmp back`, as detour.c writes
 * them.
 */
static void result_glue(uint64_t s, uint64_t at)
{
	static const uint8_t pushes[] = { 0x57, 0x56, 0x52, 0x51, 0x41, 0x50 };
	uint8_t *p = map + s + at;
	uint64_t g = s + at;

	memset(map + s + at, 0xcc, DT_SLOT_SIZE - at);
	memcpy(p, pushes, sizeof(pushes));
	put_rel(p + 6, 0xe8, g + 6, s + DT_ORIG);
	p[11] = 0x41, p[12] = 0xba, memset(p + 13, 0, 4);
	put_rel(p + 17, 0xe9, g + 17, (uint64_t)(dt_common_result - dt_template));
	map[s + DT_ORIG] = 0x41, map[s + DT_ORIG + 1] = 0x54;
	put_rel(map + s + DT_ORIG + 2, 0xe9, s + DT_ORIG + 2, 0x100000);
}

static void result_slot(uint64_t s)
{
	result_glue(s, 0);
}

/* A prefiltered result probe: mov r10d, DESC; lea r11, [the slot]; jmp dt_common_prefilter. */
static void prefilter_slot(uint64_t s)
{
	uint8_t *p = map + s;
	int32_t rel = -13;

	memset(p, 0xcc, DT_PF_LEN);
	p[0] = 0x41, p[1] = 0xba, memset(p + 2, 0, 4);
	p[6] = 0x4c, p[7] = 0x8d, p[8] = 0x1d;
	memcpy(p + 9, &rel, 4);
	put_rel(p + 13, 0xe9, s + 13, (uint64_t)(dt_common_prefilter - dt_template));
	result_glue(s, DT_PF_LEN);
}

/* At p, for offset off: jmp (call) qword [rip + disp32] to the word at offset to. */
static void put_ind(uint8_t *p, int call, uint64_t off, uint64_t to)
{
	int32_t rel = (int32_t)((int64_t)to - (int64_t)(off + 6));

	p[0] = 0xff;
	p[1] = call ? 0x15 : 0x25;
	memcpy(p + 2, &rel, 4);
}

/*
 * A prefiltered entry probe (free) calling through a far page's header:
 * its glue leaves no room for the jmp back, and nops lead into the
 * relocated entry.
 */
static void prefilter_far_entry(uint64_t s)
{
	static const uint8_t pushes[] = { 0x57, 0x56, 0x52, 0x51, 0x41, 0x50 };
	static const uint8_t pops[] = { 0x41, 0x58, 0x59, 0x5a, 0x5e, 0x5f };
	uint8_t *p = map + s, *q = map + s + DT_PF_LEN;
	int32_t rel = -13;

	memset(p, 0xcc, DT_SLOT_SIZE);
	p[0] = 0x41, p[1] = 0xba, memset(p + 2, 0, 4);
	p[6] = 0x4c, p[7] = 0x8d, p[8] = 0x1d;
	memcpy(p + 9, &rel, 4);
	put_ind(p + 13, 0, s + 13, F_PREFILTER);
	memcpy(q, pushes, sizeof(pushes));
	q[6] = 0x41, q[7] = 0xba, memset(q + 8, 0, 4);
	put_ind(q + 12, 1, s + DT_PF_LEN + 12, F_ENTRY);
	memcpy(q + 18, pops, sizeof(pops));
	memset(q + 24, 0x90, DT_ORIG - DT_PF_LEN - 24);
	p[DT_ORIG] = 0x41, p[DT_ORIG + 1] = 0x54;
	put_rel(p + DT_ORIG + 2, 0xe9, s + DT_ORIG + 2, 0x100000);
}

/* A far page's slots at s: a result probe's glue and, at s2, an entry probe's. */
static void far_slots(uint64_t s, uint64_t s2)
{
	static const uint8_t pushes[] = { 0x57, 0x56, 0x52, 0x51, 0x41, 0x50 };
	static const uint8_t pops[] = { 0x41, 0x58, 0x59, 0x5a, 0x5e, 0x5f };
	uint8_t *p = map + s, *q = map + s2;

	memset(p, 0xcc, DT_SLOT_SIZE);
	memcpy(p, pushes, sizeof(pushes));
	put_rel(p + 6, 0xe8, s + 6, s + DT_ORIG);
	p[11] = 0x41, p[12] = 0xba, memset(p + 13, 0, 4);
	put_ind(p + 17, 0, s + 17, F_RESULT);
	p[DT_ORIG] = 0x41, p[DT_ORIG + 1] = 0x54;
	put_rel(p + DT_ORIG + 2, 0xe9, s + DT_ORIG + 2, 0x100000);
	memset(q, 0xcc, DT_SLOT_SIZE);
	memcpy(q, pushes, sizeof(pushes));
	q[6] = 0x41, q[7] = 0xba, memset(q + 8, 0, 4);
	put_ind(q + 12, 1, s2 + 12, F_ENTRY);
	memcpy(q + 18, pops, sizeof(pops));
	put_rel(q + 24, 0xe9, s2 + 24, s2 + DT_ORIG);
	q[DT_ORIG] = 0x41, q[DT_ORIG + 1] = 0x54;
	put_rel(q + DT_ORIG + 2, 0xe9, s2 + DT_ORIG + 2, 0x100000);
}

/* The return address of the first call in the routine at off. */
static uint64_t first_call_return(uint64_t off)
{
	while (off + 5 < DT_TEMPLATE_MAX && map[off] != 0xe8)
		off++;
	return off + 5;
}

int main(void)
{
	size_t len = (size_t)(dt_template_end - dt_template);
	uint64_t slot = DT_TEMPLATE_MAX + 2 * DT_SLOT_SIZE;
	struct stub_frame f;
	int nsys = 0;
	uint64_t r;

	memcpy(map, dt_template, len);
	result_slot(slot);

	/* the glue: no push yet, each push, the function running, back */
	CHECK(frame_at(slot, &f) == 0 && f.ra_off == 0, "glue entry: %u", f.ra_off);
	CHECK(frame_at(slot + 1, &f) == 0 && f.ra_off == 8, "after push rdi: %u", f.ra_off);
	CHECK(frame_at(slot + 6, &f) == 0 && f.ra_off == 40, "call: %u", f.ra_off);
	CHECK(frame_at(slot + 11, &f) == 0 && f.ra_off == 40, "return address: %u", f.ra_off);
	for (int i = 0; i < STUB_NSAVED; i++)
		CHECK(f.saved[i] == -1, "glue saves register %d", i);
	CHECK(frame_at(slot + 17, &f) == 0 && f.ra_off == 40, "jmp: %u", f.ra_off);
	CHECK(frame_at(slot + 22, &f) < 0, "int3 fill has a frame");
	/* the relocated entry runs as the function's own first instructions */
	CHECK(frame_at(slot + DT_ORIG, &f) == 0 && f.ra_off == 0, "relocated: %u", f.ra_off);
	CHECK(frame_at(slot + DT_ORIG + 2, &f) == 0 && f.ra_off == 8 && f.saved[STUB_R12] == 0,
	      "after push r12: %u %d", f.ra_off, f.saved[STUB_R12]);
	CHECK(frame_at(slot + DT_SAVED, &f) < 0, "saved bytes have a frame");

	/* a prefilter, then its glue, entered by the prefilter's jmp r11 */
	slot = DT_TEMPLATE_MAX + 3 * DT_SLOT_SIZE;
	prefilter_slot(slot);
	CHECK(frame_at(slot, &f) == 0 && f.ra_off == 0, "prefilter: %u", f.ra_off);
	CHECK(frame_at(slot + 13, &f) == 0 && f.ra_off == 0, "prefilter's jmp: %u", f.ra_off);
	CHECK(frame_at(slot + 18, &f) < 0, "prefilter's int3 fill has a frame");
	CHECK(frame_at(slot + DT_PF_LEN, &f) == 0 && f.ra_off == 0, "prefiltered glue: %u",
	      f.ra_off);
	CHECK(frame_at(slot + DT_PF_LEN + 11, &f) == 0 && f.ra_off == 40,
	      "prefiltered glue's return address: %u", f.ra_off);
	CHECK(frame_at(slot + DT_ORIG + 2, &f) == 0 && f.ra_off == 8, "prefiltered relocated: %u",
	      f.ra_off);
	/* a prefiltered far entry probe: nops from its pops into the relocated entry */
	slot = DT_TEMPLATE_MAX + 4 * DT_SLOT_SIZE;
	prefilter_far_entry(slot);
	CHECK(frame_at(slot + DT_PF_LEN + 18, &f) == 0 && f.ra_off == 40,
	      "prefiltered entry glue's return address: %u", f.ra_off);
	CHECK(frame_at(slot + DT_PF_LEN + 24, &f) == 0 && f.ra_off == 0,
	      "prefiltered entry glue's nops: %u", f.ra_off);
	CHECK(frame_at(slot + DT_ORIG - 1, &f) == 0 && f.ra_off == 0,
	      "prefiltered entry glue's last nop: %u", f.ra_off);
	CHECK(frame_at(slot + DT_ORIG + 2, &f) == 0 && f.ra_off == 8,
	      "prefiltered entry's relocated code: %u", f.ra_off);
	slot = DT_TEMPLATE_MAX + 2 * DT_SLOT_SIZE;
	/* dt_common_prefilter: rax, rcx, rdx, the size, what to count and a count of
	   places tried pushed at most (more in set_find, which it calls), every exit a jmp */
	{
		uint64_t pf = (uint64_t)(dt_common_prefilter - dt_template);
		unsigned most = 0;

		CHECK(frame_at(pf, &f) == 0 && f.ra_off == 0, "dt_common_prefilter: %u", f.ra_off);
		CHECK(frame_at(pf + 1, &f) == 0 && f.ra_off == 8, "after push rax: %u", f.ra_off);
		for (uint64_t o = pf; o < (uint64_t)(dt_common_sync - dt_template); o++)
			if (frame_at(o, &f) == 0 && f.ra_off > most)
				most = f.ra_off;
		CHECK(most == 48, "dt_common_prefilter: deepest %u", most);
		for (uint64_t o = pf; o + 3 < (uint64_t)(dt_common_sync - dt_template); o++)
			if (map[o] == 0x41 && map[o + 1] == 0xff && map[o + 2] == 0xe3)
				CHECK(frame_at(o, &f) == 0 && f.ra_off == 0, "jmp r11 at +%#" PRIx64
				      ": %u", o, f.ra_off);
	}

	/* the common routines: entered with the glue's pushes, or called */
	CHECK(frame_at((uint64_t)(dt_common_result - dt_template), &f) == 0 && f.ra_off == 40,
	      "dt_common_result: %u", f.ra_off);
	CHECK(frame_at((uint64_t)(dt_common_entry - dt_template), &f) == 0 && f.ra_off == 0,
	      "dt_common_entry: %u", f.ra_off);
	/* every syscall: a frame, the caller's rbx saved below its return address */
	for (size_t i = 0; i + 1 < len; i++) {
		if (dt_template[i] != 0x0f || dt_template[i + 1] != 0x05 || i < 5 ||
		    dt_template[i - 5] != 0xb8)
			continue;
		nsys++;
		CHECK(frame_at(i, &f) == 0, "syscall at +%#zx: no frame", i);
		CHECK(f.ra_off % 8 == 0 && f.ra_off >= 8, "syscall at +%#zx: ra at %u", i, f.ra_off);
		for (int k = 0; k < STUB_NSAVED; k++)
			CHECK(f.saved[k] < (int32_t)f.ra_off, "syscall at +%#zx: register %d at %d", i,
			      k, f.saved[k]);
		printf("syscall at +%#zx: return address at rsp + %u, rbx at %d\n", i, f.ra_off,
		       f.saved[STUB_RBX]);
	}
	CHECK(nsys >= 2, "%d syscalls found in the template", nsys);
	/* chain_walk's buffer on the stack (sub rsp, CH_BUF after its pushes): known */
	{
		int found = 0;

		for (size_t i = 0; i < len && !found; i++)
			found = frame_at(i, &f) == 0 && f.ra_off > CH_BUF;
		CHECK(found, "no frame with chain_walk's buffer (return address above rsp + %u)",
		      (unsigned)CH_BUF);
	}
	/* keep_record returns into the routines: the glue's frame, then its caller */
	r = first_call_return((uint64_t)(dt_common_result - dt_template));
	CHECK(frame_at(r, &f) == 0 && f.ra_off == 40, "keep_record's return, result: %u", f.ra_off);
	r = first_call_return((uint64_t)(dt_common_entry - dt_template));
	CHECK(frame_at(r, &f) == 0 && f.ra_off == 0, "keep_record's return, entry: %u", f.ra_off);
	CHECK(frame_at(DT_CODE_SIZE, &f) < 0, "past the code");

	/* a far page's glue (its slots laid out as the mapping's) */
	slot = DT_TEMPLATE_MAX + 5 * DT_SLOT_SIZE;
	far_slots(slot, slot + DT_SLOT_SIZE);
	CHECK(frame_at(slot + 11, &f) == 0 && f.ra_off == 40, "far: return address: %u", f.ra_off);
	CHECK(frame_at(slot + 17, &f) == 0 && f.ra_off == 40, "far: jmp [rip]: %u", f.ra_off);
	CHECK(frame_at(slot + 23, &f) < 0, "far: int3 fill after jmp [rip] has a frame");
	CHECK(frame_at(slot + DT_ORIG + 2, &f) == 0 && f.ra_off == 8, "far: relocated: %u", f.ra_off);
	slot += DT_SLOT_SIZE;
	CHECK(frame_at(slot + 12, &f) == 0 && f.ra_off == 40, "far entry: call [rip]: %u", f.ra_off);
	CHECK(frame_at(slot + 18, &f) == 0 && f.ra_off == 40, "far entry: its return: %u", f.ra_off);
	CHECK(frame_at(slot + 24, &f) == 0 && f.ra_off == 0, "far entry: jmp: %u", f.ra_off);
	CHECK(frame_at(slot + DT_ORIG, &f) == 0 && f.ra_off == 0, "far entry: relocated: %u",
	      f.ra_off);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * detour-sites.c - detour_moved_insn() (src/probe/detour-sites.c):
 * where a detoured wrapper's syscall instruction runs.  glibc's brk
 * shape, endbr64 then mov eax and syscall: the patch after endbr64
 * displaces the mov only, the syscall stays in place; an entry whose
 * syscall the patch displaces (xor eax, syscall, cmp) runs it from the
 * slot's copy, at the offset the relocation gave it, which is where
 * arch_syscall_sites() found it moved by the slot; an address inside an
 * instruction is refused.  The process's memory is never read here:
 * memio_read() and the pages of the set are stand-ins.
 * Prints "ok" last (exit 77 off x86-64).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/detour-plan.h"
#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "probe/detour.h"
#include "probe/detour-int.h"
#include "util/xmalloc.h"
#include "unit-check.h"

#define FUNC UINT64_C(0x7f0000027920)
#define SLOT UINT64_C(0x7f0000100040)

/* detour_runs_at()'s needs, unused by these checks */
ssize_t memio_read(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	(void)pid, (void)tid, (void)addr, (void)buf, (void)len;
	return -EIO;
}

void *xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	return p;
}

uint64_t dt_page_base(const struct detour_set *ds, unsigned pg)
{
	(void)ds, (void)pg;
	return 0;
}

size_t dt_page_first(unsigned pg)
{
	return pg * (size_t)DT_NSLOTS;
}

size_t dt_page_slots(unsigned pg)
{
	(void)pg;
	return DT_NSLOTS;
}

int main(void)
{
#ifndef __x86_64__
	printf("skip: x86-64 code\n");
	return 77;
#else
	/* endbr64; mov eax, 12; syscall; ret */
	static const uint8_t brk_like[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xb8, 0x0c, 0x00, 0x00, 0x00,
					    0x0f, 0x05, 0xc3 };
	/* endbr64; xor eax, eax; syscall; cmp rax, -4095; ret */
	static const uint8_t short_entry[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x31, 0xc0, 0x0f, 0x05,
					       0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff, 0xc3 };
	uint64_t sites[4], at = 0;
	size_t n;
	int r;

	n = arch_syscall_sites(FUNC, brk_like, sizeof(brk_like), sites, 4);
	CHECK(n == 1 && sites[0] == FUNC + 9, "brk: %zu sites, %#" PRIx64, n, sites[0]);
	r = detour_moved_insn(FUNC, brk_like, sizeof(brk_like), sizeof(brk_like), SLOT,
			      FUNC + 9, &at);
	CHECK(r == 0 && at == FUNC + 9, "brk: %d at %#" PRIx64, r, at);

	n = arch_syscall_sites(FUNC, short_entry, sizeof(short_entry), sites, 4);
	CHECK(n == 1 && sites[0] == FUNC + 6, "short: %zu sites, %#" PRIx64, n, sites[0]);
	r = detour_moved_insn(FUNC, short_entry, sizeof(short_entry), sizeof(short_entry), SLOT,
			      FUNC + 6, &at);
	CHECK(r == 1 && at == SLOT + DT_ORIG + 2, "short: %d at %#" PRIx64 ", want %#" PRIx64,
	      r, at, SLOT + DT_ORIG + 2);
	/* the copy there is the syscall instruction */
	{
		uint8_t code[DT_ORIG_ROOM];
		const char *why = NULL;
		struct plan p;

		CHECK(arch_detour_plan(FUNC, short_entry, sizeof(short_entry), &p, &why) == 0,
		      "plan: %s", why);
		CHECK(arch_detour_relocate(&p, SLOT + DT_ORIG, code) == 0, "relocate");
		CHECK(code[2] == 0x0f && code[3] == 0x05, "copy: %02x %02x", code[2], code[3]);
	}
	r = detour_moved_insn(FUNC, short_entry, sizeof(short_entry), sizeof(short_entry), SLOT,
			      FUNC + 7, &at);
	CHECK(r == -ENOTSUP, "inside an instruction: %d", r);
	/* after the displaced bytes: in place */
	r = detour_moved_insn(FUNC, short_entry, sizeof(short_entry), sizeof(short_entry), SLOT,
			      FUNC + 14, &at);
	CHECK(r == 0 && at == FUNC + 14, "after: %d at %#" PRIx64, r, at);
	return unit_status();
#endif
}

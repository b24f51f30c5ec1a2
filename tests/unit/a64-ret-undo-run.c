/*
 * a64-ret-undo-run.c - run on an emulated arm64 CPU (qemu-user): the
 * routine that a detach leaves at the trampoline for hooked calls still
 * in flight (arch_ret_lookup_page(), src/arch/aarch64/bp_arch.c).
 *
 * hooked() (below, in A64) does at its entry what memtap's return hook
 * does, and records the pair a detach would write: its sp (the key)
 * and x30 (the return address) into the table's third pair, then x30
 * replaced by the trampoline, before PACIASP, which signs it; it
 * returns its argument + 1 through AUTIASP and RET, into the routine,
 * which must find the pair behind two that do not match and return to
 * the caller with x0 and every register but x16, x17 as they were.
 * Also: -ENOSPC for a table that does not fit, -EINVAL for a key 0.
 * Prints "ok" last.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/arch.h"

/*
 * uint64_t call_hooked(uint64_t v, uint8_t *tramp, uint64_t *pair, uint64_t *saved):
 * calls hooked(v) with x19..x28 and x2..x15 set to known values, stores
 * what they hold after the return into saved[0..23], returns x0.
 */
__asm__(
	".text\n"
	".p2align 2\n"
	"hooked:\n"
	"	mov x16, sp\n"
	"	str x16, [x18]\n"
	"	str x30, [x18, #8]\n"
	"	mov x30, x17\n"
	"	paciasp\n"
	"	stp x29, x30, [sp, #-32]!\n"
	"	mov x29, sp\n"
	"	add x0, x0, #1\n"
	"	ldp x29, x30, [sp], #32\n"
	"	autiasp\n"
	"	ret\n"
	".globl call_hooked\n"
	".type call_hooked, %function\n"
	"call_hooked:\n"
	"	stp x29, x30, [sp, #-128]!\n"
	"	mov x29, sp\n"
	"	stp x19, x20, [sp, #16]\n"
	"	stp x21, x22, [sp, #32]\n"
	"	stp x23, x24, [sp, #48]\n"
	"	stp x25, x26, [sp, #64]\n"
	"	stp x27, x28, [sp, #80]\n"
	"	str x3, [sp, #96]\n"
	"	str x18, [sp, #104]\n"
	"	mov x17, x1\n"
	"	mov x18, x2\n"
	"	mov x2, #102\n mov x3, #103\n mov x4, #104\n mov x5, #105\n"
	"	mov x6, #106\n mov x7, #107\n mov x8, #108\n mov x9, #109\n"
	"	mov x10, #110\n mov x11, #111\n mov x12, #112\n mov x13, #113\n"
	"	mov x14, #114\n mov x15, #115\n"
	"	mov x19, #119\n mov x20, #120\n mov x21, #121\n mov x22, #122\n"
	"	mov x23, #123\n mov x24, #124\n mov x25, #125\n mov x26, #126\n"
	"	mov x27, #127\n mov x28, #128\n"
	"	bl hooked\n"
	"	ldr x1, [sp, #96]\n"
	"	stp x2, x3, [x1]\n stp x4, x5, [x1, #16]\n stp x6, x7, [x1, #32]\n"
	"	stp x8, x9, [x1, #48]\n stp x10, x11, [x1, #64]\n stp x12, x13, [x1, #80]\n"
	"	stp x14, x15, [x1, #96]\n stp x19, x20, [x1, #112]\n stp x21, x22, [x1, #128]\n"
	"	stp x23, x24, [x1, #144]\n stp x25, x26, [x1, #160]\n stp x27, x28, [x1, #176]\n"
	"	ldr x18, [sp, #104]\n"
	"	ldp x19, x20, [sp, #16]\n"
	"	ldp x21, x22, [sp, #32]\n"
	"	ldp x23, x24, [sp, #48]\n"
	"	ldp x25, x26, [sp, #64]\n"
	"	ldp x27, x28, [sp, #80]\n"
	"	ldp x29, x30, [sp], #128\n"
	"	ret\n"
	".size call_hooked, .-call_hooked\n");

uint64_t call_hooked(uint64_t v, uint8_t *tramp, uint64_t *pair, uint64_t *saved);

static int failures;

#define CHECK(c, ...) do { if (!(c)) { printf(__VA_ARGS__); printf("\n"); failures++; } } while (0)

int main(void)
{
	const size_t len = 4096;
	uint64_t pairs[3][2] = { { 0x10, 0x1234 }, { 0x7ffffff0, 0x5678 }, { 1, 0 } };
	uint64_t saved[24], want;
	uint8_t *page = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int n;

	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	CHECK(arch_ret_lookup_page(page, len, (const uint64_t (*)[2])pairs, (len - 32) / 16) ==
	      -ENOSPC, "a table one pair too long fits");
	CHECK(arch_ret_lookup_page(page, len, (const uint64_t (*)[2])pairs, 0) == 0,
	      "an empty table refused");
	pairs[0][0] = 0;
	CHECK(arch_ret_lookup_page(page, len, (const uint64_t (*)[2])pairs, 3) == -EINVAL,
	      "a key 0 taken");
	pairs[0][0] = 0x10;
	n = arch_ret_lookup_page(page, len, (const uint64_t (*)[2])pairs, 3);
	CHECK(n == 3, "arch_ret_lookup_page: %d", n);
	__builtin___clear_cache((char *)page, (char *)page + len);
	for (uint64_t v = 0; v < 3; v++) {
		uint64_t got = call_hooked(v * 1000, page, (uint64_t *)(page + 32 + 2 * 16), saved);

		CHECK(got == v * 1000 + 1, "call %llu: x0 %#llx", (unsigned long long)v,
		      (unsigned long long)got);
		for (int r = 0; r < 24; r++) {
			want = r < 14 ? 102 + (uint64_t)r : 119 + (uint64_t)(r - 14);
			CHECK(saved[r] == want, "call %llu: register %d holds %llu, not %llu",
			      (unsigned long long)v, r, (unsigned long long)saved[r],
			      (unsigned long long)want);
		}
	}
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

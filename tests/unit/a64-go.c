/*
 * a64-go.c - arm64's part of Go programs (src/arch/go.h,
 * aarch64/go.c), on the code of Go 1.19's runtime (its words below, as
 * go build wrote them for linux/arm64): the offsets read from
 * runtime.systemstack (g.m 48, g.sched 56, m.g0 0, m.curg 192), none
 * from that code cut short or with g's register moved away first; the
 * return address of each switch function's call on g0, none before
 * the switch of sp; the running g in x28; and the caller of a
 * goroutine's frame that systemstack and morestack saved: the return
 * address at sched.sp and the frame of 16 above it, morestack's in the
 * gobuf's lr.  Prints "ok" last and exits 0, or says what is wrong and
 * exits 1.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/go.h"
#include "unit-check.h"

#define U(p) ((uint64_t)(uintptr_t)(p))

/* runtime.systemstack.abi0, at 0x6c220 */
static const uint32_t sstack[] = {
	0xf81f0ffe, 0xf81f83fd, 0xd10023fd, 0xf9400fe3, 0xaa0303fa, 0xf9401b84, 0xf9402885,
	0xeb1c00bf, 0x540003c0, 0xf9400085, 0xeb1c00bf, 0x54000360, 0xf9406086, 0xeb1c00df,
	0x540000a0, 0x90000023, 0x9101c063, 0xd63f0060, 0x1400092a, 0x97fffe15, 0xaa0503fc,
	0x94000ed7, 0xf9401f83, 0x9100007f, 0xf940379d, 0xf9400343, 0xd63f0060, 0xf9401b83,
	0xf940607c, 0x94000ecf, 0xf9401f80, 0x9100001f, 0xf940379d, 0xf9001f9f, 0xf900379f,
	0xa97ffbfd, 0x910043ff, 0xd65f03c0, 0xf9400343, 0xf84107fe, 0xd10023fd, 0xd61f0060,
};
/* runtime.morestack.abi0, at 0x6c2d0 */
static const uint32_t morestack[] = {
	0xf9401b88, 0xf9400104, 0xeb1c009f, 0x54000061, 0x94000f30, 0x1400090b, 0xf9402904,
	0xeb1c009f, 0x54000061, 0x94000f2f, 0x14000906, 0x910003e0, 0xf9001f80, 0xf900379d,
	0xf900239e, 0xf9003383, 0xf9002b9a, 0xf9000903, 0x910003e0, 0xf9000500, 0xf9000d1c,
	0xf940011c, 0x94000eaa, 0xf9401f80, 0x9100001f, 0xf940379d, 0xf81f0fff, 0x94000f45,
	0xbea71700,
};
/* runtime.mcall, at 0x6c1a0 */
static const uint32_t mcall[] = {
	0xaa0003fa, 0x910003e0, 0xf9001f80, 0xf900379d, 0xf900239e, 0xf900339f, 0xaa1c03e3,
	0xf9401b88, 0xf940011c, 0x94000f03, 0xeb1c007f, 0x54000041, 0x14000f60, 0xf9401f80,
	0x9100001f, 0xf940379d, 0xaa0303e0, 0xf81f03ff, 0xd10043ff, 0xf9400344, 0xd63f0080,
	0x14000f5f,
};
/* runtime.asmcgocall.abi0, at 0x6e610 */
static const uint32_t asmcgocall[] = {
	0xf81f0ffe, 0xf81f83fd, 0xd10023fd, 0xf9400fe1, 0xf94013e0, 0x910003e2, 0xb40004bc,
	0xaa1c03e4, 0xf9401b88, 0xf9402903, 0xeb03039f, 0x54000400, 0xf9400103, 0xeb03039f,
	0x540003a0, 0xaa0003e9, 0x97fff51c, 0xaa0303fc, 0x940005de, 0xf9401f80, 0x9100001f,
	0xf940379d, 0xaa0903e0, 0x910003ed, 0xd10041ad, 0x910001bf, 0xf90003e4, 0xf9400484,
	0xcb020084, 0xf90007e4, 0xd63f0020, 0xaa0003e9, 0xf94003fc, 0x940005cf, 0xf9400785,
	0xf94007e6, 0xcb0600a5, 0xaa0903e0, 0x910000bf, 0xb9002be0, 0xa97ffbfd, 0x910043ff,
	0xd65f03c0,
};
/* runtime.asmcgocall, at 0x700e0: Go 1.17's wrapper, which only calls it */
static const uint32_t asmcgocall_wrapper[] = {
	0xf81d0ffe, 0xf81f83fd, 0xd10023fd, 0xf90007e0, 0xf9000be1, 0x97fff947, 0xb9801be0,
	0xa97ffbfd, 0x9100c3ff, 0xd65f03c0,
};

/* The words as the program's file holds them: little-endian. */
static size_t bytes(const uint32_t *w, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		out[4 * i] = (uint8_t)w[i];
		out[4 * i + 1] = (uint8_t)(w[i] >> 8);
		out[4 * i + 2] = (uint8_t)(w[i] >> 16);
		out[4 * i + 3] = (uint8_t)(w[i] >> 24);
	}
	return 4 * n;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_decode(void)
{
	uint8_t code[4 * N(sstack)];
	size_t len = bytes(sstack, N(sstack), code);
	struct arch_go_offsets off;
	uint32_t w[N(sstack)];

	memset(&off, 0xff, sizeof(off));
	CHECK(arch_go_decode_systemstack(code, len, &off) == 0, "systemstack not understood");
	CHECK(off.g_m == 48 && off.g_sched == 56 && off.m_g0 == 0 && off.m_curg == 192 &&
	      off.tls_g == 0, "offsets: g_m %u g_sched %u m_g0 %u m_curg %u tls_g %lld", off.g_m,
	      off.g_sched, off.m_g0, off.m_curg, (long long)off.tls_g);
	/* cut before the load of g.sched from g0 */
	CHECK(arch_go_decode_systemstack(code, 22 * 4, &off) == -1, "systemstack cut short: read");
	CHECK(arch_go_decode_systemstack(code, 3, &off) == -1, "3 bytes: read");
	/* mov x28, x5 made mov x28, x6 (m.curg's): no g0 moved into g */
	memcpy(w, sstack, sizeof(w));
	w[20] = 0xaa0603fc;
	CHECK(arch_go_decode_systemstack(code, bytes(w, N(w), code), &off) == -1,
	      "m.curg moved into g taken for m.g0");
	/* g's register overwritten first (mov x28, x3): its loads are not g's */
	memcpy(w, sstack, sizeof(w));
	w[4] = 0xaa0303fc;
	CHECK(arch_go_decode_systemstack(code, bytes(w, N(w), code), &off) == -1,
	      "loads from another register taken for g's");
	/* the loads of m made through another register: that one is m too */
	memcpy(w, sstack, sizeof(w));
	w[5] = 0xf9401b87;	/* ldr x7, [x28, #48] */
	w[4] = 0xaa0303fa;
	CHECK(arch_go_decode_systemstack(code, bytes(w, N(w), code), &off) == -1,
	      "m's fields read from a register not holding m");
}

static void check_switch_return(void)
{
	uint8_t code[4 * N(asmcgocall)];
	size_t len;

	len = bytes(sstack, N(sstack), code);
	CHECK(arch_go_switch_return(code, len, 0x6c220) == 0x6c28c, "systemstack: %#llx",
	      (unsigned long long)arch_go_switch_return(code, len, 0x6c220));
	CHECK(arch_go_switch_return(code, 23 * 4, 0x6c220) == 0, "systemstack cut before the switch");
	len = bytes(morestack, N(morestack), code);
	CHECK(arch_go_switch_return(code, len, 0x6c2d0) == 0x6c340, "morestack: %#llx",
	      (unsigned long long)arch_go_switch_return(code, len, 0x6c2d0));
	len = bytes(mcall, N(mcall), code);
	CHECK(arch_go_switch_return(code, len, 0x6c1a0) == 0x6c1f4, "mcall: %#llx",
	      (unsigned long long)arch_go_switch_return(code, len, 0x6c1a0));
	len = bytes(asmcgocall, N(asmcgocall), code);
	CHECK(arch_go_switch_return(code, len, 0x6e610) == 0x6e68c, "asmcgocall: %#llx",
	      (unsigned long long)arch_go_switch_return(code, len, 0x6e610));
	len = bytes(asmcgocall_wrapper, N(asmcgocall_wrapper), code);
	CHECK(arch_go_switch_return(code, len, 0x700e0) == 0, "asmcgocall's wrapper switches");
}

static int nreads;

/* ctx non-NULL: this process's memory; NULL: the read fails */
static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	nreads++;
	if (!ctx)
		return -EFAULT;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

static void check_running_g(void)
{
	struct arch_go_offsets off = { .g_m = 48, .g_sched = 56, .m_curg = 192 };
	arch_regs_t r;
	uint64_t g = 0;
	int k;

	memset(&r, 0, sizeof(r));
	r.r.regs[28] = 0x4000002000u;
	r.tp = 0x1000;
	nreads = 0;
	k = arch_go_running_g(&r, &off, rd, NULL, &g);
	CHECK(k == 0 && g == 0x4000002000u && nreads == 0, "the running g: %d %#llx, %d reads", k,
	      (unsigned long long)g, nreads);
}

static void check_callers(void)
{
	/* systemstack's frame: its saved x30, then its caller's frame */
	static uint64_t stack[6] = { 0x7f5a4, 0x11, 0x22, 0x33, 0x44, 0x55 };
	struct arch_go_sched sched = { .sp = U(&stack[0]), .pc = 0x6c208, .bp = U(&stack[0]) - 8,
				       .lr = 0 };
	uint64_t ra = 0, sp = 0, fp = 0;
	int k;

	k = arch_go_switch_caller(&sched, rd, &sched, &ra, &sp, &fp);
	CHECK(k == 0 && ra == stack[0] && sp == U(&stack[2]) && fp == U(&stack[1]),
	      "systemstack's caller: %d %#llx %#llx %#llx", k, (unsigned long long)ra,
	      (unsigned long long)sp, (unsigned long long)fp);
	CHECK(arch_go_switch_caller(&sched, rd, NULL, &ra, &sp, &fp) == -1,
	      "systemstack's caller not read: found");
	/* morestack: the function's entry sp, its x30 in the gobuf's lr */
	sched.pc = 0x9a10c;
	sched.lr = 0x9b2f0;
	ra = sp = 0;
	nreads = 0;
	k = arch_go_morestack_caller(&sched, rd, NULL, &ra, &sp);
	CHECK(k == 0 && ra == 0x9b2f0 && sp == sched.sp && nreads == 0,
	      "morestack's caller: %d %#llx %#llx, %d reads", k, (unsigned long long)ra,
	      (unsigned long long)sp, nreads);
	sched.lr = 0;
	CHECK(arch_go_morestack_caller(&sched, rd, &sched, &ra, &sp) == -1,
	      "morestack's caller without an lr: found");
}

int main(void)
{
	check_decode();
	check_switch_return();
	check_running_g();
	check_callers();
	return unit_status();
}

/*
 * a64-stubs-run.c - arm64's common routines of the stub mapping
 * (src/arch/aarch64/detour-stubs*.S) run: the template copied into a
 * mapping laid out as memtap's (arch/stub-abi.h), 64 MiB from two
 * functions detoured through arch_detour_glue()'s glue (a malloc-like
 * result probe with a prefilter, a free-like entry probe, a sync
 * point), whose data page, ring and thread table this program fills
 * as memtap would.  Known calls are made from call_with(), which sets
 * x1-x4, x19-x23 and x29 to known values, and calls on a stack of its
 * own with a known pattern above sp; each case asserts the counters
 * and every field of the records the stubs commit: the filter, the
 * prefilter's fast way, a thread without an entry (process_vm_readv),
 * the tid at a tp offset, sampling, the set, compact records, nested
 * calls, a full ring's drops and a sync point's bounded wait.  And
 * arch_stub_frame() (src/arch/aarch64/stub-frame.c): the frames at the
 * entry points, and from fake_malloc's own return address into the
 * glue, the caller's return address and sp.  Built
 * for aarch64 by tests/unit/a64-stubs-run.test (aarch64-linux-gnu-gcc
 * -static) and run through qemu-user; not built by make.  Prints one
 * line per case, and "ok" last when all hold.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch/detour-plan.h"
#include "arch/stub-abi.h"
#include "arch/stub-frame.h"
#include "a64-emu.h"

#define STR(x) #x
#define XSTR(x) STR(x)

#define STACK_SIZE 0x10000
#define ABOVE 64		/* the pattern above sp at the call */
#define COPY_LEN 256
#define NREC 8
#define REC_SIZE (R_STACK + COPY_LEN)

/* the stack, and a page above it for the copies that are not cut at its end */
uint8_t fake_stack[STACK_SIZE + 0x1000] __attribute__((aligned(16)));
uint64_t called_sp, called_ret, seen_ra, seen_sp;

/*
 * uint64_t call_with(fn, arg0): on fake_stack, sp = its end - ABOVE,
 * the words above sp 0x510 + i; x1-x4 = 0x1001..0x1004, x19-x23 =
 * 0x1900 + n, x29 = 0x2900; called_sp and called_ret = sp and the
 * return address at the call.  fake_malloc returns arg0 + 0x1000 and
 * x1 = 0x77; fake_free returns 0.  Both start with an instruction the
 * relocator copies as it is.
 */
__asm__(A64_CODE_PAGE(fn_start)
	"fake_malloc:\n"
	"	add x0, x0, #0x1000\n"
	"	mov x1, #0x77\n"
	"	adrp x9, seen_ra\n"		/* its return address and sp, for the frame */
	"	str x30, [x9, :lo12:seen_ra]\n"
	"	mov x10, sp\n"
	"	adrp x9, seen_sp\n"
	"	str x10, [x9, :lo12:seen_sp]\n"
	"	ret\n"
	"fake_free:\n"
	"	mov x0, #0\n"
	"	ret\n"
	"	.balign 4096\n"
	".globl fn_stop\n"
	"fn_stop:\n"
	".text\n"
	".globl call_with\n"
	"call_with:\n"
	"	stp x29, x30, [sp, #-96]!\n"
	"	stp x19, x20, [sp, #16]\n"
	"	stp x21, x22, [sp, #32]\n"
	"	stp x23, x24, [sp, #48]\n"
	"	mov x24, sp\n"
	"	adrp x9, fake_stack\n"
	"	add x9, x9, :lo12:fake_stack\n"
	"	add x9, x9, #" XSTR(STACK_SIZE) "\n"
	"	sub x9, x9, #" XSTR(ABOVE) "\n"
	"	mov x10, #0\n"
	"1:	add x11, x10, #0x510\n"
	"	str x11, [x9, x10, lsl #3]\n"
	"	add x10, x10, #1\n"
	"	cmp x10, #" XSTR(ABOVE / 8) "\n"
	"	b.ne 1b\n"
	"	mov sp, x9\n"
	"	adrp x10, called_sp\n"
	"	str x9, [x10, :lo12:called_sp]\n"
	"	adr x11, 2f\n"
	"	adrp x10, called_ret\n"
	"	str x11, [x10, :lo12:called_ret]\n"
	"	mov x9, x0\n"
	"	mov x0, x1\n"
	"	mov x1, #0x1001\n"
	"	mov x2, #0x1002\n"
	"	mov x3, #0x1003\n"
	"	mov x4, #0x1004\n"
	"	mov x19, #0x1900\n"
	"	mov x20, #0x1901\n"
	"	mov x21, #0x1902\n"
	"	mov x22, #0x1903\n"
	"	mov x23, #0x1904\n"
	"	mov x29, #0x2900\n"
	"	blr x9\n"
	"2:	mov sp, x24\n"
	"	cmp x1, #0x77\n"		/* fake_malloc's x1 back: bit 63 of the result */
	"	b.ne 3f\n"
	"	orr x0, x0, #0x8000000000000000\n"
	"3:	ldp x19, x20, [sp, #16]\n"
	"	ldp x21, x22, [sp, #32]\n"
	"	ldp x23, x24, [sp, #48]\n"
	"	ldp x29, x30, [sp], #96\n"
	"	ret\n"
	".globl fake_malloc_p, fake_free_p\n"
	"	.balign 8\n"
	"fake_malloc_p: .quad fake_malloc\n"
	"fake_free_p: .quad fake_free\n");

uint64_t call_with(void *fn, uint64_t arg0);
extern uint8_t fn_start[], fn_stop[];
extern uint8_t *const fake_malloc_p, *const fake_free_p;

static uint8_t *map;		/* the stub mapping */
static uint8_t ring[NREC * REC_SIZE] __attribute__((aligned(64)));
static uint64_t tail;		/* TAIL, as memtap stores it */
static uint32_t fake_tid = 4242;
static int failures;
static uint8_t orig_malloc[16], orig_free[16];	/* their code before any detour */

#define DATA(off) (*(uint64_t *)(void *)(map + DT_DATA + (off)))
#define CNT(slot, off) (*(uint64_t *)(void *)(map + DT_COUNTERS + ((slot) << C_SHIFT) + (off)))
#define THR(e, off) (*(uint64_t *)(void *)(map + DT_THREADS + ((e) << K_SHIFT) + (off)))
#define PT(e, slot, off) (*(uint64_t *)(void *)(map + DT_PERTHREAD + ((uint64_t)(e) << PT_SHIFT) + \
						 ((slot) << PT_SLOT_SHIFT) + (off)))

enum { S_MALLOC = 3, S_FREE = 5, S_SYNC = 6 };
static const uint32_t d_malloc = S_MALLOC | SK_ARG0 << 16;
static const uint32_t d_free = S_FREE | (uint32_t)DF_SETDEL << 24;

static uint64_t tp(void)
{
	uint64_t t;

	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(t));
	return t;
}

/* The thread table's entry this thread's tp hashes to first. */
static uint64_t my_entry(void)
{
	return (tp() * K_HASH_MUL) >> K_HASH_SHIFT;
}

static void check(const char *what, int ok)
{
	printf("%s%s\n", what, ok ? "" : " FAIL");
	failures += !ok;
}

#define EQ(what, got, want) eq(what, (uint64_t)(got), (uint64_t)(want))
static int eq(const char *what, uint64_t got, uint64_t want)
{
	if (got == want)
		return 1;
	printf("  %s: %#" PRIx64 ", not %#" PRIx64 "\n", what, got, want);
	return 0;
}

static const uint8_t *rec(uint64_t seq)
{
	return ring + (seq & (NREC - 1)) * REC_SIZE;
}

/* Detour fn at slot i: the glue, the relocated entry, the patch. */
static int detour(uint8_t *fn, unsigned i, int result, int sync, uint32_t desc)
{
	uint64_t s = (uint64_t)(uintptr_t)map + DT_TEMPLATE_MAX + i * DT_SLOT_SIZE;
	uint8_t code[DT_SLOT_SIZE] = { 0 }, patch[4];
	const char *why = NULL;
	struct plan p;
	const uint8_t *orig = fn == fake_malloc_p ? orig_malloc : orig_free;
	uint32_t w;

	if (arch_detour_plan((uint64_t)(uintptr_t)fn, orig, 16, &p, &why) ||
	    !arch_detour_in_reach(&p, s)) {
		printf("FAIL detour of slot %u: %s\n", i, why ? why : "out of reach");
		return -1;
	}
	arch_detour_glue((uint64_t)(uintptr_t)map, 0, s, result, sync, desc, code);
	if (arch_detour_relocate(&p, s + DT_ORIG, code + DT_ORIG)) {
		printf("FAIL relocation of slot %u\n", i);
		return -1;
	}
	memcpy((void *)(uintptr_t)s, code, DT_ORIG + DT_ORIG_ROOM);
	__builtin___clear_cache((char *)(uintptr_t)s, (char *)(uintptr_t)s + DT_SLOT_SIZE);
	arch_detour_patch(patch, p.site, s);
	memcpy(&w, patch, 4);
	__atomic_store_n((uint32_t *)(uintptr_t)p.site, w, __ATOMIC_RELEASE);
	__builtin___clear_cache((char *)(uintptr_t)p.site, (char *)(uintptr_t)p.site + 4);
	return 0;
}

/* The data page as memtap writes it, the ring empty, no thread entry, no counts. */
static void reset(void)
{
	memset(map + DT_DATA, 0, DT_MAP_SIZE - DT_DATA);
	memset(ring, 0, sizeof(ring));
	tail = 0;
	DATA(D_PID) = (uint64_t)getpid();
	DATA(D_RING) = (uint64_t)(uintptr_t)ring;
	DATA(D_NREC) = NREC;
	DATA(D_MASK) = NREC - 1;
	DATA(D_REC_SIZE) = REC_SIZE;
	DATA(D_COPY_LEN) = COPY_LEN;
	DATA(D_STALL_TAIL) = ~(uint64_t)0;
	DATA(D_WAIT_SPINS) = 2;
	DATA(D_MAX_SIZE) = ~(uint64_t)0;
	DATA(D_TAILP) = (uint64_t)(uintptr_t)&tail;
	DATA(D_NEST_LO) = ~(uint64_t)0;
}

/* This thread's entry: its stack the fake one. */
static void add_thread(void)
{
	uint64_t e = my_entry();

	THR(e, K_LO) = (uint64_t)(uintptr_t)fake_stack;
	THR(e, K_HI) = (uint64_t)(uintptr_t)fake_stack + STACK_SIZE;
	THR(e, K_KEY) = tp();
}

/* The fields of a full record of seq made by a call of arg0 returning result. */
static int full_record(uint64_t seq, uint32_t desc, uint64_t arg0, uint64_t result,
		       uint64_t tid, int64_t copied, uint64_t mean)
{
	const uint8_t *r = rec(seq);
	int ok = EQ("R_SEQ", dt_rec_word(r, R_SEQ), seq + 1) & EQ("R_TID", dt_rec_word(r, R_TID), tid) &
		 EQ("R_DESC", dt_rec_word(r, R_DESC), desc) &
		 EQ("R_ARG0", dt_rec_word(r, R_ARG0), arg0) &
		 EQ("R_ARG1", dt_rec_word(r, R_ARG1), 0x1001) &
		 EQ("R_ARG2", dt_rec_word(r, R_ARG2), 0x1002) &
		 EQ("R_ARG3", dt_rec_word(r, R_ARG3), 0x1003) &
		 EQ("R_ARG4", dt_rec_word(r, R_ARG4), 0x1004) &
		 EQ("R_SP", dt_rec_word(r, R_SP), called_sp) &
		 EQ("R_RET", dt_rec_word(r, R_RET), called_ret) &
		 EQ("R_X29", dt_rec_word(r, R_X29), 0x2900) &
		 EQ("R_WORD", dt_rec_word(r, R_WORD), 0) &
		 EQ("R_COPIED", dt_rec_word(r, R_COPIED), copied) &
		 EQ("R_MEAN", dt_rec_word(r, R_MEAN), mean) &
		 EQ("R_WALK", dt_rec_word(r, R_WALK), ~(uint64_t)0);

	if (desc >> 16 & 0xff)
		ok &= EQ("R_RESULT", dt_rec_word(r, R_RESULT), result);
	for (unsigned i = 0; i < 5; i++)
		ok &= EQ("R_X19..", dt_rec_word(r, R_X19 + 8 * i), 0x1900 + i);
	for (unsigned i = 0; copied > 0 && i < ABOVE / 8; i++)
		ok &= EQ("R_STACK", dt_rec_word(r, R_STACK + 8 * i), 0x510 + i);
	return ok;
}

/* The CPU's counter, as the stubs read it (stub-abi.h R_TIME). */
static uint64_t counter(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
}

/* A time read within [lo, hi], and not 0. */
static int in(uint64_t t, uint64_t lo, uint64_t hi)
{
	return t && t >= lo && t <= hi;
}

static uint64_t mall(uint64_t n)
{
	return call_with(fake_malloc_p, n);
}

#define MRET(n) ((n) + 0x1000 + (1ull << 63))	/* with x1 as the function left it */

static void cases(void)
{
	uint64_t e = my_entry(), tid = (uint64_t)syscall(SYS_gettid);
	int ok;

	/* a malloc, a free, with the thread's entry: its stack copied, cut at K_HI */
	reset();
	add_thread();
	ok = EQ("malloc", mall(100), MRET(100));
	ok &= full_record(0, d_malloc, 100, 100 + 0x1000, tid, ABOVE, 0);
	ok &= EQ("free", call_with(fake_free_p, 0xb10c), 0);
	ok &= full_record(1, d_free, 0xb10c, 0, tid, ABOVE, 0);
	ok &= EQ("HEAD", DATA(D_HEAD), 2) & EQ("calls", PT(e, S_MALLOC, PT_CALLS), 1) &
	      EQ("bytes", PT(e, S_MALLOC, PT_BYTES), 100) &
	      EQ("free calls", PT(e, S_FREE, PT_CALLS), 1) &
	      EQ("kept", CNT(S_MALLOC, C_KEPT), 1) & EQ("shared calls", CNT(S_MALLOC, C_CALLS), 0) &
	      EQ("fast", PT(e, S_MALLOC, PT_FAST), 0) & EQ("K_TAIL", THR(e, K_TAIL), 0);
	/* free(NULL) frees nothing: into the function, counted nowhere */
	ok &= EQ("free(NULL)", call_with(fake_free_p, 0), 0) & EQ("HEAD", DATA(D_HEAD), 2) &
	      EQ("free calls", PT(e, S_FREE, PT_CALLS), 1) &
	      EQ("free fast", PT(e, S_FREE, PT_FAST), 0) &
	      EQ("free shared calls", CNT(S_FREE, C_CALLS), 0);
	check("recorded: malloc and free, stack copied up to the thread's K_HI; free(NULL) not", ok);

	/* the size filter: below MIN_SIZE the prefilter counts and sends it on */
	reset();
	add_thread();
	DATA(D_MIN_SIZE) = 64;
	ok = EQ("malloc", mall(10), MRET(10)) & EQ("malloc", mall(64), MRET(64));
	ok &= EQ("HEAD", DATA(D_HEAD), 1) & full_record(0, d_malloc, 64, 64 + 0x1000, tid, ABOVE, 0);
	ok &= EQ("calls", PT(e, S_MALLOC, PT_CALLS), 2) & EQ("bytes", PT(e, S_MALLOC, PT_BYTES), 74) &
	      EQ("fast", PT(e, S_MALLOC, PT_FAST), 1) & EQ("kept", CNT(S_MALLOC, C_KEPT), 1) &
	      EQ("filtered", PT(e, S_MALLOC, PT_FILTERED), 0);
	check("size filter: a call below MIN_SIZE counted by the prefilter, not recorded", ok);

	/*
	 * No entry: shared counters, the stack by process_vm_readv, tid by
	 * gettid.  qemu-user has no process_vm_readv: then the record says
	 * -ENOSYS and COPY_FAIL counts it (the arm64 guest's test copies).
	 */
	reset();
	{
		struct iovec l = { fake_stack, 8 }, r = { fake_stack + 8, 8 };
		int has = syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0) == 8;

		ok = EQ("malloc", mall(7), MRET(7));
		ok &= full_record(0, d_malloc, 7, 7 + 0x1000, tid, has ? COPY_LEN : -ENOSYS, 0);
		ok &= EQ("shared calls", CNT(S_MALLOC, C_CALLS), 1) &
		      EQ("shared bytes", CNT(S_MALLOC, C_BYTES), 7) &
		      EQ("slow", DATA(D_COPY_SLOW), 1) & EQ("fail", DATA(D_COPY_FAIL), !has);
		check(has ? "a thread without an entry: shared counters, process_vm_readv" :
			    "a thread without an entry: shared counters, process_vm_readv (ENOSYS)",
		      ok);
	}

	/* the tid at a tp offset (negative: below tp on glibc) */
	reset();
	add_thread();
	DATA(D_TID_OFF) = (uint64_t)(uintptr_t)&fake_tid - tp();
	ok = EQ("malloc", mall(8), MRET(8)) & full_record(0, d_malloc, 8, 8 + 0x1000, 4242, ABOVE, 0);
	check("tid read at tp + D_TID_OFF", ok);

	/* sampling: every pool entry an interval of 150; the thread's countdown 150 */
	reset();
	add_thread();
	DATA(D_SAMPLE_MEAN) = 150;
	for (unsigned i = 0; i < DT_POOL_N; i++) {
		*(uint64_t *)(void *)(map + DT_POOL + 16 * i) = 150;
		*(uint64_t *)(void *)(map + DT_POOL + 16 * i + 8) = 151;
	}
	THR(e, K_LEFT) = 150;
	THR(e, K_MEAN) = 149;
	ok = EQ("malloc", mall(100), MRET(100)) & EQ("HEAD", DATA(D_HEAD), 0) &
	     EQ("left", THR(e, K_LEFT), 50) & EQ("fast", PT(e, S_MALLOC, PT_FAST), 1);
	ok &= EQ("malloc", mall(100), MRET(100)) & EQ("HEAD", DATA(D_HEAD), 1) &
	      full_record(0, d_malloc, 100, 100 + 0x1000, tid, ABOVE, 149) &
	      EQ("left", THR(e, K_LEFT), 150) & EQ("mean", THR(e, K_MEAN), 151) &
	      EQ("pool", DATA(D_POOL_IDX), 1) & EQ("calls", PT(e, S_MALLOC, PT_CALLS), 2) &
	      EQ("kept", CNT(S_MALLOC, C_KEPT), 1);
	/* sampled, a free of a block not in a set: only counted, by the prefilter */
	ok &= EQ("free", call_with(fake_free_p, 0x1234), 0) & EQ("HEAD", DATA(D_HEAD), 1) &
	      EQ("free fast", PT(e, S_FREE, PT_FAST), 1);
	/* sampled, free(NULL): not even counted */
	ok &= EQ("free(NULL)", call_with(fake_free_p, 0), 0) & EQ("HEAD", DATA(D_HEAD), 1) &
	      EQ("free calls", PT(e, S_FREE, PT_CALLS), 1) &
	      EQ("free fast", PT(e, S_FREE, PT_FAST), 1);
	/* sampled, the size filter: filtered apart */
	DATA(D_MIN_SIZE) = 16;
	ok &= EQ("malloc", mall(3), MRET(3)) & EQ("filtered", PT(e, S_MALLOC, PT_FILTERED), 1) &
	      EQ("left", THR(e, K_LEFT), 150);
	check("sampling: the countdown, the sample's mean, the next interval", ok);

	/* sampled with a set (--leaks): the sample's block in, its free recorded as a release */
	reset();
	add_thread();
	detour(fake_malloc_p, 0, 1, 0, d_malloc | (uint32_t)DF_SETADD << 24);
	DATA(D_SAMPLE_MEAN) = 10;
	DATA(D_SET_MASK) = DT_SET_N - 1;
	for (unsigned i = 0; i < DT_POOL_N; i++)
		*(uint64_t *)(void *)(map + DT_POOL + 16 * i) = 10;
	THR(e, K_LEFT) = 10;
	ok = EQ("malloc", mall(40), MRET(40));
	ok &= EQ("free other", call_with(fake_free_p, 0x999), 0) & EQ("HEAD", DATA(D_HEAD), 1);
	ok &= EQ("free", call_with(fake_free_p, 40 + 0x1000), 0) & EQ("HEAD", DATA(D_HEAD), 2);
	ok &= EQ("R_DESC", dt_rec_word(rec(1), R_DESC), d_free | (uint32_t)DF_RELEASE << 24) &
	      EQ("R_ARG0", dt_rec_word(rec(1), R_ARG0), 40 + 0x1000);
	ok &= EQ("free again", call_with(fake_free_p, 40 + 0x1000), 0) &
	      EQ("HEAD", DATA(D_HEAD), 2);
	check("the set: a sampled block's free recorded once, as a release", ok);
	detour(fake_malloc_p, 0, 1, 0, d_malloc);

	/* compact records: a call without a stack */
	reset();
	add_thread();
	detour(fake_malloc_p, 0, 1, 0, d_malloc | (uint32_t)DF_NOSTACK << 24);
	DATA(D_COMPACT) = 1;
	ok = EQ("malloc", mall(5), MRET(5));
	ok &= EQ("R_SEQ", dt_rec_word(rec(0), R_SEQ), 1) & EQ("R_TID", dt_rec_word(rec(0), R_TID), tid) &
	      EQ("R_DESC", dt_rec_word(rec(0), R_DESC),
		 DC_COMPACT | d_malloc | (uint32_t)DF_NOSTACK << 24) &
	      EQ("R_ARG0", dt_rec_word(rec(0), R_ARG0), 5) &
	      EQ("RC_RESULT", dt_rec_word(rec(0), RC_RESULT), 5 + 0x1000) &
	      EQ("RC_MEAN", dt_rec_word(rec(0), RC_MEAN), 0) &
	      EQ("R_SP untouched", dt_rec_word(rec(0), R_SP), 0);
	check("a compact record", ok);
	detour(fake_malloc_p, 0, 1, 0, d_malloc);

	/*
	 * The call's time: D_CLOCK 0, R_TIME 0 in a ring of stale bytes and
	 * RC_TIME not written; D_CLOCK 1, the counter between the reads
	 * around the call, full and compact records, entry and result probes.
	 */
	reset();
	add_thread();
	memset(ring, 0xa5, sizeof(ring));
	ok = EQ("malloc", mall(6), MRET(6)) & EQ("R_TIME, no clock", dt_rec_word(rec(0), R_TIME), 0);
	ok &= EQ("free", call_with(fake_free_p, 0xf1), 0) &
	      EQ("free's R_TIME, no clock", dt_rec_word(rec(1), R_TIME), 0);
	DATA(D_CLOCK) = 1;
	{
		uint64_t t0 = counter(), t1, t2, t3;

		ok &= EQ("malloc", mall(9), MRET(9));
		t1 = counter();
		ok &= EQ("free", call_with(fake_free_p, 0xf2), 0);
		t2 = counter();
		ok &= EQ("HEAD", DATA(D_HEAD), 4) & full_record(2, d_malloc, 9, 9 + 0x1000, tid, ABOVE, 0) &
		      full_record(3, d_free, 0xf2, 0, tid, ABOVE, 0);
		ok &= EQ("malloc's R_TIME in the call", in(dt_rec_word(rec(2), R_TIME), t0, t1), 1) &
		      EQ("free's R_TIME in the call", in(dt_rec_word(rec(3), R_TIME), t1, t2), 1);
		detour(fake_malloc_p, 0, 1, 0, d_malloc | (uint32_t)DF_NOSTACK << 24);
		DATA(D_COMPACT) = 1;
		ok &= EQ("compact malloc", mall(11), MRET(11));
		t3 = counter();
		ok &= EQ("compact", dt_rec_word(rec(4), R_DESC) & DC_COMPACT, DC_COMPACT) &
		      EQ("RC_TIME in the call", in(dt_rec_word(rec(4), RC_TIME), t2, t3), 1);
		DATA(D_CLOCK) = 0;
		ok &= EQ("compact malloc", mall(12), MRET(12)) &
		      EQ("RC_TIME not written, no clock", dt_rec_word(rec(5), RC_TIME),
			 0xa5a5a5a5a5a5a5a5ull);
		DATA(D_COMPACT) = 0;
		detour(fake_malloc_p, 0, 1, 0, d_malloc);
	}
	check("the call's time: R_TIME, RC_TIME with D_CLOCK, 0 or not written without", ok);

	/* a nested call: its return address in the nest table */
	reset();
	add_thread();
	DATA(D_NEST_LO) = called_ret - 4;
	DATA(D_NEST_HI) = called_ret + 4;
	DATA(D_NEST_N) = 1;
	DATA(D_NEST) = called_ret - 4;
	DATA(D_NEST + 8) = called_ret + 4;
	ok = EQ("malloc", mall(100), MRET(100)) & EQ("free", call_with(fake_free_p, 1), 0) &
	     EQ("HEAD", DATA(D_HEAD), 0) & EQ("calls", PT(e, S_MALLOC, PT_CALLS), 0) &
	     EQ("fast", PT(e, S_MALLOC, PT_FAST), 0) & EQ("free calls", PT(e, S_FREE, PT_CALLS), 0);
	check("nested calls: neither counted nor recorded", ok);

	/* a full ring: NREC records, then a bounded wait and a drop; then drops at once */
	reset();
	add_thread();
	ok = 1;
	for (unsigned i = 0; i < NREC + 2; i++)
		ok &= EQ("malloc", mall(i + 1), MRET(i + 1));
	ok &= EQ("HEAD", DATA(D_HEAD), NREC) & EQ("dropped", DATA(D_DROPPED), 2) &
	      EQ("stall", DATA(D_STALL_TAIL), 0) & full_record(NREC - 1, d_malloc, NREC, NREC + 0x1000,
								tid, ABOVE, 0);
	/* memtap read them: room again */
	tail = NREC;
	ok &= EQ("malloc", mall(99), MRET(99)) & EQ("HEAD", DATA(D_HEAD), NREC + 1) &
	      full_record(NREC, d_malloc, 99, 99 + 0x1000, tid, ABOVE, 0) &
	      EQ("K_TAIL", THR(e, K_TAIL), NREC);
	check("a full ring: records dropped, then kept again once TAIL moves", ok);

	/* a fork child's wiped data page: no ring, every record dropped */
	reset();
	DATA(D_TAILP) = 0;
	DATA(D_NREC) = 0;
	ok = EQ("malloc", mall(1), MRET(1)) & EQ("dropped", DATA(D_DROPPED), 1) &
	     EQ("HEAD", DATA(D_HEAD), 0);
	check("no ring: dropped", ok);
}

/* The frames arch_stub_frame() gives: at the entry points, and through the glue. */
static void frames(void)
{
	struct arch_stub_frame f;
	uint64_t s = (uint64_t)(uintptr_t)map + DT_TEMPLATE_MAX, ra, off;
	int ok;

	ok = EQ("result", arch_stub_frame(NULL, (uint64_t)(dt_common_result - dt_template), &f), 0) &
	     EQ("result ra_off", f.ra_off, DT_GLUE_RA);
	ok &= EQ("entry", arch_stub_frame(NULL, (uint64_t)(dt_common_entry - dt_template), &f), 0) &
	      EQ("entry ra_off", f.ra_off, STUB_RA_IN_REG);
	ok &= EQ("prefilter", arch_stub_frame(NULL, (uint64_t)(dt_common_prefilter - dt_template),
					      &f), 0) &
	      EQ("prefilter ra_off", f.ra_off, STUB_RA_IN_REG);
	ok &= EQ("prefilter + 4", arch_stub_frame(NULL, (uint64_t)(dt_common_prefilter -
								    dt_template) + 4, &f), 0) &
	      EQ("prefilter + 4 ra_off", f.ra_off, 8);
	ok &= EQ("sync + 8", arch_stub_frame(NULL, (uint64_t)(dt_common_sync - dt_template) + 8,
					     &f), 0) &
	      EQ("sync + 8 ra_off", f.ra_off, 40);
	/* slot 0, fake_malloc's result glue: its first word, its relocated entry */
	ok &= EQ("glue", arch_stub_frame(map + DT_TEMPLATE_MAX, 0, &f), 0) &
	      EQ("glue ra_off", f.ra_off, STUB_RA_IN_REG);
	ok &= EQ("orig", arch_stub_frame(map + DT_TEMPLATE_MAX, DT_ORIG, &f), 0) &
	      EQ("orig ra_off", f.ra_off, STUB_RA_IN_REG);
	/* the return address fake_malloc saw, into the glue: the caller from there */
	reset();
	mall(1);
	off = seen_ra - s;
	ok &= EQ("seen in slot 0", off < DT_ORIG, 1) &&
	      EQ("from the glue", arch_stub_frame(map + DT_TEMPLATE_MAX, off, &f), 0);
	if (ok) {
		memcpy(&ra, (void *)(uintptr_t)(seen_sp + f.ra_off), 8);
		ok &= EQ("caller's ra", ra, called_ret) &
		      EQ("caller's sp", seen_sp + f.ra_off + 8, called_sp);
		for (int i = 0; i < ARCH_NSAVED; i++)
			ok &= EQ("saved", f.saved[i], -1);
	}
	check("stub frames: the entry points, and the glue's to the caller", ok);
}

int main(void)
{
	size_t len = (size_t)(dt_template_end - dt_template);

	setvbuf(stdout, NULL, _IONBF, 0);
	if (len > DT_TEMPLATE_MAX) {
		printf("FAIL the template is %zu bytes, more than DT_TEMPLATE_MAX\n", len);
		return 1;
	}
	if (mprotect(fn_start, (size_t)(fn_stop - fn_start), PROT_READ | PROT_WRITE | PROT_EXEC)) {
		printf("FAIL mprotect of the functions: %s\n", strerror(errno));
		return 1;
	}
	map = a64_map_at((uint64_t)(uintptr_t)fn_start, 64ull << 20, DT_MAP_SIZE);
	if (!map) {
		printf("FAIL mmap 64 MiB above the functions: %s\n", strerror(errno));
		return 1;
	}
	memcpy(orig_malloc, fake_malloc_p, sizeof(orig_malloc));
	memcpy(orig_free, fake_free_p, sizeof(orig_free));
	memcpy(map, dt_template, len);
	__builtin___clear_cache((char *)map, (char *)map + len);
	if (detour(fake_malloc_p, 0, 1, 0, d_malloc) || detour(fake_free_p, 1, 0, 0, d_free))
		return 1;
	cases();
	frames();
	/* the sync point in the free's place */
	if (detour(fake_free_p, 2, 0, 1, S_SYNC))
		return 1;
	{
		uint64_t e = my_entry(), tid = (uint64_t)syscall(SYS_gettid);
		int ok;

		reset();
		add_thread();
		ok = EQ("sync", call_with(fake_free_p, 0x5c), 0) & EQ("HEAD", DATA(D_HEAD), 1) &
		     EQ("stall", DATA(D_STALL_TAIL), 0) &
		     full_record(0, S_SYNC, 0x5c, 0, tid, ABOVE, 0) &
		     EQ("calls", PT(e, S_SYNC, PT_CALLS), 1);
		check("a sync point: recorded, then a bounded wait for TAIL", ok);
	}
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

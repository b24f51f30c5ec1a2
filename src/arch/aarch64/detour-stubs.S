/*
 * detour-stubs.S (aarch64) - the common routines of the stub mapping
 * in A64 (layout: arch/stub-abi.h, stub-cpu.h).  Assembled into memtap
 * and copied verbatim into the target at the start of the code page;
 * they reach the data, counter, thread and pool pages pc-relatively
 * (ADR, within 1 MiB).  Nothing here calls libc; the only syscalls are
 * sched_yield and clock_nanosleep (full ring), gettid (no cached tid)
 * and process_vm_readv (the stack copy of a thread not in the thread
 * table: a short read at the end of the stack mapping, never a fault;
 * the others copy within their stack's bounds); a sync point's wait
 * sleeps with clock_nanosleep too.  Nothing traps: without memtap the
 * records fill the ring and are then dropped.
 *
 * arm64 is not TSO: TAIL is read with LDAR (the record's slot is
 * written only after memtap is seen done with it), a record is
 * published by an STLR of its R_SEQ, and every shared counter, the
 * countdowns, the set and HEAD are changed by LDXR/STXR loops (ARMv8.0:
 * no LSE needed).  A thread's own counters too: an exception return
 * clears the exclusive monitor, so that a signal handler's call between
 * the load and the store makes the store fail and retry, as x86-64's
 * one instruction that a handler cannot cut.
 *
 * No stub walk (D_WALK_MAX is never set for arm64: arch_stub_walks(),
 * stub-cpu.h): a record holds the stack copied from R_SP; compact
 * records (D_COMPACT) are made of the calls without a stack only.
 *
 * One template in three files, in this order: here, the entry points
 * and the prefilter; detour-stubs-record.S, keep_record (the filter,
 * the sampling, the ring); detour-stubs-lib.S, the small routines they
 * share.  The others are included below, never assembled alone.
 *
 * Registers: the routines clobber x9-x17 and the flags only (stub-cpu.h);
 * x17 holds the data page's address wherever the data page is read.
 * Frames (for stub-frame.c, which follows this code): a routine that
 * saves x30 saves it in the top word of its frame, by the same
 * instruction that moves sp (an STP x?, x30, [sp, #-16]!), and takes it
 * back by one LDP x?, x30, [sp], #16: at every instruction the return
 * address is in x30 with sp as at the entry, or at sp + n with the
 * caller's sp at sp + n + 8.
 *
 * Entry points (offsets from dt_template, for detour.c):
 *   dt_common_result  from a result probe's glue, after the function
 *                     returned: sp = the glue's frame (x0-x8, then the
 *                     caller's return address at DT_GLUE_RA), x0 the
 *                     result, w9 = DESC.  Records, pops the frame,
 *                     returns to the caller with x0 and x1.
 *   dt_common_entry   called (BL) by an entry probe's glue, sp = the
 *                     glue's frame, w9 = DESC.  Records; returns with
 *                     every register but x9-x17 and the flags kept.
 *   dt_common_sync    the same for a sync point's glue (execve), then
 *                     waits (bounded) until memtap read the ring so far.
 *   dt_common_prefilter  branched to by a prefilter (stub-abi.h): w9 =
 *                     DESC, x10 = the slot, x30 = the caller's return
 *                     address, the arguments in x0-x7.  Counts a call
 *                     the filter leaves out and goes on at slot +
 *                     DT_ORIG, or goes on at the glue, slot + DT_PF_LEN,
 *                     having counted nothing.
 */
#include "arch/stub-abi.h"

	.section .rodata.memtap_detour, "a", %progbits
	.balign 64
	.globl dt_template, dt_template_end, dt_common_result, dt_common_entry, dt_common_sync
	.globl dt_common_prefilter

	.set DATA, .Lt + DT_DATA
	.set COUNTERS, .Lt + DT_COUNTERS
	.set THREADS, .Lt + DT_THREADS
	.set PERTHREAD, .Lt + DT_PERTHREAD
	.set POOL, .Lt + DT_POOL
	.set SET, .Lt + DT_SET

/* [base + off] += val, atomically; ta, t: scratch, ws: a w register for the status */
	.macro atomic_add base, off, val, ta, t, ws
	add \ta, \base, #\off
.Laa\@:	ldxr \t, [\ta]
	add \t, \t, \val
	stxr \ws, \t, [\ta]
	cbnz \ws, .Laa\@
	.endm

/* the function's argument i as the glue saved it below x20, sp at the entry */
#define ARG(i) [x20, #(8 * (i) - DT_GLUE_FRAME)]

dt_template:
.Lt:
dt_common_result:
	add x10, sp, #DT_GLUE_FRAME
	bl keep_record
	ldr x30, [sp, #DT_GLUE_RA]
	add sp, sp, #DT_GLUE_FRAME
	ret

	.balign 16
dt_common_entry:
	add x10, sp, #DT_GLUE_FRAME
	b keep_record			/* it returns to the glue */

/*
 * dt_common_prefilter: the size from its argument registers by DESC's
 * kind (SK_ARG0..SK_ARG12; a realloc only when sampled, of a block that
 * is not in the set: keep_record takes it out), then the filter, the
 * thread's entry in the table as lookup_thread finds it, and sampled,
 * the thread's countdown: a call that keep_record would only count
 * (left out by the size; sampled, no sample point; a free with no set
 * and sampled, or with a set, never full, without its pointer) is
 * counted in the thread's block (sampled, left out by the size: as
 * filtered too) and goes on into the function; a nested call
 * (nest_check) and a free of NULL, which frees nothing, go on into it
 * at once, counted nowhere.  x30 is kept
 * on the stack meanwhile; x11 = the size, x16 = 0 left out by
 * the size, 1 only counted, 2 the thread's countdown.
 */
	.balign 16
dt_common_prefilter:
	stp x16, x30, [sp, #-16]!
	adr x17, DATA
	mov x11, x30
	bl nest_check
	cbnz x12, .Lpf_orig
	ubfx x16, x9, #16, #8
	cbz x16, .Lpf_free		/* SK_NONE */
	tst x9, #(DF_ARG0_KEEP << 24)
	b.eq 5f
	/* realloc: sampled, of no block in the set (else keep_record's), and
	   not of NULL (it may tail-call malloc: stub-abi.h, nested calls) */
	cbz x0, .Lpf_glue
	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbz x12, .Lpf_glue
	ldr x12, [x17, #D_SET_MASK]
	cbz x12, 5f
	mov x11, x0
	bl set_find
	cbnz x12, .Lpf_glue
5:	ubfx x16, x9, #16, #8
	mov x11, x0
	cmp x16, #SK_ARG0
	b.eq 1f
	mov x11, x1
	cmp x16, #SK_ARG1
	b.eq 1f
	mov x11, x2
	cmp x16, #SK_ARG2
	b.eq 1f
	/* a product: arg0 * arg1 (calloc), arg1 * arg2 (reallocarray) */
	cmp x16, #SK_ARG01
	b.ne 6f
	mul x11, x0, x1
	umulh x12, x0, x1
	b 7f
6:	mul x11, x1, x2
	umulh x12, x1, x2
7:	cbz x12, 1f
	mov x11, #-1			/* overflow: the largest size */
1:	mov x16, #0
	ldr x12, [x17, #D_MIN_SIZE]
	cmp x11, x12
	b.lo .Lpf_thread
	ldr x12, [x17, #D_MAX_SIZE]
	cmp x11, x12
	b.hi .Lpf_thread
	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbz x12, .Lpf_glue		/* not sampled: recorded */
	lsr x12, x11, #62
	cbnz x12, .Lpf_glue		/* more than a countdown holds */
	mov x16, #2
	b .Lpf_thread
	/* a free is only counted where keep_record would: see .Lunsized */
.Lpf_free:
	cbz x0, .Lpf_orig		/* free(NULL) frees nothing: counted nowhere */
	ldr x12, [x17, #D_SET_MASK]
	cbnz x12, 2f
	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbz x12, .Lpf_glue		/* not sampled, no set: every free */
	b 3f
2:	ldr x12, [x17, #D_SET_FULL]
	cbnz x12, .Lpf_glue
	mov x11, x0
	bl set_find
	cbnz x12, .Lpf_glue		/* a kept or sampled block: recorded */
3:	mov x11, #0			/* no byte */
	mov x16, #1
.Lpf_thread:
	bl lookup_thread		/* x12: the entry, x13 its offset */
	cbz x12, .Lpf_glue		/* no entry: keep_record counts it */
	adr x14, PERTHREAD		/* x13 = the slot's counters in its block */
	add x14, x14, x13, lsl #(PT_SHIFT - K_SHIFT)
	and x15, x9, #0xffff
	add x13, x14, x15, lsl #PT_SLOT_SHIFT
	cmp x16, #2
	b.ne 3f
	add x14, x12, #K_LEFT
4:	ldxr x15, [x14]
	subs x15, x15, x11
	b.le 8f				/* a sample point: keep_record's */
	stxr w9, x15, [x14]
	cbnz w9, 4b
	b 3f
8:	clrex
	b .Lpf_glue
3:	mov x14, #1
	atomic_add x13, PT_CALLS, x14, x12, x15, w9
	atomic_add x13, PT_BYTES, x11, x12, x15, w9
	atomic_add x13, PT_FAST, x14, x12, x15, w9
	cbnz x16, .Lpf_orig
	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbz x12, .Lpf_orig
	atomic_add x13, PT_FILTERED, x14, x12, x15, w9	/* sampled: apart from unsampled */
.Lpf_orig:				/* into the function */
	ldp x16, x30, [sp], #16
	add x10, x10, #DT_ORIG
	br x10
.Lpf_glue:
	ldp x16, x30, [sp], #16
	add x10, x10, #DT_PF_LEN
	br x10

/*
 * dt_common_sync: dt_common_entry for a sync point (execve), then a wait
 * until memtap has read every record reserved so far, this one too: the
 * call may replace the address space, ring included.  Bounded as a full
 * ring's wait: after WAIT_SPINS sleeps with TAIL unmoved, TAIL goes into
 * STALL_TAIL and no later call waits while it stays there.  A fork
 * child's wiped data page (no TAILP: no ring) waits for nothing.  x0-x3
 * and x8, which the sleep's syscall takes, are kept in its frame.
 */
	.balign 16
dt_common_sync:
	stp x8, x30, [sp, #-16]!
	stp x0, x1, [sp, #-32]!
	stp x2, x3, [sp, #16]
	add x10, sp, #(48 + DT_GLUE_FRAME)
	bl keep_record
	adr x17, DATA
	add x11, x17, #D_HEAD
	ldar x11, [x11]			/* HEAD, with this call's reservation */
	mov x12, #-1			/* TAIL as last seen */
	mov x13, #0			/* sleeps since TAIL last moved */
.Lsync:
	ldr x14, [x17, #D_TAILP]
	cbz x14, .Lsynced		/* no ring */
	ldar x14, [x14]
	cmp x14, x11
	b.hs .Lsynced
	ldr x15, [x17, #D_STALL_TAIL]
	cmp x14, x15
	b.eq .Lsynced			/* no memtap: no wait */
	cmp x14, x12
	b.eq 1f
	mov x12, x14
	mov x13, #0
1:	add x13, x13, #1
	ldr x15, [x17, #D_WAIT_SPINS]
	cmp x13, x15
	b.hi .Lsync_stall
	mov x0, #1			/* clock_nanosleep(CLOCK_MONOTONIC, 0, &wait_ts, NULL) */
	mov x1, #0
	adr x2, .Lwait_ts
	mov x3, #0
	mov x8, #115
	svc #0
	b .Lsync
.Lsync_stall:
	str x14, [x17, #D_STALL_TAIL]
.Lsynced:
	ldp x2, x3, [sp, #16]
	ldp x0, x1, [sp], #32
	ldp x8, x30, [sp], #16
	ret

#include "detour-stubs-record.S"
#include "detour-stubs-lib.S"

	.balign 8
.Lwait_ts:
	.quad 0, DT_WAIT_NS		/* a struct timespec */
.Lhash_mul:
	.quad K_HASH_MUL
	.balign 16
dt_template_end:

	.section .note.GNU-stack, "", %progbits

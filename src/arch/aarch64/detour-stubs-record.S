/*
 * detour-stubs-record.S (aarch64) - keep_record, what every stub does
 * with a call: the nest check, the size filter, the byte sampling and
 * the set of kept blocks, then a record reserved in the ring, filled,
 * the stack copied, and committed.  Part of the template, included by
 * detour-stubs.S in its place, never assembled alone (its symbols,
 * macros and ARG() are detour-stubs.S's).
 */

/*
 * keep_record: x10 = sp at the function's entry (the glue's frame below
 * it: the arguments x0-x8, the caller's return address), w9 = DESC, x0
 * = the result.  Every register but x9-x17 and the flags is kept.
 * Count, filter, sample, reserve a record, fill it, copy the stack,
 * commit; a nested call (nest_check) or a free of NULL, nothing.
 *
 * Its frame: [sp] the sequence number; x0-x8 at 32..96; the mean at
 * 104; x19-x25 at 112..160 (as the stub found them: the record's); the
 * call's time (R_TIME, 0: none) at 168; x26 and x30 at 176 and 184, the
 * top.  Within it: x17 the data page, x19 the slot's shared counters,
 * x20 sp at entry, x21 DESC, x22 the thread's entry or 0, x23 the
 * slot's counters in its block (then the record), x24 the size (then
 * the bytes filled), x25 DESC as recorded (DF_RELEASE, DF_NOSTACK
 * added), x26 the chain.
 */
#define KR_FRAME 192
#define KR_RESULT 32
#define KR_MEAN 104
#define KR_TIME 168

	.balign 16
keep_record:
	stp x26, x30, [sp, #-16]!
	sub sp, sp, #(KR_FRAME - 16)
	stp x0, x1, [sp, #32]
	stp x2, x3, [sp, #48]
	stp x4, x5, [sp, #64]
	stp x6, x7, [sp, #80]
	str x8, [sp, #96]
	stp x19, x20, [sp, #112]
	stp x21, x22, [sp, #128]
	stp x23, x24, [sp, #144]
	str x25, [sp, #160]
	str xzr, [sp, #KR_MEAN]
	str xzr, [sp, #KR_TIME]
	adr x17, DATA
	mov x20, x10
	mov w21, w9
	mov x25, x21
	tst x21, #(DF_ALWAYS << 24)
	b.ne 0f
	ldr x11, [x20, #-8]		/* the caller's return address */
	bl nest_check
	cbnz x12, .Lout			/* nested: part of the outer call */
0:
	/* free(NULL) frees nothing: neither counted nor recorded */
	ubfx x12, x21, #16, #8
	cbnz x12, .Lnot_null		/* sized: not a free */
	tst x21, #(DF_SETDEL << 24)
	b.eq .Lnot_null
	ldr x12, ARG(0)
	cbz x12, .Lout
.Lnot_null:
	/* x19 = this slot's shared counters */
	and x12, x21, #0xffff
	adr x19, COUNTERS
	add x19, x19, x12, lsl #C_SHIFT

	/* the size, by kind: x24 (none: 0), counted with the call */
	mov x24, #0
	ubfx x12, x21, #16, #8
	cbz x12, .Lcount		/* SK_NONE */
	ldr x24, ARG(0)
	cmp x12, #SK_ARG0
	b.eq .Lcount
	ldr x24, ARG(1)
	cmp x12, #SK_ARG1
	b.eq .Lcount
	ldr x24, ARG(2)
	cmp x12, #SK_ARG2
	b.eq .Lcount
	ldr x13, ARG(1)
	cmp x12, #SK_ARG01
	b.ne 4f
	ldr x14, ARG(0)			/* arg0 * arg1 */
	b 5f
4:	ldr x14, ARG(2)			/* arg1 * arg2 */
5:	mul x24, x13, x14
	umulh x13, x13, x14
	cbz x13, .Lcount
	mov x24, #-1			/* overflow: the largest size */
.Lcount:
	bl lookup_thread		/* x12: the entry, x13 its offset */
	mov x22, x12
	mov x14, #1
	cbz x22, 1f
	adr x15, PERTHREAD
	add x15, x15, x13, lsl #(PT_SHIFT - K_SHIFT)
	and x12, x21, #0xffff
	add x23, x15, x12, lsl #PT_SLOT_SHIFT
	atomic_add x23, PT_CALLS, x14, x12, x15, w16
	atomic_add x23, PT_BYTES, x24, x12, x15, w16
	b 2f
1:	atomic_add x19, C_CALLS, x14, x12, x15, w16
	atomic_add x19, C_BYTES, x24, x12, x15, w16
2:
	ubfx x12, x21, #16, #8
	cbz x12, .Lunsized
	tst x21, #(DF_ALWAYS << 24)
	b.ne .Lkeep			/* a syscall wrapper: every call */
	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbnz x12, .Lsample
	tst x21, #(DF_ARG0_KEEP << 24)
	b.eq 6f
	ldr x12, ARG(0)
	cbnz x12, .Lxrealloc		/* realloc of a block: its release counts */
6:	ldr x12, [x17, #D_MIN_SIZE]
	cmp x24, x12
	b.lo .Lout			/* not sampled: filtered = calls - kept */
	ldr x12, [x17, #D_MAX_SIZE]
	cmp x24, x12
	b.ls .Lsampled			/* kept: into the set, if any */
	b .Lout
	/* not sampled, with a set (the size filter): arg0 out if it is freed */
.Lxrealloc:
	ldr x11, ARG(0)
	ldr x12, [sp, #KR_RESULT]
	cbnz x12, 7f
	cbnz x24, .Lkeep		/* failed: the block stays */
7:	bl set_take			/* moved, resized or freed (size 0) */
	ldr x12, [sp, #KR_RESULT]
	cbz x12, .Lkeep
	ldr x12, [x17, #D_MIN_SIZE]
	cmp x24, x12
	b.lo .Lkeep
	ldr x12, [x17, #D_MAX_SIZE]
	cmp x24, x12
	b.ls .Lsampled			/* the new block is kept by its size */
	b .Lkeep
	/*
	 * Unsized (free): sampled, only the frees of sampled blocks; not
	 * sampled, with a set, only the frees of kept blocks, unless the
	 * set ever had no room for one; else every call.
	 */
.Lunsized:
	tst x21, #(DF_ALWAYS << 24)
	b.ne .Lkeep
	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbnz x12, 13f
	ldr x12, [x17, #D_SET_MASK]
	cbz x12, .Lkeep
	ldr x12, [x17, #D_SET_FULL]
	cbnz x12, .Lkeep
13:	tst x21, #(DF_SETDEL << 24)
	b.eq 14f
	ldr x11, ARG(0)
	bl set_take
	cbz x12, .Lout			/* only counted */
	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbz x12, .Lkeep			/* the free of a kept block */
	orr x25, x25, #(DF_RELEASE << 24)
	b .Lrecord			/* the free of a sampled block */
14:	ldr x12, [x17, #D_SAMPLE_MEAN]
	cbz x12, .Lkeep
	b .Lout
.Lsfiltered:
	mov x14, #1
	cbz x22, 11f
	atomic_add x23, PT_FILTERED, x14, x12, x15, w16	/* the thread's own */
	b .Lunsampled
11:	atomic_add x19, C_FILTERED, x14, x12, x15, w16
.Lunsampled:				/* counted: calls - kept - filtered */
	tst x25, #(DF_RELEASE << 24)
	b.ne .Lrecord			/* realloc of a sampled block */
	b .Lout

	/* sampled: the filter first, then the thread's countdown */
.Lsample:
	tst x21, #(DF_SETDEL << 24)
	b.eq 10f
	ldr x11, ARG(0)
	bl set_take
	cbz x12, 10f
	orr x25, x25, #(DF_RELEASE << 24)
	orr x25, x25, #(DF_NOSTACK << 24)
10:	ldr x12, [x17, #D_MIN_SIZE]
	cmp x24, x12
	b.lo .Lsfiltered
	ldr x12, [x17, #D_MAX_SIZE]
	cmp x24, x12
	b.hi .Lsfiltered
	cbz x24, .Lunsampled		/* no byte, no sample point */
	mov x11, x24
	lsr x12, x24, #62
	cbz x12, 9f
	mov x11, #(1 << 62)		/* more: as many as the countdown holds */
9:	cbz x22, .Lshared		/* count_call's lookup_thread */
	add x14, x22, #K_LEFT
1:	ldxr x12, [x14]
	sub x12, x12, x11
	stxr w13, x12, [x14]
	cbnz w13, 1b
	cmp x12, #0
	b.gt .Lunsampled
	ldr x12, [x22, #K_MEAN]
	str x12, [sp, #KR_MEAN]
	bl next_interval		/* x12: the interval, x13 its mean */
	str x12, [x22, #K_LEFT]
	str x13, [x22, #K_MEAN]
	b .Lsampled
.Lshared:
	add x14, x17, #D_SHARED_LEFT
1:	ldxr x12, [x14]			/* the countdown before */
	sub x13, x12, x11
	stxr w15, x13, [x14]
	cbnz w15, 1b
	cmp x12, x11
	b.gt .Lunsampled
	ldr x12, [x17, #D_SHARED_MEAN]
	str x12, [sp, #KR_MEAN]
	bl next_interval
	str x12, [x17, #D_SHARED_LEFT]
	str x13, [x17, #D_SHARED_MEAN]
.Lsampled:				/* a sample or a kept call: its block into the set */
	tst x25, #(DF_RELEASE << 24)
	b.eq 11f
	bic x25, x25, #(DF_RELEASE << 24)
	bic x25, x25, #(DF_NOSTACK << 24)
11:	tst x21, #(DF_SETADD << 24)
	b.eq .Lkeep
	ldr x11, [sp, #KR_RESULT]
	tst x21, #(DF_WORD << 24)
	b.eq 12f
	cbnz w11, .Lkeep		/* failed: nothing stored */
	ldr x11, ARG(0)
	ldr x11, [x11]
12:	bl set_put
.Lkeep:
	ldr x12, [x17, #D_KEEP_ALL]
	cbnz x12, .Lrecord
	mov x14, #1
	atomic_add x19, C_KEPT, x14, x12, x15, w16
.Lrecord:
	/*
	 * the call's time, before a full ring makes it wait (stub-abi.h):
	 * the ISB keeps the read after the function's return, as memtap's
	 * arch_counter_read() keeps its own in program order
	 */
	ldr x12, [x17, #D_CLOCK]
	cbz x12, 1f
	isb
	mrs x12, cntvct_el0
	str x12, [sp, #KR_TIME]
1:
	/* the chain of a compact record (no stack: 0), -1: a full one */
	mov x26, #-1
	ldr x12, [x17, #D_COMPACT]
	cbz x12, 1f
	tst x25, #(DF_ALWAYS << 24)
	b.ne 1f
	tst x25, #(DF_WORD << 24)
	b.ne 1f
	tst x25, #(DF_NOSTACK << 24)
	b.eq 1f
	mov x26, #0
1:	mov x24, #0			/* sleeps since TAIL last moved */
	mov x23, #-1			/* TAIL as last seen */
	add x16, x17, #D_HEAD
.Lreserve:
	ldr x11, [x16]
.Lretry:
	ldr x12, [x17, #D_TAILP]
	cbz x12, .Ldrop			/* no ring: a fork child's wiped page */
	ldr x14, [x17, #D_NREC]
	cbz x22, 2f
	ldr x13, [x22, #K_TAIL]
	sub x13, x11, x13
	cmp x13, x14
	b.lo 3f				/* room as of the TAIL it last read */
	ldar x13, [x12]
	str x13, [x22, #K_TAIL]
2:	ldar x13, [x12]			/* memtap's reads of the slot before our writes */
	sub x13, x11, x13
	cmp x13, x14
	b.hs .Lfull
3:	ldxr x13, [x16]
	cmp x13, x11
	b.ne 4f
	add x14, x11, #1
	stxr w15, x14, [x16]
	cbnz w15, 3b
	b .Lreserved
4:	clrex
	mov x11, x13			/* the new head */
	b .Lretry
.Lfull:
	ldar x13, [x12]			/* TAIL */
	ldr x14, [x17, #D_STALL_TAIL]
	cmp x13, x14
	b.eq .Ldrop			/* memtap has not moved since */
	cmp x13, x23
	b.eq 8f
	mov x23, x13			/* memtap drains: wait afresh */
	mov x24, #0
8:	add x24, x24, #1
	ldr x14, [x17, #D_WAIT_SPINS]
	cmp x24, x14
	b.hi .Lstall
	cmp x24, #DT_WAIT_YIELDS
	b.hi 9f
	/* the CPU to memtap, or to another thread: a sleep's timer slack
	   would leave it idle (stub-abi.h) */
	mov x8, #124			/* SYS_sched_yield */
	svc #0
	b .Lreserve
9:	mov x0, #1			/* clock_nanosleep(CLOCK_MONOTONIC, 0, &wait_ts, NULL) */
	mov x1, #0
	adr x2, .Lwait_ts
	mov x3, #0
	mov x8, #115			/* SYS_clock_nanosleep */
	svc #0
	b .Lreserve
.Lstall:
	str x13, [x17, #D_STALL_TAIL]
.Ldrop:
	mov x14, #1
	atomic_add x17, D_DROPPED, x14, x12, x15, w16
	b .Lout

.Lreserved:
	str x11, [sp]			/* seq */
	ldr x12, [x17, #D_MASK]
	and x12, x11, x12
	ldr x13, [x17, #D_REC_SIZE]
	ldr x14, [x17, #D_RING]
	madd x23, x12, x13, x14		/* x23 = the record */
	ldr x12, [x17, #D_TID_OFF]
	cbz x12, .Lgettid
	mrs x13, tpidr_el0
	ldr w12, [x13, x12]		/* glibc's cached tid in struct pthread, below tp */
	b .Lhave_tid
.Lgettid:
	mov x8, #178			/* SYS_gettid */
	svc #0
	mov w12, w0
.Lhave_tid:
	ldp x14, x15, ARG(0)
	stp x14, x15, [x23, #R_ARG0]
	ldr x14, ARG(2)
	str x14, [x23, #R_ARG2]
	cmn x26, #1
	b.ne .Lcompact
	str x12, [x23, #R_TID]
	str x25, [x23, #R_DESC]
	ldp x14, x15, ARG(3)
	stp x14, x15, [x23, #R_ARG3]
	ldr x14, [sp, #KR_RESULT]
	str x14, [x23, #R_RESULT]
	str x20, [x23, #R_SP]
	ldr x14, [x20, #-8]
	str x14, [x23, #R_RET]
	ldp x14, x15, [sp, #112]	/* x19, x20 as the stub found them */
	stp x14, x15, [x23, #R_X19]
	ldp x14, x15, [sp, #128]
	stp x14, x15, [x23, #R_X21]
	ldr x14, [sp, #144]
	str x14, [x23, #R_X23]
	str x29, [x23, #R_X29]
	mov x14, #0
	tst x25, #(DF_WORD << 24)
	b.eq 7f
	ldr w15, [sp, #KR_RESULT]
	cbnz w15, 7f			/* failed: nothing stored */
	ldr x14, ARG(0)			/* memptr */
	ldr x14, [x14]
7:	str x14, [x23, #R_WORD]
	mov x14, #-1
	str x14, [x23, #R_WALK]		/* no walk: a copy, or nothing */

	mov x0, #0
	ldr x1, [x17, #D_COPY_LEN]
	cbz x1, .Lcopy_done
	tst x25, #(DF_NOSTACK << 24)
	b.ne .Lcopy_done
	cbz x22, .Lvmreadv
	ldr x12, [x22, #K_LO]
	cmp x20, x12
	b.lo .Lvmreadv			/* not on its stack: sigaltstack... */
	ldr x12, [x22, #K_HI]
	subs x12, x12, x20
	b.ls .Lvmreadv
	cmp x1, x12
	csel x1, x12, x1, hi		/* not past the end of its stack */
	mov x0, x1
	add x12, x23, #R_STACK
	mov x13, x20
1:	cmp x1, #16
	b.lo 2f
	ldp x14, x15, [x13], #16
	stp x14, x15, [x12], #16
	sub x1, x1, #16
	b 1b
2:	cbz x1, .Lcopy_done
	ldrb w14, [x13], #1
	strb w14, [x12], #1
	sub x1, x1, #1
	b 2b
.Lvmreadv:
	mov x14, #1
	atomic_add x17, D_COPY_SLOW, x14, x12, x15, w16
	/* process_vm_readv(pid, &local, 1, &remote, 1, 0): short, not a fault */
	sub sp, sp, #32
	add x12, x23, #R_STACK
	stp x12, x1, [sp]
	stp x20, x1, [sp, #16]
	ldr x0, [x17, #D_PID]
	mov x1, sp
	mov x2, #1
	add x3, sp, #16
	mov x4, #1
	mov x5, #0
	mov x8, #270			/* SYS_process_vm_readv */
	svc #0
	add sp, sp, #32
	tbz x0, #63, .Lcopy_done
	mov x14, #1
	atomic_add x17, D_COPY_FAIL, x14, x12, x15, w16
.Lcopy_done:
	str x0, [x23, #R_COPIED]
	ldr x12, [sp, #KR_MEAN]
	str x12, [x23, #R_MEAN]
	ldr x12, [sp, #KR_TIME]
	str x12, [x23, #R_TIME]
	cmp x0, #0
	csel x0, xzr, x0, lt
	add x24, x0, #R_STACK		/* the bytes it filled */
.Lcommit:
	ldr x11, [sp]			/* seq */
	add x11, x11, #1
	stlr x11, [x23]			/* R_SEQ, the commit: the last store, release */
	ldr x12, [x17, #D_PREFETCH]
	cbz x12, .Lout
	ldr x12, [x17, #D_MASK]
	and x12, x11, x12
	ldr x13, [x17, #D_REC_SIZE]
	ldr x14, [x17, #D_RING]
	madd x12, x12, x13, x14		/* the next record */
	add x24, x24, x12
2:	prfm pstl1keep, [x12]
	add x12, x12, #64
	cmp x12, x24
	b.lo 2b
	b .Lout
.Lcompact:				/* x26: the chain; w12: the tid */
	orr x12, x12, x26, lsl #RC_CHAIN_SHIFT
	str x12, [x23, #R_TID]
	orr x14, x25, #(1 << 32)	/* DC_COMPACT */
	str x14, [x23, #R_DESC]
	ldr x14, [sp, #KR_RESULT]
	str x14, [x23, #RC_RESULT]
	ldr x14, [sp, #KR_MEAN]
	str x14, [x23, #RC_MEAN]
	mov x24, #64
	ldr x12, [x17, #D_CLOCK]
	cbz x12, .Lcommit		/* no time: the second line not written */
	ldr x14, [sp, #KR_TIME]
	str x14, [x23, #RC_TIME]
	mov x24, #128			/* two lines to fetch for the next one */
	b .Lcommit
.Lout:
	ldp x0, x1, [sp, #32]
	ldp x2, x3, [sp, #48]
	ldp x4, x5, [sp, #64]
	ldp x6, x7, [sp, #80]
	ldr x8, [sp, #96]
	ldp x19, x20, [sp, #112]
	ldp x21, x22, [sp, #128]
	ldp x23, x24, [sp, #144]
	ldr x25, [sp, #160]
	add sp, sp, #(KR_FRAME - 16)
	ldp x26, x30, [sp], #16
	ret

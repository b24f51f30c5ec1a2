/*
 * detour-stubs-lib.S (aarch64) - the stubs' small routines: the nest
 * table, the thread table, the set of kept blocks, the sampling pool.
 * Part of the template, included by detour-stubs.S in its place, never
 * assembled alone (its symbols and macros are detour-stubs.S's).  Each
 * is called by BL with x17 = the data page, keeps x0-x10, x17 and
 * x18-x30 (the set's routines keep what they take of them in a frame)
 * and clobbers the registers it names.
 */

/*
 * nest_check: x12 = 1 if x11, a return address, is in the nest table
 * (stub-abi.h: made by another probed call), else 0.  Clobbers x13-x15.
 */
	.balign 16
nest_check:
	mov x12, #0
	ldr x13, [x17, #D_NEST_LO]
	cmp x11, x13
	b.lo 2f
	ldr x13, [x17, #D_NEST_HI]
	cmp x11, x13
	b.hs 2f
	ldr x13, [x17, #D_NEST_N]
	cmp x13, #D_NEST_MAX
	b.hi 2f
	add x14, x17, #D_NEST
1:	cbz x13, 2f
	sub x13, x13, #1
	ldp x15, x12, [x14], #16	/* lo, hi */
	cmp x11, x15
	b.lo 3f
	cmp x11, x12
	b.lo 4f
3:	mov x12, #0
	b 1b
4:	mov x12, #1
2:	ret

/*
 * lookup_thread: x12 = this thread's entry in the thread table (keyed
 * by tp, TPIDR_EL0), or 0; when found, x13 = its offset in the thread
 * page (its index << K_SHIFT).  Clobbers x14, x15.
 */
	.balign 16
lookup_thread:
	mrs x13, tpidr_el0
	ldr x14, .Lhash_mul
	mul x14, x14, x13
	lsr x14, x14, #K_HASH_SHIFT
	lsl x14, x14, #K_SHIFT
	adr x12, THREADS
	.rept K_PROBES
	ldr x15, [x12, x14]
	cmp x15, x13
	b.eq 1f
	add x14, x14, #(1 << K_SHIFT)
	and x14, x14, #((K_NENT - 1) << K_SHIFT)
	.endr
	mov x12, #0
	ret
1:	add x12, x12, x14
	mov x13, x14
	ret

/*
 * set_take: x11 = a pointer; out of the set of kept blocks if it is
 * in, and then x12 = 1, else 0.  set_find: x12 = 1 if it is in (left
 * in).  set_put: x11 into the set (SET_FULL += 1 when none of its
 * entries is free).  Without a set (SET_MASK 0) or for a null pointer
 * they do nothing (x12 = 0).  Clobber x12-x16; x19-x21 are kept in
 * their frame, with x30.
 */
	.balign 16
set_find:
	mov x16, #0			/* find, leave it in */
	b 5f
set_take:
	mov x16, #1			/* take it out */
5:	stp x21, x30, [sp, #-16]!
	stp x19, x20, [sp, #-16]!
	mov x12, #0
	ldr x13, [x17, #D_SET_MASK]
	cbz x13, 9f
	cbz x11, 9f
	ldr x14, .Lhash_mul
	mul x14, x14, x11
	lsr x14, x14, #32
	mov x19, #S_PROBES
	adr x20, SET
1:	and x14, x14, x13
	add x15, x20, x14, lsl #3
	ldr x12, [x15]
	cmp x12, x11
	b.ne 2f
	cbz x16, 8f			/* found */
3:	ldxr x12, [x15]
	cmp x12, x11
	b.ne 4f
	stxr w21, xzr, [x15]
	cbnz w21, 3b
	b 8f				/* taken out */
4:	clrex
2:	add x14, x14, #1
	subs x19, x19, #1
	b.ne 1b
	mov x12, #0
	b 9f
8:	mov x12, #1
9:	ldp x19, x20, [sp], #16
	ldp x21, x30, [sp], #16
	ret

	.balign 16
set_put:
	stp x21, x30, [sp, #-16]!
	stp x19, x20, [sp, #-16]!
	ldr x13, [x17, #D_SET_MASK]
	cbz x13, 9f
	cbz x11, 9f
	ldr x14, .Lhash_mul
	mul x14, x14, x11
	lsr x14, x14, #32
	mov x19, #S_PROBES
	adr x20, SET
1:	and x14, x14, x13
	add x15, x20, x14, lsl #3
	ldr x12, [x15]
	cbnz x12, 2f
3:	ldxr x12, [x15]
	cbnz x12, 4f
	stxr w21, x11, [x15]
	cbnz w21, 3b
	b 9f
4:	clrex
2:	add x14, x14, #1
	subs x19, x19, #1
	b.ne 1b
	mov x16, #1
	atomic_add x17, D_SET_FULL, x16, x15, x12, w21
9:	ldp x19, x20, [sp], #16
	ldp x21, x30, [sp], #16
	ret

/*
 * next_interval: x12 = the next sampling interval from the pool, x13
 * = its mean.  Clobbers x14-x16.
 */
	.balign 16
next_interval:
	add x14, x17, #D_POOL_IDX
1:	ldxr x15, [x14]
	add x16, x15, #1
	stxr w13, x16, [x14]
	cbnz w13, 1b
	and x15, x15, #(DT_POOL_N - 1)
	adr x14, POOL
	add x14, x14, x15, lsl #P_SHIFT
	ldp x12, x13, [x14]
	ret

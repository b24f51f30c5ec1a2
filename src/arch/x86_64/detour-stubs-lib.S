/*
 * detour-stubs-lib.S (x86_64) - the stubs' small routines: the
 * counters (count_call), the nest table, the thread table, the set of
 * kept blocks, the sampling pool.  Part of the template, included by
 * detour-stubs.S in its place, never assembled alone (its symbols,
 * macros and D() are detour-stubs.S's).
 */

/*
 * count_call: one call of the slot of DESC (r10) and its rax bytes,
 * into this thread's own block when it has an entry (plain adds), else
 * into the slot's shared counters at rbx (locked).  r8 = the thread's
 * entry, or 0; when not 0, r9 = the slot's counters in its block.
 * Clobbers rdx, rdi, r9 and the flags.
 */
	.balign 16
count_call:
	call lookup_thread
	test r8, r8
	jz 1f
	entry_offset PT_SHIFT
	lea rdx, [rip + PERTHREAD]
	add rdi, rdx
	movzx r9d, r10w			/* the slot */
	shl r9d, PT_SLOT_SHIFT
	add r9, rdi
	inc qword ptr [r9 + PT_CALLS]
	add qword ptr [r9 + PT_BYTES], rax
	ret
1:	lock inc qword ptr [rbx + C_CALLS]
	lock add qword ptr [rbx + C_BYTES], rax
	ret

/*
 * nest_check: is rax, a return address, in the nest table (stub-abi.h:
 * made by another probed call)?  ZF = 1 if so.  Clobbers rcx, rdx.
 */
	.balign 16
nest_check:
	cmp rax, qword ptr D(D_NEST_LO)
	jb 2f
	cmp rax, qword ptr D(D_NEST_HI)
	jae 2f
	mov rcx, qword ptr D(D_NEST_N)
	cmp rcx, D_NEST_MAX
	ja 2f
	lea rdx, [rip + DATA + D_NEST]
1:	sub rcx, 1
	jb 2f
	cmp rax, qword ptr [rdx]
	jb 3f
	cmp rax, qword ptr [rdx + 8]
	jb 4f
3:	add rdx, 16
	jmp 1b
4:	cmp eax, eax			/* ZF = 1 */
	ret
2:	test rsp, rsp			/* ZF = 0 */
	ret

/*
 * lookup_thread: r8 = this thread's entry in the thread table, or 0.
 * Clobbers rdx, rdi, r9 and the flags.
 */
	.balign 16
lookup_thread:
	thread_hash rdx, r9
	lea r8, [rip + THREADS]
	mov edi, K_PROBES
1:	cmp qword ptr [r8 + r9 + K_KEY], rdx
	je 2f
	add r9d, 1 << K_SHIFT
	and r9d, (K_NENT - 1) << K_SHIFT
	dec edi
	jnz 1b
	xor r8d, r8d
	ret
2:	add r8, r9
	ret

/*
 * set_take: rdi = a pointer; out of the set of kept blocks if it is
 * in, and then ZF = 1.  set_find: ZF = 1 if it is in (left in).
 * set_put: rdi into the set (SET_FULL += 1 when
 * none of its entries is free).  All keep every register but the
 * flags; without a set (SET_MASK 0) or for a null pointer they do
 * nothing (ZF = 0).
 */
	.balign 16
set_find:
	push 0				/* [rsp + 48] below: find, leave it in */
	jmp 5f
set_take:
	push 1				/* take it out */
5:	push rax
	push rcx
	push rdx
	push rsi
	push r8
	push r9
	call set_start
	jz 3f
1:	and rcx, rdx
	cmp qword ptr [rsi + rcx * 8], rdi
	jne 2f
	cmp qword ptr [rsp + 48], 0
	je 4f				/* found: ZF = 1 */
	mov rax, rdi
	xor r9d, r9d
	lock cmpxchg qword ptr [rsi + rcx * 8], r9
	je 4f				/* taken out: ZF = 1 */
2:	inc rcx
	dec r8d
	jnz 1b
3:	test rsp, rsp			/* ZF = 0 */
4:	pop r9
	pop r8
	pop rsi
	pop rdx
	pop rcx
	pop rax
	lea rsp, [rsp + 8]		/* the mode; the flags stay */
	ret

	.balign 16
set_put:
	push rax
	push rcx
	push rdx
	push rsi
	push r8
	push r9
	call set_start
	jz 4f
1:	and rcx, rdx
	cmp qword ptr [rsi + rcx * 8], 0
	jne 2f
	xor eax, eax
	lock cmpxchg qword ptr [rsi + rcx * 8], rdi
	je 4f
2:	inc rcx
	dec r8d
	jnz 1b
	lock inc qword ptr D(D_SET_FULL)
4:	pop r9
	pop r8
	pop rsi
	pop rdx
	pop rcx
	pop rax
	ret

/*
 * set_start: for rdi, rsi = the set, rdx = its mask, rcx = the entry to
 * try first, r8 = the tries; ZF = 1 when there is nothing to do (no
 * set, a null pointer).  Clobbers rax.
 */
	.balign 16
set_start:
	mov rdx, qword ptr D(D_SET_MASK)
	test rdx, rdx
	jz 1f
	test rdi, rdi
	jz 1f
	lea rsi, [rip + SET]
	movabs rcx, K_HASH_MUL
	imul rcx, rdi
	shr rcx, 32
	mov r8d, S_PROBES
	test rsp, rsp			/* ZF = 0 */
1:	ret

/*
 * next_interval: rdx = the next sampling interval from the pool, rdi
 * = its mean.  Clobbers r9 and the flags.
 */
	.balign 16
next_interval:
	mov r9d, 1
	lock xadd qword ptr D(D_POOL_IDX), r9
	and r9d, DT_POOL_N - 1
	shl r9d, P_SHIFT
	lea rdi, [rip + POOL]
	mov rdx, qword ptr [rdi + r9]
	mov rdi, qword ptr [rdi + r9 + 8]
	ret

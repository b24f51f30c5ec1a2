/*
 * detour-stubs-record.S (x86_64) - keep_record, what every stub does
 * with a call: the nest check, the size filter, the byte sampling and
 * the set of kept blocks, then a record reserved in the ring, filled,
 * the stack copied or walked, and committed.  Part of the template,
 * included by detour-stubs.S in its place, never assembled alone (its
 * symbols, macros and D() are detour-stubs.S's).
 */

/*
 * keep_record: r11 = rsp at the function's entry (the pushed arguments
 * below it; a DF_ARG0_KEEP probe's HEAD at its entry at r11 - 40, in
 * r8's place), r10 = DESC, rax = the result.  Every register but r10, r11
 * and the flags is preserved.  Count, filter, sample, reserve a record,
 * fill it, copy the stack, commit; a nested call (nest_check) or a
 * free of NULL, nothing.
 */
	.balign 16
keep_record:
	push 0				/* [rsp + 104]: the call's time (R_TIME), 0: none */
	push 0				/* [rsp + 96]: this thread's entry (count_call), or 0 */
	push 0				/* [rsp + 88]: the mean it is kept at, 0: every call */
	push rdi			/* [rsp + 80] after the sub below */
	push rsi			/* 72 */
	push rdx			/* 64 */
	push rcx			/* 56 */
	push r8				/* 48 */
	push r9				/* 40 */
	push rax			/* 32: result */
	push rbx			/* 24 */
	push r10			/* 16: DESC */
	push r11			/* 8: entry rsp */
	sub rsp, 8			/* 0: seq */
	test r10d, DF_ALWAYS << 24
	jnz 0f
	mov rax, qword ptr [r11]	/* the caller's return address */
	call nest_check
	je .Lout			/* nested: part of the outer call */
0:
	/* free(NULL) frees nothing: neither counted nor recorded */
	mov eax, r10d
	and eax, (0xff << 16) | (DF_SETDEL << 24)
	cmp eax, DF_SETDEL << 24	/* unsized, DF_SETDEL: a free */
	jne .Lnot_null
	cmp qword ptr [r11 - 8], 0
	je .Lout
.Lnot_null:

	/* rbx = this slot's shared counters */
	mov ebx, r10d
	and ebx, 0xffff
	shl rbx, C_SHIFT
	lea rdx, [rip + COUNTERS]
	add rbx, rdx

	/* the size, by kind: rax (none: 0), counted with the call */
	xor eax, eax
	mov edx, r10d
	shr edx, 16
	and edx, 0xff
	cmp edx, SK_NONE
	je .Lcount
	cmp edx, SK_ARG0
	jne 1f
	mov rax, qword ptr [r11 - 8]
	jmp .Lcount
1:	cmp edx, SK_ARG1
	jne 2f
	mov rax, qword ptr [r11 - 16]
	jmp .Lcount
2:	cmp edx, SK_ARG2
	jne 3f
	mov rax, qword ptr [r11 - 24]
	jmp .Lcount
3:	cmp edx, SK_ARG01
	jne 4f
	mov rax, qword ptr [r11 - 8]
	mul qword ptr [r11 - 16]
	jmp 5f
4:	mov rax, qword ptr [r11 - 16]
	mul qword ptr [r11 - 24]
5:	jnc .Lcount
	mov rax, -1			/* overflow: the largest size */
.Lcount:
	call count_call			/* r8: this thread's entry, or 0; r9 */
	mov qword ptr [rsp + 96], r8
	test r10d, 0xff << 16
	jz .Lunsized
	test r10d, DF_ALWAYS << 24
	jnz .Lkeep			/* a syscall wrapper: every call */
	cmp qword ptr D(D_SAMPLE_MEAN), 0
	jne .Lsample
	test r10d, DF_ARG0_KEEP << 24
	jz 6f
	cmp qword ptr [r11 - 8], 0
	jne .Lxrealloc			/* realloc of a block: its release counts */
6:	cmp rax, qword ptr D(D_MIN_SIZE)
	jb .Lfiltered
	cmp rax, qword ptr D(D_MAX_SIZE)
	jbe .Lsampled			/* kept: into the set, if any */
.Lfiltered:				/* not sampled: filtered = calls - kept */
	jmp .Lout
	/* not sampled, with a set (the size filter): arg0 out if it is freed */
.Lxrealloc:
	mov rdi, qword ptr [r11 - 8]
	cmp qword ptr [rsp + 32], 0
	jne 7f
	test rax, rax
	jnz .Lkeep			/* failed: the block stays */
7:	call set_take			/* moved, resized or freed (size 0) */
	cmp qword ptr [rsp + 32], 0
	je .Lkeep
	cmp rax, qword ptr D(D_MIN_SIZE)
	jb .Lkeep
	cmp rax, qword ptr D(D_MAX_SIZE)
	jbe .Lsampled			/* the new block is kept by its size */
	jmp .Lkeep
	/*
	 * Unsized (free): sampled, only the frees of sampled blocks; not
	 * sampled, with a set, only the frees of kept blocks, unless the
	 * set ever had no room for one; else every call.
	 */
.Lunsized:
	test r10d, DF_ALWAYS << 24
	jnz .Lkeep
	cmp qword ptr D(D_SAMPLE_MEAN), 0
	jne 13f
	cmp qword ptr D(D_SET_MASK), 0
	je .Lkeep
	cmp qword ptr D(D_SET_FULL), 0
	jne .Lkeep
13:	test r10d, DF_SETDEL << 24
	jz 14f
	mov rdi, qword ptr [r11 - 8]
	call set_take
	jne .Lout			/* only counted */
	cmp qword ptr D(D_SAMPLE_MEAN), 0
	je .Lkeep			/* the free of a kept block */
	or dword ptr [rsp + 16], DF_RELEASE << 24
	jmp .Lrecord			/* the free of a sampled block */
14:	cmp qword ptr D(D_SAMPLE_MEAN), 0
	je .Lkeep
	jmp .Lout
.Lsfiltered:
	test r8, r8
	jz 11f
	inc qword ptr [r9 + PT_FILTERED]	/* count_call's r9: the thread's own */
	jmp .Lunsampled
11:	lock inc qword ptr [rbx + C_FILTERED]
.Lunsampled:				/* counted: calls - kept - filtered */
	test dword ptr [rsp + 16], DF_RELEASE << 24
	jnz .Lrecord			/* realloc of a sampled block */
	jmp .Lout

	/* sampled: the filter first, then the thread's countdown */
.Lsample:
	test r10d, DF_SETDEL << 24
	jz 10f
	mov rdi, qword ptr [r11 - 8]
	call set_take
	jne 10f
	or dword ptr [rsp + 16], (DF_RELEASE | DF_NOSTACK) << 24
10:	cmp rax, qword ptr D(D_MIN_SIZE)
	jb .Lsfiltered
	cmp rax, qword ptr D(D_MAX_SIZE)
	ja .Lsfiltered
	test rax, rax
	jz .Lunsampled			/* no byte, no sample point */
	mov rdx, rax
	shr rdx, 62
	jz 9f
	mov eax, 1
	shl rax, 62			/* more: as many as the countdown holds */
9:	test r8, r8			/* count_call's lookup_thread */
	jz .Lshared
	sub qword ptr [r8 + K_LEFT], rax
	jg .Lunsampled
	mov rdx, qword ptr [r8 + K_MEAN]
	mov qword ptr [rsp + 88], rdx
	call next_interval
	mov qword ptr [r8 + K_LEFT], rdx
	mov qword ptr [r8 + K_MEAN], rdi
	jmp .Lsampled
.Lshared:
	mov rdx, rax
	neg rdx
	lock xadd qword ptr D(D_SHARED_LEFT), rdx	/* rdx = the countdown before */
	cmp rdx, rax
	jg .Lunsampled
	mov rdx, qword ptr D(D_SHARED_MEAN)
	mov qword ptr [rsp + 88], rdx
	call next_interval
	mov qword ptr D(D_SHARED_LEFT), rdx
	mov qword ptr D(D_SHARED_MEAN), rdi
.Lsampled:				/* a sample or a kept call: its block into the set */
	test dword ptr [rsp + 16], DF_RELEASE << 24
	jz 11f
	and dword ptr [rsp + 16], ~((DF_RELEASE | DF_NOSTACK) << 24)
11:	test r10d, DF_SETADD << 24
	jz .Lkeep
	mov rdi, qword ptr [rsp + 32]	/* the result */
	test r10d, DF_WORD << 24
	jz 12f
	test edi, edi
	jnz .Lkeep			/* failed: nothing stored */
	mov rdi, qword ptr [r11 - 8]
	mov rdi, qword ptr [rdi]
12:	call set_put
.Lkeep:
	cmp qword ptr D(D_KEEP_ALL), 0
	jne .Lrecord
	lock inc qword ptr [rbx + C_KEPT]
.Lrecord:
	/* the call's time, before a full ring makes it wait (stub-abi.h) */
	cmp qword ptr D(D_CLOCK), 0
	je .Lstamped
	rdtsc
	shl rdx, 32
	or rax, rdx
	mov qword ptr [rsp + 104], rax
.Lstamped:
	/* HEAD's line, for the reservation below: other threads take it */
	cmp qword ptr D(D_PREFETCH), 0
	je .Lhead_asked
	prefetchw D(D_HEAD)
.Lhead_asked:
	/* [rsp]: until reserved, the chain of a compact record, -1: a full one */
	mov qword ptr [rsp], -1
	cmp qword ptr D(D_COMPACT), 0
	je 1f
	test dword ptr [rsp + 16], (DF_ALWAYS | DF_WORD) << 24
	jnz 1f
	mov qword ptr [rsp], 0		/* no stack: chain 0 */
	test dword ptr [rsp + 16], DF_NOSTACK << 24
	jnz 1f
	mov rsi, qword ptr [rsp + 8]
	mov r8, qword ptr [rsp + 96]
	call chain_walk
	mov qword ptr [rsp], rax
1:
	xor r9d, r9d			/* sleeps since TAIL last moved */
	mov r8, -1			/* TAIL as last seen */
.Lreserve:
	mov rsi, qword ptr [rsp + 96]	/* this thread's entry (K_TAIL), or 0 */
	mov rax, qword ptr D(D_HEAD)
.Lretry:
	mov rcx, qword ptr D(D_TAILP)
	test rcx, rcx
	jz .Ldrop			/* no ring: a fork child's wiped page */
	test rsi, rsi
	jz 2f
	mov rdx, rax
	sub rdx, qword ptr [rsi + K_TAIL]
	cmp rdx, qword ptr D(D_NREC)
	jb 3f				/* room as of the TAIL it last read */
	mov rdx, qword ptr [rcx]
	mov qword ptr [rsi + K_TAIL], rdx
2:	mov rdx, rax
	sub rdx, qword ptr [rcx]
	cmp rdx, qword ptr D(D_NREC)
	jae .Lfull
3:	lea rdx, [rax + 1]
	lock cmpxchg qword ptr D(D_HEAD), rdx
	jne .Lretry			/* rax = the new head */
	jmp .Lreserved
.Lfull:
	mov rdx, qword ptr [rcx]		/* TAIL */
	cmp rdx, qword ptr D(D_STALL_TAIL)
	je .Ldrop			/* memtap has not moved since */
	cmp rdx, r8
	je 8f
	mov r8, rdx			/* memtap drains: wait afresh */
	xor r9d, r9d
8:	inc r9
	cmp r9, qword ptr D(D_WAIT_SPINS)
	ja .Lstall
	cmp r9, DT_WAIT_YIELDS
	ja 9f
	/* the CPU to memtap, or to another thread: a sleep's timer slack
	   would leave it idle (stub-abi.h) */
	mov eax, 24			/* SYS_sched_yield */
	syscall
	jmp .Lreserve
9:	/* clock_nanosleep(CLOCK_MONOTONIC, 0, &wait_ts, NULL) */
	mov edi, 1
	xor esi, esi
	lea rdx, [rip + .Lwait_ts]
	xor r10d, r10d
	mov eax, 230			/* SYS_clock_nanosleep */
	syscall
	jmp .Lreserve
.Lstall:
	mov qword ptr D(D_STALL_TAIL), rdx
.Ldrop:
	lock inc qword ptr D(D_DROPPED)
	jmp .Lout

.Lreserved:
	mov rdi, qword ptr [rsp]	/* the chain, or -1 */
	mov qword ptr [rsp], rax	/* seq */
	mov rbx, rax
	and rbx, qword ptr D(D_MASK)
	imul rbx, qword ptr D(D_REC_SIZE)
	add rbx, qword ptr D(D_RING)	/* rbx = the record */
	mov rax, qword ptr D(D_TID_OFF)
	test rax, rax
	jz .Lgettid
	mov eax, dword ptr fs:[rax]	/* glibc's cached tid in struct pthread */
	jmp .Lhave_tid
.Lgettid:
	mov eax, 186			/* SYS_gettid */
	syscall
.Lhave_tid:
	mov rsi, qword ptr [rsp + 8]	/* entry rsp */
	mov rcx, qword ptr [rsi - 8]
	mov qword ptr [rbx + R_ARG0], rcx
	mov rcx, qword ptr [rsi - 16]
	mov qword ptr [rbx + R_ARG1], rcx
	mov rcx, qword ptr [rsi - 24]
	mov qword ptr [rbx + R_ARG2], rcx
	mov rcx, qword ptr [rsp + 16]	/* DESC */
	test ecx, DF_ARG0_KEEP << 24
	jz 4f
	/* realloc: the records reserved since its entry (DC_ENTRY_SHIFT) */
	mov rdx, qword ptr [rsp]	/* seq */
	sub rdx, qword ptr [rsi - 40]	/* HEAD at the entry, where the glue put it */
	cmp rdx, DC_ENTRY_MAX - 1
	jb 5f
	mov edx, DC_ENTRY_MAX - 1	/* or older, or not a HEAD: too old to tell */
5:	inc rdx
	shl rdx, DC_ENTRY_SHIFT
	or rcx, rdx
4:	cmp rdi, -1
	jne .Lcompact
	mov qword ptr [rbx + R_TID], rax
	mov qword ptr [rbx + R_DESC], rcx
	mov rax, qword ptr [rsi - 32]
	mov qword ptr [rbx + R_ARG3], rax
	mov rax, qword ptr [rsi - 40]
	mov qword ptr [rbx + R_ARG4], rax
	mov rax, qword ptr [rsp + 32]
	mov qword ptr [rbx + R_RESULT], rax
	mov qword ptr [rbx + R_SP], rsi
	mov rax, qword ptr [rsi]
	mov qword ptr [rbx + R_RET], rax
	mov rax, qword ptr [rsp + 24]
	mov qword ptr [rbx + R_RBX], rax
	mov qword ptr [rbx + R_RBP], rbp
	mov qword ptr [rbx + R_R12], r12
	mov qword ptr [rbx + R_R13], r13
	mov qword ptr [rbx + R_R14], r14
	mov qword ptr [rbx + R_R15], r15
	xor eax, eax
	test dword ptr [rsp + 16], DF_WORD << 24
	jz 7f
	cmp dword ptr [rsp + 32], 0
	jne 7f				/* failed: nothing stored */
	mov rax, qword ptr [rsi - 8]	/* memptr */
	mov rax, qword ptr [rax]
7:	mov qword ptr [rbx + R_WORD], rax

	xor eax, eax
	mov qword ptr [rbx + R_WALK], -1	/* no walk: a copy, or nothing */
	mov rcx, qword ptr D(D_COPY_LEN)
	test rcx, rcx
	jz .Lcopy_done
	test dword ptr [rsp + 16], DF_NOSTACK << 24
	jnz .Lcopy_done
	mov r8, qword ptr [rsp + 96]	/* this thread's entry */
	test r8, r8
	jz .Lvmreadv
	cmp rsi, qword ptr [r8 + K_LO]
	jb .Lvmreadv			/* not on its stack: sigaltstack... */
	mov rax, qword ptr [r8 + K_HI]
	sub rax, rsi
	jbe .Lvmreadv
	cmp qword ptr D(D_WALK_MAX), 0
	je 3f
	mov rdx, rcx			/* the room after R_STACK */
	call table_walk			/* rax: the bytes it wrote */
	jmp .Lcopy_done
3:	cmp rcx, rax
	cmova rcx, rax			/* not past the end of its stack */
	mov rax, rcx
	lea rdi, [rbx + R_STACK]
	rep movsb
	jmp .Lcopy_done
.Lvmreadv:
	lock inc qword ptr D(D_COPY_SLOW)
	/* process_vm_readv(pid, &local, 1, &remote, 1, 0): short, not a fault */
	sub rsp, 32
	lea rax, [rbx + R_STACK]
	mov qword ptr [rsp], rax
	mov qword ptr [rsp + 8], rcx
	mov qword ptr [rsp + 16], rsi
	mov qword ptr [rsp + 24], rcx
	mov rdi, qword ptr D(D_PID)
	mov rsi, rsp
	mov edx, 1
	lea r10, [rsp + 16]
	mov r8d, 1
	xor r9d, r9d
	mov eax, 310			/* SYS_process_vm_readv */
	syscall
	add rsp, 32
	test rax, rax
	jns .Lcopy_done
	lock inc qword ptr D(D_COPY_FAIL)
.Lcopy_done:
	mov qword ptr [rbx + R_COPIED], rax
	mov rcx, qword ptr [rsp + 88]
	mov qword ptr [rbx + R_MEAN], rcx
	mov rcx, qword ptr [rsp + 104]
	mov qword ptr [rbx + R_TIME], rcx
	test rax, rax
	jns 1f
	xor eax, eax
1:	lea r8, [rax + R_STACK]		/* the bytes it filled */
.Lcommit:
	mov rax, qword ptr [rsp]	/* seq */
	inc rax
	mov qword ptr [rbx + R_SEQ], rax	/* commit: the last store */
	cmp qword ptr D(D_PREFETCH), 0
	je .Lout
	and rax, qword ptr D(D_MASK)
	imul rax, qword ptr D(D_REC_SIZE)
	add rax, qword ptr D(D_RING)	/* the next record */
	add r8, rax
2:	prefetchw [rax]
	add rax, 64
	cmp rax, r8
	jb 2b
	jmp .Lout
.Lcompact:				/* rdi: the chain; eax: the tid */
	shl rdi, RC_CHAIN_SHIFT
	or rax, rdi
	mov qword ptr [rbx + R_TID], rax
	bts rcx, 32			/* DC_COMPACT */
	mov qword ptr [rbx + R_DESC], rcx
	mov rax, qword ptr [rsp + 32]
	mov qword ptr [rbx + RC_RESULT], rax
	mov rax, qword ptr [rsp + 88]
	mov qword ptr [rbx + RC_MEAN], rax
	mov r8d, 64
	cmp qword ptr D(D_CLOCK), 0
	je .Lcommit
	mov rax, qword ptr [rsp + 104]
	mov qword ptr [rbx + RC_TIME], rax
	mov r8d, 128			/* two lines to fetch for the next one */
	jmp .Lcommit
.Lout:
	add rsp, 8
	pop r11
	pop r10
	pop rbx
	pop rax
	pop r9
	pop r8
	pop rcx
	pop rdx
	pop rsi
	pop rdi
	lea rsp, [rsp + 24]		/* the mean, the entry, the time */
	ret

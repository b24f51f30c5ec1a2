/*
 * detour-stubs.S (x86_64) - the common routines of the stub mapping
 * (layout: arch/stub-abi.h, stub-cpu.h).  Assembled into memtap and
 * copied verbatim into the target at the start of the code page; they
 * reach the data and counter pages rip-relatively.  Nothing here calls
 * libc; the only
 * syscalls are clock_nanosleep (full ring), gettid (no cached tid) and
 * process_vm_readv (the stack copy of a thread not in the stack table:
 * a short read at the end of the stack mapping, never a fault; the
 * others copy with rep movsb within their stack's bounds); a sync
 * point's wait sleeps with clock_nanosleep too.  Nothing
 * traps: without memtap the records fill the ring and are then dropped.
 *
 * Entry points (offsets from dt_template, for detour.c):
 *   dt_common_result  from a result probe's glue, after the function
 *                     returned: [rsp] = r8 rcx rdx rsi rdi as pushed at
 *                     entry, then the caller's return address; rax the
 *                     result; r10d = DESC.  Records, pops, returns to
 *                     the caller with rax.
 *   dt_common_entry   called by an entry probe's glue: [rsp] = the
 *                     glue's return, then the five pushed registers,
 *                     then the caller's return address; r10d = DESC.
 *                     Records; every register but r10, r11 and the
 *                     flags preserved.
 *   dt_common_sync    the same for a sync point's glue (execve), then
 *                     waits (bounded) until memtap read the ring so far.
 *   dt_common_prefilter  jumped to by a prefilter (stub-abi.h): r10d =
 *                     DESC, r11 = the slot, [rsp] = the caller's return
 *                     address.  Counts a call the filter leaves out and
 *                     goes on at slot + DT_ORIG, or goes on at the glue,
 *                     slot + DT_PF_LEN, having counted nothing.
 */
#include "arch/stub-abi.h"

	.intel_syntax noprefix
	.section .rodata.memtap_detour, "a", @progbits
	.balign 64
	.globl dt_template, dt_template_end, dt_common_result, dt_common_entry, dt_common_sync
	.globl dt_common_prefilter

	.set DATA, .Lt + DT_DATA
	.set COUNTERS, .Lt + DT_COUNTERS
	.set THREADS, .Lt + DT_THREADS
	.set PERTHREAD, .Lt + DT_PERTHREAD
	.set POOL, .Lt + DT_POOL
	.set SET, .Lt + DT_SET

#define D(off) [rip + DATA + (off)]

/* key = the TCB's self pointer, idx = the offset of its first place in the thread table */
	.macro thread_hash key, idx
	mov \key, qword ptr fs:0
	movabs \idx, K_HASH_MUL
	imul \idx, \key
	shr \idx, K_HASH_SHIFT
	shl \idx, K_SHIFT
	.endm

dt_template:
.Lt:
dt_common_result:
	lea r11, [rsp + 40]
	call keep_record
	add rsp, 40
	ret

	.balign 16
dt_common_entry:
	lea r11, [rsp + 48]
	call keep_record
	ret

/*
 * dt_common_prefilter: the size from its argument registers by DESC's
 * kind (SK_ARG0..SK_ARG12; a realloc only when sampled, of a block that
 * is not in the set: keep_record takes it out), then the filter, the
 * thread's entry in the table as lookup_thread finds it (its first
 * place, else the K_PROBES - 1 after it), and sampled, the thread's
 * countdown: a call that keep_record would only count (left out by the
 * size; sampled, no sample point; a free with no set and sampled, or
 * with a set, never full, without its pointer) is counted as
 * count_call does (sampled, left out by the size: as filtered too) and
 * goes on into the function; a nested call (nest_check) goes on into it
 * at once, counted nowhere.  rcx and rdx are saved, rax is free.
 */
	.balign 16
dt_common_prefilter:
	push rcx
	push rdx			/* [rsp] */
	mov rax, qword ptr [rsp + 16]	/* the caller's return address */
	call nest_check
	je .Lpf_nested
	mov ecx, r10d
	shr ecx, 16
	and ecx, 0xff
	jz .Lpf_free			/* SK_NONE */
	test r10d, DF_ARG0_KEEP << 24
	jz 5f
	/* realloc: sampled, of no block in the set (else keep_record's), and
	   not of NULL (it may tail-call malloc: stub-abi.h, nested calls) */
	test rdi, rdi
	jz .Lpf_glue2
	cmp qword ptr D(D_SAMPLE_MEAN), 0
	je .Lpf_glue2
	cmp qword ptr D(D_SET_MASK), 0
	je 5f
	call set_find
	je .Lpf_glue2
5:	mov rax, rdi
	cmp ecx, SK_ARG0
	je 1f
	mov rax, rsi
	cmp ecx, SK_ARG1
	je 1f
	mov rax, rdx
	cmp ecx, SK_ARG2
	je 1f
	/* a product: arg0 * arg1 (calloc), arg1 * arg2 (reallocarray) */
	cmp ecx, SK_ARG01
	jne 6f
	mov rax, rdi
	mul rsi				/* rdx is back at the end */
	jmp 7f
6:	mov rax, rsi
	mul qword ptr [rsp]		/* arg2 */
7:	jnc 1f
	mov rax, -1			/* overflow: the largest size */
1:	push rax			/* [rsp + 8]: the size */
	push 0				/* [rsp]: 0 left out by the size, 1 only
					   counted, 2 the thread's countdown */
	cmp rax, qword ptr D(D_MIN_SIZE)
	jb .Lpf_thread
	cmp rax, qword ptr D(D_MAX_SIZE)
	ja .Lpf_thread
	cmp qword ptr D(D_SAMPLE_MEAN), 0
	je .Lpf_glue			/* not sampled: recorded */
	shr rax, 62
	jnz .Lpf_glue			/* more than a countdown holds */
	mov qword ptr [rsp], 2
	jmp .Lpf_thread
	/* a free is only counted where keep_record would: see .Lunsized */
.Lpf_free:
	push 0				/* no byte */
	push 1
	cmp qword ptr D(D_SET_MASK), 0
	jne 2f
	cmp qword ptr D(D_SAMPLE_MEAN), 0
	jne .Lpf_thread
	jmp .Lpf_glue			/* not sampled, no set: every free */
2:	cmp qword ptr D(D_SET_FULL), 0
	jne .Lpf_glue
	call set_find
	je .Lpf_glue			/* a kept or sampled block: recorded */
.Lpf_thread:
	thread_hash rax, rcx
	lea rdx, [rip + THREADS]
	add rdx, rcx
	cmp qword ptr [rdx + K_KEY], rax
	jne .Lpf_probe
.Lpf_found:
	cmp qword ptr [rsp], 2
	jne 3f
	mov rax, qword ptr [rsp + 8]
	sub qword ptr [rdx + K_LEFT], rax
	jg 3f				/* no sample point: only counted */
	add qword ptr [rdx + K_LEFT], rax	/* a sample: keep_record's */
	jmp .Lpf_glue
3:	shl rcx, PT_SHIFT - K_SHIFT	/* the entry's block */
	lea rdx, [rip + PERTHREAD]
	add rcx, rdx
	movzx edx, r10w			/* the slot */
	shl edx, PT_SLOT_SHIFT
	add rcx, rdx
	mov rax, qword ptr [rsp + 8]
	inc qword ptr [rcx + PT_CALLS]
	add qword ptr [rcx + PT_BYTES], rax
	inc qword ptr [rcx + PT_FAST]
	cmp qword ptr [rsp], 0
	jne 4f
	cmp qword ptr D(D_SAMPLE_MEAN), 0
	je 4f
	inc qword ptr [rcx + PT_FILTERED]	/* sampled: filtered apart from unsampled */
4:	lea rsp, [rsp + 16]
	pop rdx
	pop rcx
	add r11, DT_ORIG
	jmp r11
	/* not at its first place: the next ones, as lookup_thread tries them */
.Lpf_probe:
	push K_PROBES - 1
8:	add ecx, 1 << K_SHIFT
	and ecx, (K_NENT - 1) << K_SHIFT
	lea rdx, [rip + THREADS]
	add rdx, rcx
	cmp qword ptr [rdx + K_KEY], rax
	je 9f
	dec qword ptr [rsp]
	jnz 8b
	pop rax
	jmp .Lpf_glue			/* no entry: keep_record counts it */
9:	pop rax
	jmp .Lpf_found
.Lpf_glue:
	lea rsp, [rsp + 16]
.Lpf_glue2:
	pop rdx
	pop rcx
	add r11, DT_PF_LEN
	jmp r11
.Lpf_nested:				/* part of the outer call: into the function */
	pop rdx
	pop rcx
	add r11, DT_ORIG
	jmp r11

/*
 * dt_common_sync: dt_common_entry for a sync point (execve), then a wait
 * until memtap has read every record reserved so far, this one too: the
 * call may replace the address space, ring included.  Bounded as a full
 * ring's wait: after WAIT_SPINS sleeps with TAIL unmoved, TAIL goes into
 * STALL_TAIL and no later call waits while it stays there.  A fork
 * child's wiped data page (no TAILP: no ring) waits for nothing.
 */
	.balign 16
dt_common_sync:
	lea r11, [rsp + 48]
	call keep_record
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push r8
	push r9
	mov r8, qword ptr D(D_HEAD)
	mov r9, -1			/* TAIL as last seen */
	xor ebx, ebx			/* sleeps since TAIL last moved */
.Lsync:
	mov rax, qword ptr D(D_TAILP)
	test rax, rax
	jz .Lsynced			/* no ring */
	mov rax, qword ptr [rax]
	cmp rax, r8
	jae .Lsynced
	cmp rax, qword ptr D(D_STALL_TAIL)
	je .Lsynced			/* no memtap: no wait */
	cmp rax, r9
	je 1f
	mov r9, rax
	xor ebx, ebx
1:	inc rbx
	cmp rbx, qword ptr D(D_WAIT_SPINS)
	ja .Lsync_stall
	mov edi, 1			/* clock_nanosleep(CLOCK_MONOTONIC, 0, &wait_ts, NULL) */
	xor esi, esi
	lea rdx, [rip + .Lwait_ts]
	xor r10d, r10d
	mov eax, 230
	syscall
	jmp .Lsync
.Lsync_stall:
	mov qword ptr D(D_STALL_TAIL), rax
.Lsynced:
	pop r9
	pop r8
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	ret

/*
 * keep_record: r11 = rsp at the function's entry (the pushed arguments
 * below it), r10 = DESC, rax = the result.  Every register but r10, r11
 * and the flags is preserved.  Count, filter, sample, reserve a record,
 * fill it, copy the stack, commit; a nested call (nest_check), nothing.
 */
	.balign 16
keep_record:
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
	cmp rdi, -1
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
	lea rsp, [rsp + 16]		/* the mean, the entry */
	ret

/*
 * entry_offset SHIFT: rdi = the index of the thread table entry at r8,
 * shifted left by SHIFT (its block's offset).  Clobbers rdx.
 */
.macro entry_offset shift
	lea rdx, [rip + THREADS]
	mov rdi, r8
	sub rdi, rdx			/* the entry's index << K_SHIFT */
	shl rdi, \shift - K_SHIFT
.endm

/*
 * chain_walk: rsi = rsp at the function's entry, r8 = this thread's
 * entry in the thread table (or 0).  rax = the id of the
 * chain (stub-abi.h) of the stub walk from there: the thread's memo of
 * a walk from there that would read the same words (D_MEMO), else the
 * walk done into a buffer on the stack (a memo of it made, its reads
 * logged); -1 when there is no walk, no room for the buffer, the walk
 * has a tail, or the chain table does not know it.  Keeps rbx,
 * rbp and r12-r15; clobbers rcx, rdx, rsi, rdi, r8-r11 and the flags.
 */
	.balign 16
chain_walk:
	push rbx
	push r12			/* this thread's memo block, busy; 0: none */
	push r13			/* the memo entry of this return address */
	xor r12d, r12d
	mov rax, -1
	mov rcx, qword ptr D(D_WALK_MAX)
	test rcx, rcx
	jz 9f
	cmp rcx, CH_MAX_PCS
	ja 9f
	cmp qword ptr D(D_CHAINS), 0
	je 9f
	test r8, r8
	jz 9f
	cmp rsi, qword ptr [r8 + K_LO]
	jb 9f
	cmp rsi, qword ptr [r8 + K_HI]
	jae 9f
	lea rdi, [rsp - CH_BUF - CH_MARGIN]
	cmp rdi, qword ptr [r8 + K_LO]
	jb 9f
	/* the memo: unless in use (a signal handler's call inside ours) */
	mov r13, qword ptr D(D_MEMO)
	test r13, r13
	jz 4f
	entry_offset MEMO_SHIFT
	add r13, rdi
	cmp qword ptr [r13 + MB_BUSY], 0
	jne 4f
	mov qword ptr [r13 + MB_BUSY], 1
	mov r12, r13
	mov rdx, qword ptr [rsi]	/* the return address */
	movabs rdi, K_HASH_MUL
	imul rdi, rdx
	shr rdi, 64 - ME_N_SHIFT
	shl edi, ME_SHIFT
	lea r13, [r12 + rdi]		/* its entry, or the other of the pair */
	cmp qword ptr [r13 + ME_PC], rdx
	je 13f
	xor r13, 1 << ME_SHIFT
	cmp qword ptr [r13 + ME_PC], rdx
	je 13f
	xor r13, 1 << ME_SHIFT		/* neither: the first, unless it is taken */
	cmp qword ptr [r13 + ME_PC], 0
	je 4f
	xor r13, 1 << ME_SHIFT
	jmp 4f
13:	cmp qword ptr [r13 + ME_SP], rsi
	jne 4f
	mov r9, qword ptr D(D_WTAB)
	mov r9, qword ptr [r9 + W_DIR]
	cmp qword ptr [r13 + ME_DIR], r9
	jne 4f
	mov r9, qword ptr [r8 + K_LO]
	cmp qword ptr [r13 + ME_LO], r9
	jne 4f
	mov r9, qword ptr [r8 + K_HI]
	cmp qword ptr [r13 + ME_HI], r9
	jne 4f
	mov rcx, qword ptr [r13 + ME_NP]
	cmp rcx, ME_MAXP
	ja 4f
	lea rdi, [r13 + ME_PAIRS]
5:	test rcx, rcx
	jz 6f
	mov r9, qword ptr [rdi]		/* a word the walk read: still the same */
	cmp r9, ME_FP_USED
	jne 11f
	cmp rbp, qword ptr [rdi + 8]	/* rbp as the stub found it */
	jne 4f
	jmp 12f
11:	cmp r9, qword ptr [r8 + K_LO]
	jb 4f
	lea rdx, [r9 + 8]
	cmp rdx, qword ptr [r8 + K_HI]
	ja 4f
	mov r9, qword ptr [r9]
	cmp r9, qword ptr [rdi + 8]
	jne 4f
12:	add rdi, 16
	dec rcx
	jmp 5b
6:	mov rax, qword ptr [r13 + ME_ID]	/* the walk would find it again */
	jmp 9f
4:	/* the buffer: a record's fields and the pcs (a constant: the stub
	   frames' unwinder follows rsp through sub and add) */
	sub rsp, CH_BUF
	mov rbx, rsp
	mov qword ptr [rbx + R_ARG0], rsi
	mov rdx, qword ptr [r8 + K_LO]
	mov qword ptr [rbx + R_ARG1], rdx
	mov rdx, qword ptr [r8 + K_HI]
	mov qword ptr [rbx + R_ARG2], rdx
	mov rdx, qword ptr D(D_WTAB)
	mov rdx, qword ptr [rdx + W_DIR]
	mov qword ptr [rbx + R_ARG3], rdx
	mov rcx, qword ptr D(D_WALK_MAX)
	lea rdx, [rcx * 8]		/* room for the pcs, none for a copy */
	test r12, r12
	jz 1f
	mov qword ptr [r13 + ME_PC], 0	/* no entry while it is written */
	lea rax, [r13 + ME_PAIRS]
	mov qword ptr [rbx + R_TPC], rax	/* the walk logs its reads there */
	lea rax, [r13 + ME_PAIRS + ME_MAXP * 16]
	mov qword ptr [rbx + R_TFP], rax
	mov qword ptr [rbx + R_R12], 0	/* rbp not read from the stack yet */
	bts rdx, 63
1:	call table_walk
	mov rax, -1
	cmp qword ptr [rbx + R_TSP], 0
	jne 8f				/* a tail */
	mov rcx, qword ptr [rbx + R_WALK]
	test rcx, rcx
	jz 8f
	movabs r9, K_HASH_MUL		/* dt_chain_hash() */
	mov rax, rcx
	imul rax, r9
	lea rsi, [rbx + R_STACK]
	lea rdi, [rsi + rcx * 8]
1:	xor rax, qword ptr [rsi]
	imul rax, r9
	add rsi, 8
	cmp rsi, rdi
	jb 1b
	mov rdx, rax
	shr rdx, 32
	xor rax, rdx
	or rax, 1
	mov rsi, qword ptr D(D_CHAINS)
	mov rdi, qword ptr D(D_CHAIN_MASK)
	mov ecx, CH_PROBES
	mov rdx, rax
2:	and rdx, rdi
	mov r8, rdx
	shl r8, CH_SHIFT
	mov r9, qword ptr [rsi + r8 + CH_KEY]
	cmp r9, rax
	je 3f
	test r9, r9
	jz 7f				/* an empty entry: not known */
	inc rdx
	dec ecx
	jnz 2b
7:	mov rax, -1
	jmp 8f
3:	mov rax, qword ptr [rsi + r8 + CH_ID]
	/* the memo of this walk, its reads all logged: the return address last */
	test r12, r12
	jz 8f
	mov rdx, qword ptr [rbx + R_TPC]
	test rdx, rdx
	jz 8f				/* more reads than it holds */
	lea rcx, [r13 + ME_PAIRS]
	sub rdx, rcx
	shr rdx, 4
	mov qword ptr [r13 + ME_NP], rdx
	mov qword ptr [r13 + ME_ID], rax
	mov rdx, qword ptr [rbx + R_ARG0]
	mov qword ptr [r13 + ME_SP], rdx
	mov rcx, qword ptr [rbx + R_ARG1]
	mov qword ptr [r13 + ME_LO], rcx
	mov rcx, qword ptr [rbx + R_ARG2]
	mov qword ptr [r13 + ME_HI], rcx
	mov rcx, qword ptr [rbx + R_ARG3]
	mov qword ptr [r13 + ME_DIR], rcx
	mov rdx, qword ptr [rdx]
	mov qword ptr [r13 + ME_PC], rdx
8:	add rsp, CH_BUF
9:	test r12, r12
	jz 10f
	mov qword ptr [r12 + MB_BUSY], 0
10:	pop r13
	pop r12
	pop rbx
	ret

/*
 * wlog ADDR, VAL: the walk read VAL at ADDR; logged at R_TPC (the
 * cursor, 0: no log) while below R_TFP (the end; past it: no more log,
 * the cursor 0).  Clobbers rdx.
 */
.macro wlog addr, val
	mov rdx, qword ptr [rbx + R_TPC]
	test rdx, rdx
	jz 77f
	cmp rdx, qword ptr [rbx + R_TFP]
	jb 76f
	mov qword ptr [rbx + R_TPC], 0
	jmp 77f
76:	mov qword ptr [rdx], \addr
	mov qword ptr [rdx + 8], \val
	add rdx, 16
	mov qword ptr [rbx + R_TPC], rdx
77:
.endm

/*
 * table_walk: the stub walk (stub-abi.h, R_WALK).  rbx = the record,
 * rsi = rsp at the function's entry, inside [K_LO, K_HI) of r8, this
 * thread's entry, rdx = the room after R_STACK.  rax = the bytes
 * written from R_STACK on.  Keeps rbx,
 * rbp and r12-r15; clobbers rcx, rdx, rsi, rdi, r8-r11 and the flags.
 * Registers: r12, r13 the stack's bounds; r14 pc, r15 rsp, rbp the
 * frame's; rdi the next pc's place, r9 the end of their room.
 */
	.balign 16
table_walk:
	push rbp
	push r12
	push r13
	push r14
	push r15
	push 0				/* the last frame's directory entry */
	mov r12, qword ptr [r8 + K_LO]
	mov r13, qword ptr [r8 + K_HI]
	mov r14, qword ptr [rsi]	/* the caller's pc: the return address */
	lea r15, [rsi + 8]
	btr rdx, 63			/* set: log the reads (chain_walk's memo) */
	jc 1f
	mov qword ptr [rbx + R_TPC], 0	/* no log */
1:	mov qword ptr [rbx + R_COPIED], rdx	/* the room, until the end */
	lea rdi, [rbx + R_STACK]
	mov r9, qword ptr D(D_WALK_MAX)
	lea r9, [rdi + r9 * 8]
	mov qword ptr [rbx + R_TSP], 0
.Lw_frame:
	cmp rdi, r9
	jae .Lw_tail
	/* the module: the last frame's, or the last directory entry with lo <= pc - 1 */
	mov r10, qword ptr D(D_WTAB)
	lea rdx, [r14 - 1]
	mov rcx, qword ptr [rsp]
	test rcx, rcx
	jz 0f
	cmp rdx, qword ptr [rcx + WD_LO]
	jb 0f
	cmp rdx, qword ptr [rcx + WD_HI]
	jb .Lw_module
0:	mov rax, qword ptr [r10 + W_DIR]
	mov ecx, eax			/* the directory's offset */
	shr rax, 32			/* its entries */
	lea rdx, [rax + rax * 2]
	lea rdx, [rcx + rdx * 8]
	cmp rdx, qword ptr D(D_WTAB_SIZE)
	ja .Lw_tail
	add rcx, r10
	lea rdx, [r14 - 1]		/* the key: the call instruction */
	xor esi, esi
1:	cmp rsi, rax			/* the first entry in [rsi, rax) with lo > key */
	jae 3f
	lea r11, [rsi + rax]
	shr r11, 1
	lea r8, [r11 + r11 * 2]
	cmp rdx, qword ptr [rcx + r8 * 8 + WD_LO]
	jb 2f
	lea rsi, [r11 + 1]
	jmp 1b
2:	mov rax, r11
	jmp 1b
3:	test rsi, rsi
	jz .Lw_tail			/* below every module */
	lea r8, [rsi + rsi * 2 - 3]
	lea rcx, [rcx + r8 * 8]		/* its entry */
	cmp rdx, qword ptr [rcx + WD_HI]
	jae .Lw_tail
	mov qword ptr [rsp], rcx
.Lw_module:
	sub rdx, qword ptr [rcx + WD_LO]	/* the key from the table's lo */
	mov r11, qword ptr [rcx + WD_TAB]
	mov rax, qword ptr D(D_WTAB_SIZE)
	lea r8, [r11 + WT_INDEX]
	cmp r8, rax
	ja .Lw_tail
	add r11, r10			/* the table */
	mov ecx, dword ptr [r11 + WT_NPAGES]
	mov r8d, dword ptr [r11 + WT_NROWS]
	lea r10, [r11 + rcx * 4 + WT_INDEX + 4]	/* its rows */
	lea rsi, [r8 + r8 * 2]
	lea rsi, [r10 + rsi * 4]
	sub rsi, qword ptr D(D_WTAB)
	cmp rsi, rax
	ja .Lw_tail			/* the rows' end beyond the mapping */
	mov rax, rdx
	shr rax, WT_PAGE_SHIFT
	cmp rax, rcx
	jae .Lw_tail
	mov esi, dword ptr [r11 + rax * 4 + WT_INDEX]
	mov eax, dword ptr [r11 + rax * 4 + WT_INDEX + 4]
	cmp rax, r8
	jae .Lw_tail
	cmp rsi, rax
	ja .Lw_tail
4:	cmp rsi, rax			/* the last row in [rsi, rax] starting at or before it */
	jae 6f
	lea r11, [rsi + rax + 1]
	shr r11, 1
	lea r8, [r11 + r11 * 2]
	cmp edx, dword ptr [r10 + r8 * 4 + WR_START]
	jb 5f
	mov rsi, r11
	jmp 4b
5:	lea rax, [r11 - 1]
	jmp 4b
6:	lea r8, [rsi + rsi * 2]
	lea r11, [r10 + r8 * 4]		/* the row */
	movzx eax, byte ptr [r11 + WR_KIND]
	cmp eax, WK_END
	je .Lw_last
	mov rcx, r15
	cmp eax, WK_SP
	je 7f
	mov rcx, rbp
	cmp eax, WK_FP
	jne .Lw_tail			/* no row */
	cmp qword ptr [rbx + R_R12], 0	/* logging: rbp still the stub's */
	jne 7f
	wlog ME_FP_USED, rbp
7:	movsxd rax, dword ptr [r11 + WR_CFA]
	add rcx, rax			/* the CFA */
	mov qword ptr [rdi], r14
	add rdi, 8
	lea rax, [rcx - 8]
	cmp rax, r15
	jb .Lw_end			/* below the frame's rsp */
	cmp rax, r12
	jb .Lw_end
	cmp rcx, r13
	ja .Lw_end
	movsx rax, word ptr [r11 + WR_FP]
	test rax, rax
	jz 8f
	add rax, rcx
	cmp rax, r12
	jb .Lw_end
	lea rdx, [rax + 8]
	cmp rdx, r13
	ja .Lw_end
	mov rbp, qword ptr [rax]
	wlog rax, rbp
	cmp qword ptr [rbx + R_TPC], 0
	je 8f
	mov qword ptr [rbx + R_R12], 1	/* logging: rbp from the stack */
8:	mov r14, qword ptr [rcx - 8]
	lea rax, [rcx - 8]
	wlog rax, r14
	mov r15, rcx
	test r14, r14
	jnz .Lw_frame
	jmp .Lw_end
.Lw_last:
	mov qword ptr [rdi], r14
	add rdi, 8
	jmp .Lw_end
.Lw_tail:
	mov qword ptr [rbx + R_TPC], r14
	mov qword ptr [rbx + R_TSP], r15
	mov qword ptr [rbx + R_TFP], rbp
.Lw_end:
	lea rax, [rbx + R_STACK]
	mov rcx, rdi
	sub rcx, rax
	shr rcx, 3
	mov qword ptr [rbx + R_WALK], rcx
	cmp qword ptr [rbx + R_TSP], 0
	je .Lw_out			/* no tail */
	xor ecx, ecx
	cmp r15, r12
	jb 9f
	cmp r15, r13
	jae 9f
	mov rcx, r13
	sub rcx, r15			/* to the stack's end */
	mov rax, qword ptr [rbx + R_COPIED]
	add rax, rbx
	add rax, R_STACK
	sub rax, rdi			/* the room left */
	cmp rcx, rax
	cmova rcx, rax
	mov rsi, r15
	rep movsb
9:
.Lw_out:
	lea rax, [rbx + R_STACK]
	sub rax, rdi
	neg rax
	add rsp, 8
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbp
	ret

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

	.balign 8
.Lwait_ts:
	.quad 0, DT_WAIT_NS		/* a struct timespec */
dt_template_end:

	.section .note.GNU-stack, "", @progbits

/*
 * detour-stubs.S (x86_64) - the common routines of the stub mapping
 * (layout: arch/stub-abi.h, stub-cpu.h).  Assembled into memtap and
 * copied verbatim into the target at the start of the code page; they
 * reach the data and counter pages rip-relatively.  Nothing here calls
 * libc; the only syscalls are clock_nanosleep (full ring), gettid (no
 * cached tid) and process_vm_readv (the stack copy of a thread not in
 * the stack table: a short read at the end of the stack mapping, never
 * a fault; the others copy with rep movsb within their stack's bounds);
 * a sync point's wait sleeps with clock_nanosleep too.  Nothing traps:
 * without memtap the records fill the ring and are then dropped.
 *
 * One template in four files, in this order: here, the entry points
 * and the prefilter; detour-stubs-record.S, keep_record (the filter,
 * the sampling, the ring); detour-stubs-walk.S, the stub walk;
 * detour-stubs-lib.S, the small routines they share.  The others are
 * included below, never assembled alone.
 *
 * Entry points (offsets from dt_template, for detour.c):
 *   dt_common_result  from a result probe's glue, after the function
 *                     returned: [rsp] = r8 rcx rdx rsi rdi as pushed at
 *                     entry (a DF_ARG0_KEEP probe: HEAD in r8's place),
 *                     then the caller's return address; rax the
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
 *                     slot + DT_PF_LEN, having counted nothing (a
 *                     DF_ARG0_KEEP probe's with HEAD in r10, which its
 *                     glue keeps: stub-cpu.h); either way with every
 *                     register but r10, r11 and the flags as the
 *                     caller left it.
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
 * goes on into the function; a nested call (nest_check) and a free of
 * NULL, which frees nothing, go on into it at once, counted nowhere.
 * rax, rcx and rdx are saved: the function
 * gets them as its caller left them, rax too, which the ABI gives no
 * argument but which a function may read at its entry (al, a variadic
 * call's vector registers; or its own convention: the glue must not
 * decide what the function's first instructions do).
 */
	.balign 16
dt_common_prefilter:
	push rax			/* the caller's: the function may read it */
	push rcx
	push rdx			/* [rsp] */
	mov rax, qword ptr [rsp + 24]	/* the caller's return address */
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
	test rdi, rdi
	jz .Lpf_nested			/* free(NULL) frees nothing: counted nowhere */
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
	pop rax
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
	pop rax
	test r10d, DF_ARG0_KEEP << 24
	jz 1f
	mov r10, qword ptr D(D_HEAD)	/* realloc: its glue keeps HEAD as at its entry */
1:	add r11, DT_PF_LEN
	jmp r11
.Lpf_nested:				/* part of the outer call, or free(NULL): into
					   the function */
	pop rdx
	pop rcx
	pop rax
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

#include "detour-stubs-record.S"
#include "detour-stubs-walk.S"
#include "detour-stubs-lib.S"

	.balign 8
.Lwait_ts:
	.quad 0, DT_WAIT_NS		/* a struct timespec */
dt_template_end:

	.section .note.GNU-stack, "", @progbits

/*
 * stubs.S - the stub page: assembled into the tracer, copied verbatim
 * into the target (see probe-abi.h for the layout).  Nothing here calls
 * libc; the only syscalls are sched_yield, gettid and process_vm_readv.
 *
 * Every stub is entered by the `jmp rel32` that replaced the first
 * instructions of malloc (or free), so at entry [rsp] is the caller's
 * return address, rsp = 8 mod 16, and everything below rsp is free (no
 * red zone is live at a call boundary).  A stub may clobber rax, r10,
 * r11 and the flags (caller-saved, no argument of malloc or free); it
 * leaves through spike_malloc_orig / spike_free_orig, where the tracer
 * writes the relocated entry instructions and a jmp back into the
 * function.  keep_record copies the stack with rep movsb within the
 * thread's stack entry (probe-abi.h), else with process_vm_readv.
 *
 * Entry points (offsets from spike_page, exported for the tracer):
 *   stub_count       (a) lock add on shared counters
 *   stub_count_slot  (a) lock add on a per-thread slot (hash of %fs base)
 *   stub_count_nolock (a) plain add on the slot (wrong on a hash clash)
 *   stub_filter      (b) count, compare with MIN_SIZE, count the kept
 *   stub_keep        (c) count, filter, keep a record of the call
 *   stub_sample      (d) count, Poisson byte sampling, keep the sampled
 *   stub_result      (e) count, filter, call the original, keep + rax
 *   stub_free        count free calls (shared; _slot, _nolock: per thread)
 */
#include "probe-abi.h"

	.intel_syntax noprefix
	.section .text.spike_page, "ax", @progbits
	.balign 4096
	.globl spike_page, spike_page_end
	.globl spike_malloc_orig, spike_free_orig
	.globl stub_count, stub_count_slot, stub_count_nolock, stub_filter
	.globl stub_keep, stub_sample, stub_result, stub_free
	.globl stub_free_slot, stub_free_nolock

	.set DATA, .Lpage + PA_DATA
	.set SLOTS, .Lpage + PA_SLOTS
	.set STACKS, .Lpage + PA_STACKS

#define D(off) [rip + DATA + (off)]

spike_page:
.Lpage:
/* room for the relocated entries: written by the tracer */
spike_malloc_orig:
.Lmalloc_orig:
	.fill 64, 1, 0xcc
spike_free_orig:
.Lfree_orig:
	.fill 64, 1, 0xcc

.macro COUNT
	lock inc qword ptr D(D_CALLS)
	lock add qword ptr D(D_BYTES), rdi
.endm

	.balign 16
stub_count:
	COUNT
	jmp .Lmalloc_orig

/* r11 = address of this thread's slot; clobbers rax */
.macro SLOT
	mov rax, qword ptr fs:0		/* the TCB's self pointer */
	movabs r11, 0x9e3779b97f4a7c15
	imul rax, r11
	shr rax, S_HASH_SHIFT
	shl rax, S_SHIFT
	lea r11, [rip + SLOTS]
	add r11, rax
.endm

	.balign 16
stub_count_slot:
	SLOT
	lock inc qword ptr [r11 + S_CALLS]
	lock add qword ptr [r11 + S_BYTES], rdi
	jmp .Lmalloc_orig

	.balign 16
stub_count_nolock:
	SLOT
	inc qword ptr [r11 + S_CALLS]
	add qword ptr [r11 + S_BYTES], rdi
	jmp .Lmalloc_orig

	.balign 16
stub_filter:
	COUNT
	cmp rdi, qword ptr D(D_MIN_SIZE)
	jb .Lmalloc_orig
	lock inc qword ptr D(D_KEPT_CALLS)
	lock add qword ptr D(D_KEPT_BYTES), rdi
	jmp .Lmalloc_orig

	.balign 16
stub_keep:
	COUNT
	cmp rdi, qword ptr D(D_MIN_SIZE)
	jb .Lmalloc_orig
	lock inc qword ptr D(D_KEPT_CALLS)
	lock add qword ptr D(D_KEPT_BYTES), rdi
	mov r11, rsp
	call keep_record
	jmp .Lmalloc_orig

/*
 * Poisson sampling by bytes: COUNTDOWN -= size; the call that takes it
 * from > 0 to <= 0 is sampled and adds the next interval (memtap writes
 * D_NIVALS exponential intervals; a dead memtap leaves them cycling).
 */
	.balign 16
stub_sample:
	COUNT
	mov rax, rdi
	neg rax
	lock xadd qword ptr D(D_COUNTDOWN), rax	/* rax = old */
	test rax, rax
	jle .Lmalloc_orig		/* another call is refilling it */
	sub rax, rdi
	jg .Lmalloc_orig		/* not crossed */
.Lrefill:
	/* add intervals until the countdown is positive again: a short one
	   must not leave it <= 0, where no call would ever refill it */
	mov eax, 1
	lock xadd qword ptr D(D_IVAL_IDX), rax
	and eax, D_NIVALS - 1
	lea r11, [rip + DATA + D_IVALS]
	mov r11, qword ptr [r11 + rax * 8]
	mov rax, r11
	lock xadd qword ptr D(D_COUNTDOWN), rax
	add rax, r11
	jle .Lrefill
	lock inc qword ptr D(D_KEPT_CALLS)
	lock add qword ptr D(D_KEPT_BYTES), rdi
	mov r11, rsp
	call keep_record
	jmp .Lmalloc_orig

/*
 * Result capture: call the relocated original (one push keeps rsp = 8
 * mod 16 at its entry), then keep the record with rax, and return to
 * the caller.  The function runs with a return address into this page.
 */
	.balign 16
stub_result:
	COUNT
	cmp rdi, qword ptr D(D_MIN_SIZE)
	jb .Lmalloc_orig
	lock inc qword ptr D(D_KEPT_CALLS)
	lock add qword ptr D(D_KEPT_BYTES), rdi
	push rdi
	call .Lmalloc_orig
	pop rdi
	mov r11, rsp
	call keep_record
	ret

	.balign 16
stub_free:
	lock inc qword ptr D(D_FREES)
	jmp .Lfree_orig

	.balign 16
stub_free_slot:
	SLOT
	lock inc qword ptr [r11 + S_FREES]
	jmp .Lfree_orig

	.balign 16
stub_free_nolock:
	SLOT
	inc qword ptr [r11 + S_FREES]
	jmp .Lfree_orig

/*
 * keep_record: r11 = rsp at the function's entry, rax = the result (or
 * anything).  Every register but r10, r11 and the flags is preserved.
 * Reserve a record, fill it, copy the stack, commit.
 */
	.balign 16
keep_record:
	push rdi			/* [rsp + 80] */
	push rsi			/* 72 */
	push rdx			/* 64 */
	push rcx			/* 56 */
	push r8				/* 48 */
	push r9				/* 40 */
	push rax			/* 32 */
	push r11			/* 24: entry rsp */
	push rbx			/* 16 */
	push rbp			/* 8 */
	sub rsp, 8			/* 0: seq */
	xor r9d, r9d			/* sched_yield()s so far */
.Lreserve:
	mov rax, qword ptr D(D_HEAD)
.Lretry:
	mov rdx, rax
	sub rdx, qword ptr D(D_TAIL)
	cmp rdx, qword ptr D(D_NREC)
	jae .Lfull
	lea rdx, [rax + 1]
	lock cmpxchg qword ptr D(D_HEAD), rdx
	jne .Lretry			/* rax = the new head */
	jmp .Lreserved
.Lfull:
	mov rdx, qword ptr D(D_TAIL)
	cmp rdx, qword ptr D(D_STALL_TAIL)
	je .Ldrop			/* the consumer has not moved since */
	inc r9
	cmp r9, qword ptr D(D_WAIT_SPINS)
	ja .Lstall
	mov eax, 24			/* SYS_sched_yield */
	syscall
	jmp .Lreserve
.Lstall:
	mov qword ptr D(D_STALL_TAIL), rdx
.Ldrop:
	lock inc qword ptr D(D_DROPPED)
	jmp .Lout

.Lreserved:
	mov qword ptr [rsp], rax	/* seq */
	mov rbx, rax
	and rbx, qword ptr D(D_MASK)
	imul rbx, qword ptr D(D_REC_SIZE)
	add rbx, qword ptr D(D_RING)	/* rbx = the record */
	mov qword ptr [rbx + R_SEQ], rax
	rdtsc
	shl rdx, 32
	or rax, rdx
	mov qword ptr [rbx + R_TIME], rax
	mov rax, qword ptr D(D_TID_OFF)
	test rax, rax
	jz .Lgettid
	mov eax, dword ptr fs:[rax]	/* glibc's cached tid in struct pthread */
	jmp .Lhave_tid
.Lgettid:
	mov eax, 186			/* SYS_gettid */
	syscall
.Lhave_tid:
	mov qword ptr [rbx + R_TID], rax
	mov rax, qword ptr [rsp + 80]
	mov qword ptr [rbx + R_ARG0], rax
	mov rax, qword ptr [rsp + 72]
	mov qword ptr [rbx + R_ARG1], rax
	mov rax, qword ptr [rsp + 64]
	mov qword ptr [rbx + R_ARG2], rax
	mov rax, qword ptr [rsp + 32]
	mov qword ptr [rbx + R_RESULT], rax
	mov rax, qword ptr [rsp + 24]
	mov qword ptr [rbx + R_RSP], rax
	mov rax, qword ptr [rax]
	mov qword ptr [rbx + R_RET], rax
	mov rax, qword ptr [rsp + 16]
	mov qword ptr [rbx + R_RBX], rax
	mov rax, qword ptr [rsp + 8]
	mov qword ptr [rbx + R_RBP], rax
	mov qword ptr [rbx + R_R12], r12
	mov qword ptr [rbx + R_R13], r13
	mov qword ptr [rbx + R_R14], r14
	mov qword ptr [rbx + R_R15], r15

	mov rcx, qword ptr D(D_COPY_LEN)
	test rcx, rcx
	jz .Lcopied
	cmp qword ptr D(D_COPY_MODE), 0
	je .Lvmreadv
	/* this thread's stack bounds: r8 = its entry */
	mov rax, qword ptr fs:0
	mov rdx, rax
	movabs rsi, 0x9e3779b97f4a7c15
	imul rax, rsi
	shr rax, K_HASH_SHIFT
	lea rsi, [rip + STACKS]
	mov edi, K_PROBES
.Llook:
	mov r8, rax
	shl r8, K_SHIFT
	add r8, rsi
	cmp qword ptr [r8 + K_KEY], rdx
	je .Lfound
	inc eax
	and eax, K_NENT - 1
	dec edi
	jnz .Llook
	jmp .Lvmreadv
.Lfound:
	mov rsi, qword ptr [rsp + 24]	/* entry rsp */
	cmp rsi, qword ptr [r8 + K_LO]
	jb .Lvmreadv			/* not on its stack: sigaltstack... */
	mov rax, qword ptr [r8 + K_HI]
	sub rax, rsi
	jbe .Lvmreadv
	cmp rcx, rax
	cmova rcx, rax			/* not past the end of the mapping */
	mov rax, rcx
	lea rdi, [rbx + R_STACK]
	rep movsb
	jmp .Lcopy_done
.Lvmreadv:
	/* process_vm_readv(pid, &local, 1, &remote, 1, 0): short, not a fault */
	lock inc qword ptr D(D_COPY_SLOW)
	mov rcx, qword ptr D(D_COPY_LEN)
	sub rsp, 32
	lea rax, [rbx + R_STACK]
	mov qword ptr [rsp], rax
	mov qword ptr [rsp + 8], rcx
	mov rax, qword ptr [rsp + 32 + 24]
	mov qword ptr [rsp + 16], rax
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
.Lcopy_done:
	mov qword ptr [rbx + R_COPIED], rax
.Lcopied:
	mov rax, qword ptr [rsp]	/* seq */
	mov rdx, rax
	and rdx, qword ptr D(D_MASK)
	mov rcx, qword ptr D(D_COMMIT)
	inc rax
	mov qword ptr [rcx + rdx * 8], rax	/* commit: last store */
.Lout:
	add rsp, 8
	pop rbp
	pop rbx
	pop r11
	pop rax
	pop r9
	pop r8
	pop rcx
	pop rdx
	pop rsi
	pop rdi
	ret

	.balign 4096
spike_page_end:

	.section .note.GNU-stack, "", @progbits

/*
 * detour-stubs-walk.S (x86_64) - the stub walk: chain_walk, the chain
 * of return addresses the chain table knows (a memo of the thread's
 * first, else a walk into a buffer), and table_walk, one walk through
 * the CFI tables.  Part of the template, included by detour-stubs.S in
 * its place, never assembled alone (its symbols, macros and D() are
 * detour-stubs.S's).
 */

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

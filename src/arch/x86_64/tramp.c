/*
 * tramp.c (x86_64) - remote syscalls: the `syscall` instruction memtap
 * looks for in a process, and the code and block of the trampoline
 * that puts a thread back by itself (arch.h; probe/remote-tramp.c places
 * it and says what it is for).
 *
 * The trampoline, at at, ARCH_TRAMP_SIZE bytes:
 *
 *   syscall                          the injected one
 *   rt_sigprocmask(SIG_SETMASK, &block.mask, NULL, 8)
 *   lea rsp, [rsp - 128]; push block.rflags; popfq; lea rsp, [rsp + 128]
 *   mov each general register but rsp from the block
 *   jmp [block.rip]
 *
 * below the red zone, the thread's own stack is left as it was; every
 * access to the block is rip-relative, so the code depends on at only
 * through their displacements.  Then int3 up to the block, at
 * ARCH_TRAMP_BLOCK_OFF: the registers at the stop, the rip and rax of a
 * restart when the stop interrupted a syscall (as the kernel would
 * restart it), the signal mask.
 */
#include "config.h"

#include <string.h>

#include "arch/arch.h"

long arch_find_syscall_insn(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (buf[i] == 0x0f && buf[i + 1] == 0x05)
			return (long)i;
	return -1;
}

/* block: rax rbx rcx rdx rsi rdi rbp r8-r15, rflags, rip, mask */
enum { B_RAX, B_RBX, B_RCX, B_RDX, B_RSI, B_RDI, B_RBP, B_R8, B_R9, B_R10, B_R11, B_R12,
       B_R13, B_R14, B_R15, B_FLAGS, B_RIP, B_MASK, B_NWORDS };

_Static_assert(B_NWORDS == ARCH_TRAMP_BLOCK_WORDS, "the block's words");
_Static_assert(ARCH_TRAMP_BLOCK_OFF + B_NWORDS * 8 <= ARCH_TRAMP_SIZE, "the block fits");

/* at code[*k]: op bytes, then the rip-relative disp32 to target (its address = at + *k...). */
static void rip_rel(uint8_t *code, size_t *k, uint64_t at, const uint8_t *op, size_t oplen,
		    uint64_t target, size_t tail)
{
	int32_t d;

	memcpy(code + *k, op, oplen);
	*k += oplen;
	d = (int32_t)(int64_t)(target - (at + *k + 4 + tail));
	memcpy(code + *k, &d, 4);
	*k += 4;
}

size_t arch_tramp_code(uint8_t *code, uint64_t at)
{
	/* mov reg, [rip + disp32], in the order of the block */
	static const uint8_t loads[15][3] = {
		{ 0x48, 0x8b, 0x05 }, { 0x48, 0x8b, 0x1d }, { 0x48, 0x8b, 0x0d },
		{ 0x48, 0x8b, 0x15 }, { 0x48, 0x8b, 0x35 }, { 0x48, 0x8b, 0x3d },
		{ 0x48, 0x8b, 0x2d }, { 0x4c, 0x8b, 0x05 }, { 0x4c, 0x8b, 0x0d },
		{ 0x4c, 0x8b, 0x15 }, { 0x4c, 0x8b, 0x1d }, { 0x4c, 0x8b, 0x25 },
		{ 0x4c, 0x8b, 0x2d }, { 0x4c, 0x8b, 0x35 }, { 0x4c, 0x8b, 0x3d },
	};
	static const uint8_t head[] = {
		0x0f, 0x05,				/* syscall */
		0xb8, 0x0e, 0x00, 0x00, 0x00,		/* mov eax, SYS_rt_sigprocmask */
		0xbf, 0x02, 0x00, 0x00, 0x00,		/* mov edi, SIG_SETMASK */
	};
	static const uint8_t mid[] = {
		0x31, 0xd2,				/* xor edx, edx */
		0x41, 0xba, 0x08, 0x00, 0x00, 0x00,	/* mov r10d, 8 */
		0x0f, 0x05,				/* syscall */
		0x48, 0x8d, 0x64, 0x24, 0x80,		/* lea rsp, [rsp - 128] */
	};
	static const uint8_t tail[] = {
		0x9d,					/* popfq */
		0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00,	/* lea rsp, [rsp + 128] */
	};
	static const uint8_t lea_rsi[] = { 0x48, 0x8d, 0x35 }, push_m[] = { 0xff, 0x35 },
			     jmp_m[] = { 0xff, 0x25 };
	uint64_t block = at + ARCH_TRAMP_BLOCK_OFF;
	size_t k = 0;

	memset(code, 0xcc, ARCH_TRAMP_SIZE);
	memcpy(code, head, sizeof(head));
	k = sizeof(head);
	rip_rel(code, &k, at, lea_rsi, sizeof(lea_rsi), block + B_MASK * 8, 0);
	memcpy(code + k, mid, sizeof(mid));
	k += sizeof(mid);
	rip_rel(code, &k, at, push_m, sizeof(push_m), block + B_FLAGS * 8, 0);
	memcpy(code + k, tail, sizeof(tail));
	k += sizeof(tail);
	for (int i = 0; i < 15; i++)
		rip_rel(code, &k, at, loads[i], 3, block + (uint64_t)i * 8, 0);
	rip_rel(code, &k, at, jmp_m, sizeof(jmp_m), block + B_RIP * 8, 0);
	return k <= ARCH_TRAMP_BLOCK_OFF ? ARCH_TRAMP_SIZE : 0;
}

void arch_tramp_block(uint64_t block[ARCH_TRAMP_BLOCK_WORDS], const arch_regs_t *r,
		      uint64_t mask)
{
	const uint64_t b[B_NWORDS] = {
		r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->r8, r->r9, r->r10,
		r->r11, r->r12, r->r13, r->r14, r->r15, r->eflags, r->rip, mask,
	};
	int64_t rax = (int64_t)r->rax;

	memcpy(block, b, sizeof(b));
	/*
	 * A stop inside a syscall: restart it as the kernel would have, 2
	 * bytes back (`syscall` and `int $0x80` alike).
	 */
	if ((int64_t)r->orig_rax >= 0 && (rax == -512 || rax == -513 || rax == -514 || rax == -516)) {
		block[B_RAX] = rax == -516 ? 219 /* restart_syscall */ : r->orig_rax;
		block[B_RIP] = r->rip - 2;
	}
}

/*
 * tramp-unit.c - the trampoline of injected syscalls (probe/remote-tramp.c,
 * arch/x86_64/tramp.c), byte for byte: the code remote_tramp_code()
 * writes for a given address, and the block remote_tramp_block() writes
 * after it for the registers of a stop, with the kernel's restart rules
 * (a stop that interrupted a syscall goes back to the syscall, as the
 * kernel would have restarted it).  The block is written into this
 * process's own memory, as memtap writes it into a target's.  x86-64
 * only (the bytes are its); prints "ok" last when every check passed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "probe/remote.h"
#include "probe/remote-tramp.h"
#include "unit-check.h"

#ifdef __x86_64__

/* The code for at = 0x7f1234567000, as memtap writes it since the trampoline exists. */
static const char golden_code[] =
	"0f05b80e000000bf02000000488d351d01000031d241ba080000000f05488d64"
	"2480ff35f80000009d488da42480000000488b0570000000488b1d7100000048"
	"8b0d72000000488b1573000000488b3574000000488b3d75000000488b2d7600"
	"00004c8b05770000004c8b0d780000004c8b15790000004c8b1d7a0000004c8b"
	"257b0000004c8b2d7c0000004c8b357d0000004c8b3d7e000000ff2588000000";

/* Where the block starts, from the trampoline's start; its words. */
#define BLOCK_OFF 168
#define BLOCK_WORDS 18

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void check_code(void)
{
	const uint64_t at = 0x7f1234567000ULL;
	uint8_t code[REMOTE_TRAMP_SIZE + 8];
	char h[2 * sizeof(code) + 1];
	size_t n = strlen(golden_code) / 2;

	CHECK(REMOTE_TRAMP_SIZE == 320, "REMOTE_TRAMP_SIZE %d, not 320", REMOTE_TRAMP_SIZE);
	memset(code, 0x5a, sizeof(code));
	CHECK(remote_tramp_code(at, code, REMOTE_TRAMP_SIZE) == REMOTE_TRAMP_SIZE,
	      "remote_tramp_code() with room for it wrote nothing");
	hex(code, n, h);
	CHECK(strcmp(h, golden_code) == 0, "the code differs:\n  %s\nnot\n  %s", h, golden_code);
	for (size_t i = n; i < REMOTE_TRAMP_SIZE; i++)
		CHECK(code[i] == 0xcc, "byte %zu after the code is %#x, not int3", i, code[i]);
	CHECK(code[REMOTE_TRAMP_SIZE] == 0x5a, "a byte beyond REMOTE_TRAMP_SIZE written");
	memset(code, 0x5a, sizeof(code));
	CHECK(remote_tramp_code(at, code, REMOTE_TRAMP_SIZE - 1) == 0,
	      "remote_tramp_code() without room for it did not refuse");
}

/*
 * The block for registers r (their words but rax and rip from r) with
 * rax and rip as given, checked after remote_tramp_block().
 */
static void check_block(const char *what, const arch_regs_t *r, uint64_t mask,
			uint64_t rax, uint64_t rip)
{
	static uint8_t tramp[REMOTE_TRAMP_SIZE];
	const uint64_t want[BLOCK_WORDS] = {
		rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->r8, r->r9, r->r10,
		r->r11, r->r12, r->r13, r->r14, r->r15, r->eflags, rip, mask,
	};
	uint64_t got[BLOCK_WORDS];
	int err;

	memset(tramp, 0x5a, sizeof(tramp));
	err = remote_tramp_block(getpid(), getpid(), (uint64_t)(uintptr_t)tramp, r, mask);
	CHECK(err == 0, "%s: remote_tramp_block() failed (%d)", what, err);
	for (size_t i = 0; i < BLOCK_OFF; i++)
		CHECK(tramp[i] == 0x5a, "%s: code byte %zu written", what, i);
	memcpy(got, tramp + BLOCK_OFF, sizeof(got));
	for (int i = 0; i < BLOCK_WORDS; i++)
		CHECK(got[i] == want[i], "%s: word %d is %#" PRIx64 ", not %#" PRIx64, what, i,
		      got[i], want[i]);
	for (size_t i = BLOCK_OFF + sizeof(got); i < sizeof(tramp); i++)
		CHECK(tramp[i] == 0x5a, "%s: byte %zu after the block written", what, i);
}

static void check_blocks(void)
{
	arch_regs_t r;
	uint64_t *w = (uint64_t *)&r;
	const uint64_t mask = 0x8000000000010002ULL;
	const uint64_t pc = 0x7f0000201234ULL;

	/* every word distinct, so that a word out of place shows */
	for (size_t i = 0; i < sizeof(r) / sizeof(*w); i++)
		w[i] = 0x1111000000000000ULL + 0x101 * i;
	r.rip = pc;
	r.eflags = 0x246;

	r.orig_rax = (uint64_t)-1;
	r.rax = 5;
	check_block("a stop outside any syscall", &r, mask, 5, pc);
	r.rax = (uint64_t)-512;
	check_block("-ERESTARTSYS, no syscall", &r, mask, (uint64_t)-512, pc);

	r.orig_rax = 7;		/* poll */
	r.rax = (uint64_t)-4;
	check_block("a syscall ended with -EINTR", &r, mask, (uint64_t)-4, pc);
	r.rax = (uint64_t)-512;
	check_block("poll at -ERESTARTSYS", &r, mask, 7, pc - 2);
	r.rax = (uint64_t)-513;
	check_block("poll at -ERESTARTNOINTR", &r, mask, 7, pc - 2);
	r.rax = (uint64_t)-514;
	check_block("poll at -ERESTARTNOHAND", &r, mask, 7, pc - 2);
	r.rax = (uint64_t)-515;
	check_block("poll at -ENOIOCTLCMD", &r, mask, (uint64_t)-515, pc);
	r.orig_rax = 35;	/* nanosleep */
	r.rax = (uint64_t)-516;
	check_block("nanosleep at -ERESTART_RESTARTBLOCK", &r, 0, 219, pc - 2);
	r.orig_rax = 0x40000000ULL | 7;	/* x32 poll: the number as it was */
	r.rax = (uint64_t)-512;
	check_block("x32 poll at -ERESTARTSYS", &r, mask, 0x40000007ULL, pc - 2);
}

int main(void)
{
	check_code();
	check_blocks();
	return unit_status();
}

#else

int main(void)
{
	printf("skip: the trampoline's bytes are x86-64's\n");
	return 77;
}

#endif

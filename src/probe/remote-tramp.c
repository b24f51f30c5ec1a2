/*
 * remote-tramp.c - a trampoline for injected syscalls that a dead
 * memtap cannot leave half done (see remote.h, remote_tramp_set()).
 *
 * An injected syscall changes a thread's registers and signal mask for
 * its duration; were memtap killed meanwhile, the thread would run on
 * from libc's `syscall` instruction with memtap's registers (and crash),
 * or die of the single-step's SIGTRAP.  With a trampoline the thread
 * runs the syscall from memtap's own code, which then puts everything
 * back by itself: memtap, while alive, stops the thread at the
 * syscall's exit (PTRACE_SYSCALL, whose flag the kernel clears when the
 * tracer dies; no single step) and restores the registers itself, so
 * the code after the `syscall` only runs when memtap is gone:
 *
 *   syscall                          the injected one
 *   rt_sigprocmask(SIG_SETMASK, &block.mask, NULL, 8)
 *   lea rsp, [rsp - 128]; push block.rflags; popfq; lea rsp, [rsp + 128]
 *   mov each general register but rsp from the block
 *   jmp [block.rip]
 *
 * below the red zone, the thread's own stack is left as it was.  The
 * block follows the code: the registers at the stop, the rip and rax
 * of a restart when the stop interrupted a syscall (as the kernel
 * would restart it), the signal mask; memtap writes it before each
 * injection, and the thread only ever reads it.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "linux/memio.h"
#include "linux/procfs.h"
#include "probe/remote.h"
#include "probe/remote-tramp.h"
#include "util/error.h"

/* block: rax rbx rcx rdx rsi rdi rbp r8-r15, rflags, rip, mask */
enum { B_RAX, B_RBX, B_RCX, B_RDX, B_RSI, B_RDI, B_RBP, B_R8, B_R9, B_R10, B_R11, B_R12,
       B_R13, B_R14, B_R15, B_FLAGS, B_RIP, B_MASK, B_NWORDS };

#define TRAMP_CODE_MAX 168

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

size_t remote_tramp_code(uint64_t at, uint8_t *code, size_t room)
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
	uint64_t block = at + TRAMP_CODE_MAX;
	size_t k = 0;

	if (room < REMOTE_TRAMP_SIZE)
		return 0;
	memset(code, 0xcc, REMOTE_TRAMP_SIZE);
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
	return k <= TRAMP_CODE_MAX ? REMOTE_TRAMP_SIZE : 0;
}

/* The trampolines of the processes that have one. */
#define MAX_TRAMPS 16
static struct {
	pid_t pid;
	uint64_t at;
} tramps[MAX_TRAMPS];

void remote_tramp_set(pid_t pid, uint64_t at)
{
	int free_i = -1;

	for (int i = 0; i < MAX_TRAMPS; i++) {
		if (tramps[i].pid == pid) {
			tramps[i].at = at;
			return;
		}
		if (!tramps[i].pid && free_i < 0)
			free_i = i;
	}
	if (free_i >= 0) {
		tramps[free_i].pid = pid;
		tramps[free_i].at = at;
	}
}

void remote_tramp_clear(pid_t pid)
{
	for (int i = 0; i < MAX_TRAMPS; i++)
		if (tramps[i].pid == pid)
			tramps[i].pid = 0;
}

int remote_tramp_find(pid_t tid, pid_t *pid, uint64_t *at)
{
	for (int i = 0; i < MAX_TRAMPS; i++) {
		char path[64];

		if (!tramps[i].pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d", tramps[i].pid, tid);
		if (tramps[i].pid == tid || access(path, F_OK) == 0) {
			*pid = tramps[i].pid;
			*at = tramps[i].at;
			return 1;
		}
	}
	return 0;
}

/* Is [at, at + len) in one executable mapping of pid? */
static int executable(pid_t pid, uint64_t at, uint64_t len)
{
	struct procfs_map *maps;
	size_t n;
	int ok = 0;

	if (procfs_read_maps(pid, &maps, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (maps[i].start <= at && at + len <= maps[i].end)
			ok = (maps[i].perms & PROT_EXEC) != 0;
	procfs_maps_free(maps);
	return ok;
}

int remote_tramp_gap(pid_t pid, pid_t tid, uint64_t at, struct remote_gap *g)
{
	uint8_t code[REMOTE_TRAMP_SIZE];
	int err;

	g->on = 0;
	g->at = at;
	if (!executable(pid, at, sizeof(code)) || !remote_tramp_code(at, code, sizeof(code)))
		return -ENOSPC;
	if ((err = memio_read_all(pid, tid, at, g->orig, sizeof(g->orig))) < 0 ||
	    (err = memio_write(pid, tid, at, code, sizeof(code))) < 0)
		return err;
	remote_tramp_set(pid, at);
	g->on = 1;
	return 0;
}

void remote_tramp_gap_end(pid_t pid, pid_t tid, struct remote_gap *g)
{
	for (int i = 0; g->on && i < MAX_TRAMPS; i++)
		if (tramps[i].pid == pid && tramps[i].at == g->at)
			tramps[i].pid = 0;
	if (g->on && memio_write(pid, tid, g->at, g->orig, sizeof(g->orig)) < 0)
		debug_msg("process %d: the bytes at %#" PRIx64 " (a trampoline) not put back",
			  pid, g->at);
	g->on = 0;
}

int remote_tramp_block(pid_t pid, pid_t tid, uint64_t at, const arch_regs_t *r, uint64_t mask)
{
	uint64_t b[B_NWORDS] = {
		r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->r8, r->r9, r->r10,
		r->r11, r->r12, r->r13, r->r14, r->r15, r->eflags, r->rip, mask,
	};
	int64_t rax = (int64_t)r->rax;

	/* a stop inside a syscall: restart it as the kernel would have */
	if ((int64_t)r->orig_rax >= 0 && (rax == -512 || rax == -513 || rax == -514 || rax == -516)) {
		b[B_RAX] = rax == -516 ? 219 /* restart_syscall */ : r->orig_rax;
		b[B_RIP] = r->rip - 2;
	}
	return memio_write(pid, tid, at + TRAMP_CODE_MAX, b, sizeof(b));
}

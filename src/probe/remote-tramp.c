/*
 * remote-tramp.c - a trampoline for injected syscalls that a dead
 * memtap cannot leave half done (see remote.h, remote_tramp_set()).
 *
 * An injected syscall changes a thread's registers and signal mask for
 * its duration; were memtap killed meanwhile, the thread would run on
 * from libc's syscall instruction with memtap's registers (and crash),
 * or die of the single-step's SIGTRAP.  With a trampoline the thread
 * runs the syscall from memtap's own code, which then puts everything
 * back by itself: memtap, while alive, stops the thread at the
 * syscall's exit (PTRACE_SYSCALL, whose flag the kernel clears when the
 * tracer dies; no single step) and restores the registers itself, so
 * the code after the syscall instruction only runs when memtap is gone:
 * it sets the signal mask of the block, then the registers, and jumps
 * to its pc.  The code is the CPU's (arch_tramp_code(), arch.h); the
 * block follows it (arch_tramp_block(): the registers at the stop, or
 * those of the restart when the stop interrupted a syscall, as the
 * kernel would restart it; the signal mask), memtap writes it before
 * each injection, and the thread only ever reads it.  Here: which
 * processes have one, where, and the gap a first one borrows.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "linux/memio.h"
#include "linux/procfs.h"
#include "probe/remote.h"
#include "probe/remote-tramp.h"
#include "util/error.h"

size_t remote_tramp_code(uint64_t at, uint8_t *code, size_t room)
{
	if (room < REMOTE_TRAMP_SIZE)
		return 0;
	return arch_tramp_code(code, at);
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
	    (err = memio_write_code(pid, tid, at, code, sizeof(code))) < 0)
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
	if (g->on && memio_write_code(pid, tid, g->at, g->orig, sizeof(g->orig)) < 0)
		debug_msg("process %d: the bytes at %#" PRIx64 " (a trampoline) not put back",
			  pid, g->at);
	g->on = 0;
}

int remote_tramp_block(pid_t pid, pid_t tid, uint64_t at, const arch_regs_t *r, uint64_t mask)
{
	uint64_t b[ARCH_TRAMP_BLOCK_WORDS];

	arch_tramp_block(b, r, mask);
	return memio_write(pid, tid, at + ARCH_TRAMP_BLOCK_OFF, b, sizeof(b));
}

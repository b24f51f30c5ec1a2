/*
 * bp-undo.c - taking a breakpoint set out of a process: moving threads
 * out of memory's code for a detach, writing back every original byte
 * and trampolined return address (or, where the CPU keeps it out of
 * reach, leaving the trampoline as a routine that finds it: keep_tramp()),
 * and cleaning a fork child's copy.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "arch/arch.h"
#include "probe/bp-internal.h"
#include "linux/memio.h"
#include "util/error.h"
#include "util/xmalloc.h"

/* ---- undo ---- */

/* Is SIGTRAP pending for tid alone (SigPnd of its status)? */
static int sigtrap_pending(pid_t pid, pid_t tid)
{
	char path[96], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigPnd: %llx", &mask) == 1)
			break;
	fclose(f);
	return (mask >> (SIGTRAP - 1)) & 1;
}

/*
 * The breakpoint whose slot holds pc, with the pc in the original code
 * that goes on as the slot would (bp_arch_slot_pc()) in *to.
 */
static struct bp *in_slot(struct bp_set *set, uint64_t pc, uint64_t *to)
{
	for (struct bp *bp = set->all; bp; bp = bp->all_next) {
		if (!bp->slot)
			continue;
		*to = bp_arch_slot_pc(&bp->insn, bp->addr, bp->slot, bp->resume_off, pc);
		if (*to)
			return bp;
	}
	return NULL;
}

int bp_thread_fixup_for_detach(struct bp_set *set, pid_t tid)
{
	arch_regs_t regs;
	struct bp_thread *t;
	struct bp *bp;
	uint64_t pc, to;
	size_t i;
	int queued, changed = 0, err;

	if ((err = arch_regs_get(tid, &regs)) < 0)
		return err;
	pc = arch_pc(&regs);
	bp = bp_at(set, arch_bp_addr_from_pc(pc));
	queued = (bp || (set->tramp && arch_bp_addr_from_pc(pc) == set->tramp)) &&
		 sigtrap_pending(set->pid, tid);

	if (set->tramp && (pc == set->tramp || arch_bp_addr_from_pc(pc) == set->tramp)) {
		/* returned into the trampoline: go where the return went */
		if ((t = bp_ret_lookup(set, tid, arch_ret_slot_at_return(&regs), &i))) {
			arch_set_pc(&regs, t->rets[i].orig);
			t->nrets = i;
			changed = 1;
		}
	} else if (bp && (queued || bp->insn.len > pc - bp->addr)) {
		/*
		 * The breakpoint ran.  Where the pc it leaves is also an
		 * instruction boundary (x86-64: a one-byte first instruction,
		 * addr + 1) only a queued SIGTRAP says it ran.
		 */
		arch_set_pc(&regs, bp->addr);
		changed = 1;
	} else if ((bp = in_slot(set, pc, &to))) {
		arch_set_pc(&regs, to);
		changed = 1;
	}
	if (changed && (err = arch_regs_set(tid, &regs)) < 0)
		return err;
	if (queued) {
		t = bp_thread_find(set, tid, 1);
		t->suppress = 1;
		t->suppress_pc = arch_pc(&regs);
		return 1;
	}
	return 0;
}

/*
 * Write back trampolined return addresses still on stacks of pid; none
 * where the return slot is no word of memory (arch_ret_slot_in_memory()).
 */
static int restore_ret_slots(struct bp_set *set, pid_t pid, pid_t tid)
{
	int first = 0;

	if (!arch_ret_slot_in_memory())
		return 0;
	for (size_t b = 0; b < NTBUCKETS; b++)
		for (struct bp_thread *t = set->threads[b]; t; t = t->next)
			for (size_t i = t->nrets; i-- > 0;) {
				uint64_t slot = t->rets[i].slot, v = 0;
				int err;

				if (memio_read_all(pid, tid, slot, &v, sizeof(v)) < 0 ||
				    v != set->tramp)
					continue;
				err = memio_write(pid, tid, slot, &t->rets[i].orig, 8);
				if (err < 0 && !first)
					first = err;
			}
	return first;
}

/*
 * Where the return slot is no word of memory (arm64: x30, or a frame
 * that PACIASP may have signed), a hooked call still in flight returns
 * to the trampoline whatever memtap writes.  So its page stays, in pid,
 * as the routine of arch_ret_lookup_page(): it finds the call's return
 * address by its key among every live entry of every thread (each
 * thread's innermost first, as bp_ret_lookup() looks) and returns
 * there, with no memtap.  Nothing is written when no entry is live:
 * then the page goes as every other.  1 when the page holds the routine
 * now, 0 when nothing was needed, -errno.
 */
static int keep_tramp(struct bp_set *set, pid_t pid, pid_t tid)
{
	uint64_t (*pairs)[2];
	uint8_t *page;
	size_t n = 0;
	int err;

	if (!set->tramp || arch_ret_slot_in_memory())
		return 0;
	for (size_t b = 0; b < NTBUCKETS; b++)
		for (struct bp_thread *t = set->threads[b]; t; t = t->next)
			n += t->nrets;
	if (!n)
		return 0;
	pairs = xcalloc(n, sizeof(*pairs));
	n = 0;
	for (size_t b = 0; b < NTBUCKETS; b++)
		for (struct bp_thread *t = set->threads[b]; t; t = t->next)
			for (size_t i = t->nrets; i-- > 0; n++) {
				pairs[n][0] = t->rets[i].slot;
				pairs[n][1] = t->rets[i].orig;
			}
	page = xmalloc(PAGE);
	err = arch_ret_lookup_page(page, PAGE, (const uint64_t (*)[2])pairs, n);
	if (err >= 0)
		err = pid == set->pid ? bp_mem_write_code(set, tid, set->tramp, page, PAGE) :
					memio_write_code(pid, tid, set->tramp, page, PAGE);
	free(page);
	free(pairs);
	if (err >= 0)
		debug_msg("pid %d: the page at %#" PRIx64 " stays, to return %zu calls in flight",
			  pid, set->tramp, n);
	return err < 0 ? err : 1;
}

int bp_tramp_kept_in(struct bp_set *set, pid_t pid)
{
	uint8_t want[ARCH_BP_LEN], got[ARCH_BP_LEN];

	if (!set->tramp || arch_ret_slot_in_memory())
		return 0;
	arch_bp_fill(want, sizeof(want));
	return memio_read_all(pid, pid, set->tramp, got, sizeof(got)) == 0 &&
	       memcmp(want, got, sizeof(got)) != 0;
}

int bp_restore_all(struct bp_set *set, pid_t stopped_tid)
{
	int first = 0, err;

	for (struct bp *bp = set->all; bp; bp = bp->all_next) {
		err = bp_mem_write_code(set, stopped_tid, bp->addr, bp->orig, sizeof(bp->orig));
		if (err < 0 && !first)
			first = err;
	}
	if (set->tramp) {
		err = restore_ret_slots(set, set->pid, stopped_tid);
		if (err < 0 && !first)
			first = err;
		err = keep_tramp(set, set->pid, stopped_tid);
		if (err > 0)
			set->tramp_kept = 1;
		else if (err < 0 && !first)
			first = err;
	}
	bp_free_bps(set);
	bp_free_threads(set);
	return first;
}

int bp_remove(struct bp_set *set, pid_t stopped_tid, uint64_t addr)
{
	struct bp *bp = bp_at(set, addr);
	int err;

	if (!bp)
		return -ENOENT;
	err = bp_mem_write_code(set, stopped_tid, addr, bp->orig, sizeof(bp->orig));
	return err < 0 ? err : bp_forget(set, addr);
}

int bp_remove_all(struct bp_set *set, pid_t stopped_tid)
{
	int first = bp_restore_all(set, stopped_tid), err;

	err = bp_unmap_scratch(set, stopped_tid);
	return first < 0 ? first : err;
}

/*
 * The fork child in a ptrace-stop, for PTRACE_POKEDATA: child, or 0 if
 * it died.  At its parent's fork event the child is traced already
 * (auto-attached) and on its way to its first stop, which comes before
 * any instruction of its own (PTRACE_EVENT_STOP; SIGSTOP when attached
 * without PTRACE_SEIZE); or it is there already, its stop reported
 * first and held by the tracer until the event names it.  Wait for it
 * with WNOWAIT: the stop stays for the tracer's loop to see.
 */
static pid_t fork_child_stopped(pid_t child)
{
	arch_regs_t regs;
	siginfo_t si;

	if (arch_regs_get(child, &regs) != -ESRCH)
		return child;		/* stopped (held) */
	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, (id_t)child, &si, WSTOPPED | WEXITED | WNOWAIT | __WALL) < 0)
		if (errno != EINTR)
			return 0;
	return si.si_code == CLD_TRAPPED || si.si_code == CLD_STOPPED ? child : 0;
}

/* Write the original bytes and return addresses into child's memory. */
static int clean_child(struct bp_set *set, pid_t child, pid_t tid)
{
	int first = 0, err;

	for (struct bp *bp = set->all; bp; bp = bp->all_next) {
		err = memio_write_code(child, tid, bp->addr, bp->orig, sizeof(bp->orig));
		if (err < 0 && !first)
			first = err;
	}
	if (set->tramp) {
		err = restore_ret_slots(set, child, tid);
		if (err < 0 && !first)
			first = err;
		err = keep_tramp(set, child, tid);
		if (err < 0 && !first)
			first = err;
	}
	return first;
}

int bp_clean_fork_child(struct bp_set *set, pid_t child)
{
	pid_t tid;

	/* /proc/CHILD/mem needs no stop; POKEDATA does */
	if (clean_child(set, child, 0) == 0)
		return 0;
	tid = fork_child_stopped(child);
	if (!tid)
		return -ESRCH;
	return clean_child(set, child, tid);
}

/*
 * breakpoint.c - int3 breakpoints that are never removed while the target
 * runs, return capture through a trampoline, and a clean undo.
 *
 * Why not "remove the int3, single-step, re-insert" (ltrace's way): while
 * the byte is out, other threads run through the function unseen (lost
 * events), and a thread that trapped just before the removal finds no
 * breakpoint at pc - 1 and dies of SIGTRAP; it crashed an 8-thread target.
 * Here the int3 stays.  A hit moves the pc to a copy of the first
 * instruction, out of line, in a scratch page near the code; the copy
 * ends with a jmp back.  Any number of threads can run the copy at once.
 *
 * Scratch page layout (one page, r-x, anonymous, mapped by an injected
 * mmap within reach of the code it serves, ARCH_NEAR_REACH):
 *
 *   0x000  int3 x 32     offset 0 is the return trampoline
 *   0x020  slot 0        displaced instruction, jmp back, int3 padding
 *   0x040  slot 1 ...
 *
 * Return capture (want_return).  Two ways were weighed:
 *   - a breakpoint at the return address, matched on (tid, sp): it costs
 *     a breakpoint (and a displaced slot near every caller's object) per
 *     call site, every other thread passing the call site stops too, and
 *     its byte must be removed while others run;
 *   - replacing the return address on the stack by a trampoline: one
 *     8-byte write per call, one trampoline for everything, nothing in
 *     the caller's code.  It breaks C++ exception unwinding through the
 *     frame (hence not for functions that throw), longjmp leaves stale
 *     entries (dropped below), unwinders see the trampoline (patched by
 *     bp_fix_stack()), and CET shadow stacks forbid it (refused).
 * memtap probes the malloc family, which never throws: the trampoline.
 *
 * Per thread, return entries form a stack ordered by push time, each with
 * the stack address of its return slot.  A new call at slot S makes any
 * entry at S stale (the same slot is being reused), and any entry below
 * S stale if its slot no longer holds the trampoline (frames below the
 * current call are dead, unless on a signal alternate stack, where the
 * trampoline would still be there).  A return at the trampoline pops the
 * entry whose slot it names (arch_ret_slot_at_return(): on x86-64 ret
 * popped it, sp - 8) and every entry pushed after it (frames longjmp'd
 * over).  What is the CPU's (the int3, the pc it reports, the return slot,
 * CET) is asked of arch/bp_arch.h.
 *
 * Here: the set, its threads' return entries, insertion and hits.  The
 * scratch pages are bp-scratch.c's, the undo bp-undo.c's.
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

#include "arch/arch.h"
#include "probe/bp-internal.h"
#include "util/error.h"
#include "linux/memio.h"
#include "util/xmalloc.h"

static size_t bp_hash(uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 56) & (NBUCKETS - 1);
}

struct bp_set *bp_set_new(pid_t pid)
{
	struct bp_set *set = xcalloc(1, sizeof(*set));

	set->pid = pid;
	set->all_tail = &set->all;
	set->cet = -1;
	return set;
}

void bp_free_threads(struct bp_set *set)
{
	for (size_t i = 0; i < NTBUCKETS; i++) {
		struct bp_thread *t = set->threads[i], *next;

		for (; t; t = next) {
			next = t->next;
			free(t->rets);
			free(t);
		}
		set->threads[i] = NULL;
	}
}

void bp_free_bps(struct bp_set *set)
{
	struct bp *bp, *next;

	for (bp = set->all; bp; bp = next) {
		next = bp->all_next;
		free(bp);
	}
	set->all = NULL;
	set->all_tail = &set->all;
	memset(set->buckets, 0, sizeof(set->buckets));
}

void bp_set_free(struct bp_set *set)
{
	if (!set)
		return;
	bp_free_bps(set);
	bp_free_threads(set);
	free(set->pages);
	free(set);
}

struct bp *bp_at(struct bp_set *set, uint64_t addr)
{
	for (struct bp *bp = set->buckets[bp_hash(addr)]; bp; bp = bp->next)
		if (bp->addr == addr)
			return bp;
	return NULL;
}

int bp_forget(struct bp_set *set, uint64_t addr)
{
	struct bp **pp, *bp = NULL;

	for (pp = &set->buckets[bp_hash(addr)]; *pp; pp = &(*pp)->next)
		if ((*pp)->addr == addr) {
			bp = *pp;
			*pp = bp->next;
			break;
		}
	if (!bp)
		return -ENOENT;
	for (pp = &set->all; *pp;) {
		if (*pp == bp) {
			*pp = bp->all_next;
			continue;
		}
		pp = &(*pp)->all_next;
	}
	set->all_tail = pp;
	/* return entries of its calls: their frames are gone with the code */
	for (size_t b = 0; b < NTBUCKETS; b++)
		for (struct bp_thread *t = set->threads[b]; t; t = t->next)
			for (size_t i = 0; i < t->nrets; i++)
				if (t->rets[i].bp == bp) {
					t->nrets = i;
					break;
				}
	free(bp);
	return 0;
}

uint64_t bp_addr(const struct bp *bp)
{
	return bp->addr;
}

void *bp_cookie(const struct bp *bp)
{
	return bp->cookie;
}

void bp_get_stats(const struct bp_set *set, struct bp_stats *stats)
{
	*stats = set->stats;
}

/* ---- threads ---- */

struct bp_thread *bp_thread_find(struct bp_set *set, pid_t tid, int create)
{
	struct bp_thread **head = &set->threads[(unsigned)tid % NTBUCKETS], *t;

	for (t = *head; t; t = t->next)
		if (t->tid == tid)
			return t;
	if (!create)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->next = *head;
	*head = t;
	return t;
}

void bp_thread_gone(struct bp_set *set, pid_t tid)
{
	struct bp_thread **pp = &set->threads[(unsigned)tid % NTBUCKETS];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->tid == tid) {
			struct bp_thread *t = *pp;

			*pp = t->next;
			free(t->rets);
			free(t);
			return;
		}
	}
}

/* ---- memory ---- */

int bp_mem_read(struct bp_set *set, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	return memio_read_all(set->pid, tid, addr, buf, len);
}

int bp_mem_write(struct bp_set *set, pid_t tid, uint64_t addr,
		 const void *buf, size_t len)
{
	return memio_write(set->pid, tid, addr, buf, len);
}

int bp_mem_write_code(struct bp_set *set, pid_t tid, uint64_t addr,
		      const void *buf, size_t len)
{
	return memio_write_code(set->pid, tid, addr, buf, len);
}

/* The target's memory as the arch's callbacks want it. */
struct bp_io {
	struct bp_set *set;
	pid_t tid;
};

static int io_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct bp_io *io = ctx;

	return bp_mem_read(io->set, io->tid, addr, buf, len);
}

static int io_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct bp_io *io = ctx;

	return bp_mem_write(io->set, io->tid, addr, buf, len);
}

int bp_insert(struct bp_set *set, pid_t stopped_tid, uint64_t addr,
	      int want_return, void *cookie)
{
	uint8_t buf[BP_ARCH_MAX_INSN], code[BP_ARCH_SLOT_SIZE];
	uint8_t trap[ARCH_BP_LEN];
	struct bp_insn insn;
	uint64_t slot = 0;
	unsigned resume_off = 0;
	struct bp *bp;
	int err;

	if (bp_at(set, addr))
		return -EEXIST;
	if (want_return) {
		if (set->cet < 0)
			set->cet = arch_ret_hook_refused(set->pid);
		if (set->cet)
			return -ENOTSUP;
	}
	/* the instruction may end near the end of a mapping: read less */
	ssize_t n = memio_read(set->pid, stopped_tid, addr, buf, sizeof(buf));

	if (n < ARCH_BP_LEN)
		return n < 0 ? (int)n : -EIO;
	err = bp_arch_decode(addr, buf, (size_t)n, &insn);
	if (err < 0)
		return err;

	if (bp_arch_needs_slot(&insn) || (want_return && !set->tramp)) {
		slot = bp_slot_find(set, addr, &insn);
		if (!slot) {
			err = bp_scratch_map(set, stopped_tid, addr);
			if (err < 0)
				return err;
			slot = bp_slot_find(set, addr, &insn);
		}
		if (!bp_arch_needs_slot(&insn))
			slot = 0;
		else if (!slot)
			return -ENOMEM;
	}
	if (slot) {
		int len = bp_arch_relocate(&insn, addr, slot, code, &resume_off);

		if (len < 0)
			return len;
		/* the slot first: no thread can reach it before the int3 */
		err = bp_mem_write_code(set, stopped_tid, slot, code, sizeof(code));
		if (err < 0)
			return err;
		bp_slot_take(set, slot);
	}
	arch_bp_fill(trap, sizeof(trap));
	err = bp_mem_write_code(set, stopped_tid, addr, trap, sizeof(trap));
	if (err < 0)
		return err;	/* the slot stays used, unreachable */

	bp = xcalloc(1, sizeof(*bp));
	bp->addr = addr;
	bp->insn = insn;
	memcpy(bp->orig, buf, sizeof(bp->orig));
	bp->slot = slot;
	bp->resume_off = resume_off;
	bp->want_return = want_return;
	bp->cookie = cookie;
	bp->next = set->buckets[bp_hash(addr)];
	set->buckets[bp_hash(addr)] = bp;
	*set->all_tail = bp;
	set->all_tail = &bp->all_next;
	return 0;
}

/* ---- hits ---- */

/*
 * May the entry e, whose slot is below a new call's, still be live?  Its
 * slot still holds the trampoline where the return address is in memory
 * (arch_ret_slot_in_memory()).  Where it is in a register nothing says:
 * it is kept (dropping a live one would leave its return at the
 * trampoline with nowhere to go), until a return to a call entered
 * above it pops it, or a call at its slot replaces it.
 */
static int ret_may_live(struct bp_set *set, pid_t tid, const struct ret_entry *e)
{
	uint64_t v = 0;

	if (!arch_ret_slot_in_memory())
		return 1;
	return bp_mem_read(set, tid, e->slot, &v, sizeof(v)) == 0 && v == set->tramp;
}

/* A new call will use the return slot at sp: drop entries found stale. */
static void rets_drop_stale(struct bp_set *set, pid_t tid, struct bp_thread *t,
			    uint64_t sp)
{
	size_t keep = 0;

	for (size_t i = 0; i < t->nrets; i++) {
		struct ret_entry *e = &t->rets[i];

		if (e->slot > sp || (e->slot < sp && ret_may_live(set, tid, e))) {
			t->rets[keep++] = *e;
			continue;
		}
		set->stats.stale++;
	}
	t->nrets = keep;
}

/* Trampoline the return of the call entered at regs; 0 or -errno. */
static int ret_push(struct bp_set *set, pid_t tid, arch_regs_t *regs,
		    struct bp *bp, uint64_t orig)
{
	struct bp_thread *t = bp_thread_find(set, tid, 1);
	uint64_t slot = arch_ret_slot_at_entry(regs);
	struct bp_io io = { set, tid };
	struct ret_entry *e;
	int err;

	if (t->nrets && t->rets[t->nrets - 1].slot <= slot)
		rets_drop_stale(set, tid, t, slot);
	if (t->nrets >= MAX_RETS)
		return -ENOSPC;
	err = arch_ret_hook(regs, set->tramp, io_write, &io);
	if (err < 0)
		return err;
	t->rets = xgrowarray(t->rets, &t->cap, t->nrets + 1, sizeof(*t->rets));
	e = &t->rets[t->nrets++];
	e->slot = slot;
	e->orig = orig;
	e->bp = bp;
	for (int i = 0; i < 3; i++)
		e->args[i] = arch_call_arg(regs, i);
	return 0;
}

/* The entry of tid (or, failing that, of any thread) whose slot is slot. */
struct bp_thread *bp_ret_lookup(struct bp_set *set, pid_t tid, uint64_t slot,
				    size_t *idx)
{
	struct bp_thread *t = bp_thread_find(set, tid, 0);

	for (size_t i = t ? t->nrets : 0; i-- > 0;)
		if (t->rets[i].slot == slot) {
			*idx = i;
			return t;
		}
	/* a vfork child returning through its parent's frame, say */
	for (size_t b = 0; b < NTBUCKETS; b++)
		for (t = set->threads[b]; t; t = t->next)
			for (size_t i = t->nrets; i-- > 0;)
				if (t->rets[i].slot == slot) {
					*idx = i;
					return t;
				}
	return NULL;
}

static int on_return(struct bp_set *set, pid_t tid, arch_regs_t *regs,
		     struct bp_hit *out)
{
	uint64_t slot = arch_ret_slot_at_return(regs);
	struct bp_thread *t;
	struct ret_entry e;
	size_t i;
	int err;

	t = bp_ret_lookup(set, tid, slot, &i);
	if (!t) {
		debug_msg("pid %d tid %d: return at %#" PRIx64 " with no saved return address",
			  set->pid, tid, arch_sp(regs));
		return -ENOENT;
	}
	e = t->rets[i];
	/* entries pushed after it belong to frames longjmp skipped */
	set->stats.stale += t->nrets - i - 1;
	t->nrets = i;
	set->stats.returns++;
	out->kind = BP_HIT_RETURN;
	out->bp = e.bp;
	out->addr = e.bp->addr;
	out->cookie = e.bp->cookie;
	memcpy(out->args, e.args, sizeof(out->args));
	out->retval = arch_call_ret(regs);
	out->caller = e.orig;
	out->sp = slot;
	arch_set_pc(regs, e.orig);
	err = arch_regs_set(tid, regs);
	return err < 0 ? err : BP_HIT_RETURN;
}

/* Set regs so that the thread runs the function as if never stopped. */
static int resume_regs(struct bp_set *set, pid_t tid, struct bp *bp, arch_regs_t *regs)
{
	if (bp_arch_needs_slot(&bp->insn)) {
		arch_set_pc(regs, bp->slot);
	} else {
		struct bp_io io = { set, tid };
		int err = arch_bp_emulate(&bp->insn, bp->addr, regs, io_write, &io);

		if (err < 0)
			return err;
	}
	return arch_regs_set(tid, regs);
}

int bp_hit(struct bp_set *set, pid_t tid, arch_regs_t *regs, struct bp_hit *out)
{
	struct bp_thread *t = bp_thread_find(set, tid, 0);
	uint64_t pc = arch_bp_addr_from_pc(arch_pc(regs));
	struct bp_io io = { set, tid };
	struct bp *bp;
	uint64_t caller;
	int err;

	memset(out, 0, sizeof(*out));
	if (t && t->suppress) {
		t->suppress = 0;
		if (arch_pc(regs) == t->suppress_pc) {
			set->stats.suppressed++;
			out->kind = BP_HIT_SUPPRESS;
			return BP_HIT_SUPPRESS;
		}
	}
	if (set->tramp && pc == set->tramp)
		return on_return(set, tid, regs, out);
	bp = bp_at(set, pc);
	if (!bp)
		return BP_HIT_NONE;

	set->stats.entries++;
	arch_set_pc(regs, pc);
	caller = arch_caller_at_entry(regs, io_read, &io);
	if (set->tramp && caller == set->tramp) {
		/* tail-called from a function whose return is trampolined */
		size_t i;
		struct bp_thread *rt = bp_ret_lookup(set, tid,
						     arch_ret_slot_at_entry(regs), &i);

		out->tail = 1;
		if (rt)
			caller = rt->rets[i].orig;
	} else if (bp->want_return && set->tramp &&
		   ret_push(set, tid, regs, bp, caller) < 0) {
		set->stats.lost++;
	}
	out->kind = BP_HIT_ENTRY;
	out->bp = bp;
	out->addr = pc;
	out->cookie = bp->cookie;
	for (int i = 0; i < 3; i++)
		out->args[i] = arch_call_arg(regs, i);
	out->caller = caller;
	out->sp = arch_sp(regs);
	err = resume_regs(set, tid, bp, regs);
	return err < 0 ? err : BP_HIT_ENTRY;
}

size_t bp_fix_stack(struct bp_set *set, uint64_t sp, void *buf, size_t len)
{
	size_t fixed = 0;

	/* where the slot is no word of memory, the return address is not there */
	if (!set->tramp || !arch_ret_slot_in_memory())
		return 0;
	for (size_t b = 0; b < NTBUCKETS; b++)
		for (struct bp_thread *t = set->threads[b]; t; t = t->next)
			for (size_t i = 0; i < t->nrets; i++) {
				uint64_t slot = t->rets[i].slot, v;

				if (slot < sp || slot + 8 > sp + len)
					continue;
				memcpy(&v, (uint8_t *)buf + (slot - sp), sizeof(v));
				if (v != set->tramp)
					continue;
				memcpy((uint8_t *)buf + (slot - sp), &t->rets[i].orig, 8);
				fixed++;
			}
	return fixed;
}

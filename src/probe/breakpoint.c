/*
 * breakpoint.c - int3 breakpoints that are never removed while the target
 * runs, return capture through a trampoline, and a clean undo.
 *
 * Why not "remove the int3, single-step, re-insert" (ltrace's way): while
 * the byte is out, other threads run through the function unseen (lost
 * events), and a thread that trapped just before the removal finds no
 * breakpoint at rip-1 and dies of SIGTRAP; it crashed an 8-thread target.
 * Here the int3 stays.  A hit moves rip to a copy of the first
 * instruction, out of line, in a scratch page near the code; the copy
 * ends with a jmp back.  Any number of threads can run the copy at once.
 *
 * Scratch page layout (one page, r-x, anonymous, mapped by an injected
 * mmap within +-2 GiB of the code it serves):
 *
 *   0x000  int3 x 32     offset 0 is the return trampoline
 *   0x020  slot 0        displaced instruction, jmp back, int3 padding
 *   0x040  slot 1 ...
 *
 * Return capture (want_return).  Two ways were weighed:
 *   - a breakpoint at the return address, matched on (tid, rsp): it costs
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
 * entry whose slot is rsp - 8 and every entry pushed after it (frames
 * longjmp'd over).
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
#include <sys/ptrace.h>

#include "bp_arch.h"
#include "probe/breakpoint.h"
#include "util/error.h"
#include "linux/procfs.h"
#include "probe/remote.h"
#include "util/xmalloc.h"

#define PAGE ARCH_PAGE_SIZE
#define SLOT0 32u		/* first slot offset; below: trampoline */
#define NBUCKETS 256		/* breakpoint hash; a few dozen probes */
#define NTBUCKETS 64		/* thread hash */
#define MAX_RETS 4096		/* return entries per thread */

struct bp {
	uint64_t addr;
	struct bp_insn insn;
	uint8_t orig;		/* the byte under the int3 */
	uint64_t slot;		/* 0 when emulated */
	unsigned resume_off;	/* offset of the jmp back in the slot */
	int want_return;
	void *cookie;
	struct bp *next;	/* hash chain */
	struct bp *all_next;	/* insertion order */
};

struct scratch {
	uint64_t addr;
	unsigned used;		/* first free byte */
};

struct ret_entry {
	uint64_t slot;		/* stack address of the return address */
	uint64_t orig;		/* the return address it held */
	struct bp *bp;
	uint64_t args[3];
};

struct bp_thread {
	pid_t tid;
	struct ret_entry *rets;
	size_t nrets, cap;
	int suppress;		/* swallow the SIGTRAP reported at suppress_rip */
	uint64_t suppress_rip;
	struct bp_thread *next;
};

struct bp_set {
	pid_t pid;
	int mem_fd;
	struct bp *buckets[NBUCKETS];
	struct bp *all, **all_tail;
	struct scratch *pages;
	size_t npages, pages_cap;
	uint64_t tramp;		/* 0 until the first page is mapped */
	uint64_t syscall_insn;
	int cet;		/* -1 unknown, 0 no shadow stack, 1 shadow stack */
	struct bp_thread *threads[NTBUCKETS];
	struct bp_stats stats;
};

static size_t bp_hash(uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 56) & (NBUCKETS - 1);
}

struct bp_set *bp_set_new(pid_t pid)
{
	struct bp_set *set = xcalloc(1, sizeof(*set));

	set->pid = pid;
	set->mem_fd = remote_open_mem(pid);
	set->all_tail = &set->all;
	set->cet = -1;
	return set;
}

static void free_threads(struct bp_set *set)
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

static void free_bps(struct bp_set *set)
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
	free_bps(set);
	free_threads(set);
	free(set->pages);
	if (set->mem_fd >= 0)
		close(set->mem_fd);
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

size_t bp_scratch_pages(const struct bp_set *set, uint64_t *addrs, size_t max)
{
	size_t i;

	for (i = 0; i < set->npages && i < max; i++)
		addrs[i] = set->pages[i].addr;
	return set->npages;
}

/* ---- threads ---- */

static struct bp_thread *thread_find(struct bp_set *set, pid_t tid, int create)
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

static int mem_read(struct bp_set *set, uint64_t addr, void *buf, size_t len)
{
	return remote_read(set->pid, set->mem_fd, addr, buf, len);
}

static int mem_write(struct bp_set *set, pid_t tid, uint64_t addr,
		     const void *buf, size_t len)
{
	return remote_write(set->pid, set->mem_fd, tid, addr, buf, len);
}

/* ---- scratch pages ---- */

/* Is [a, a + PAGE) clear of every mapping, and not where brk grows? */
static int page_free(const struct procfs_map *r, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++) {
		if (a < r[i].end && a + PAGE > r[i].start)
			return 0;
		/* leave the heap 1 GiB to grow into */
		if (a >= r[i].end && a < r[i].end + (1ULL << 30) && r[i].path &&
		    strstr(r[i].path, "[heap]"))
			return 0;
	}
	return a >= 0x10000;
}

/*
 * A free page within reach of [lo, hi) (the object around addr): the
 * highest one below lo, else the lowest one above hi.  0 if none.
 */
static uint64_t find_hole(const struct procfs_map *r, size_t n, uint64_t addr)
{
	uint64_t lo = addr, hi = addr + 1, ino = 0;
	const uint64_t reach = 0x7fff0000ULL - 2 * PAGE;

	for (size_t i = 0; i < n; i++)
		if (addr >= r[i].start && addr < r[i].end)
			ino = r[i].ino;
	for (size_t i = 0; i < n && ino; i++)
		if (r[i].ino == ino && bp_arch_in_rel32(r[i].start, addr)) {
			if (r[i].start < lo)
				lo = r[i].start;
			if (r[i].end > hi)
				hi = r[i].end;
		}
	/* below: walk down from each mapping's start */
	for (size_t k = n; k-- > 0;) {
		uint64_t a = r[k].start - PAGE;

		if (r[k].start > lo || r[k].start < PAGE)
			continue;
		if (hi - a > reach)
			break;
		if (page_free(r, n, a))
			return a;
	}
	/* above: each mapping's end */
	for (size_t k = 0; k < n; k++) {
		uint64_t a = r[k].end;

		if (a < hi)
			continue;
		if (a + PAGE - lo > reach)
			break;
		if (page_free(r, n, a))
			return a;
	}
	return 0;
}

static int ensure_syscall_insn(struct bp_set *set)
{
	if (set->syscall_insn)
		return 0;
	return remote_find_syscall_insn(set->pid, &set->syscall_insn);
}

/* Map a scratch page near addr; its index in set->pages or -errno. */
static int scratch_map(struct bp_set *set, pid_t tid, uint64_t addr)
{
	uint8_t head[SLOT0];
	struct remote_result res;
	int err = ensure_syscall_insn(set);

	if (err < 0)
		return err;
	for (int tries = 0; tries < 4; tries++) {
		size_t n;
		struct procfs_map *r;
		uint64_t a = procfs_read_maps(set->pid, &r, &n) == 0 ? find_hole(r, n, addr) : 0;
		int64_t got;

		procfs_maps_free(r);
		if (!a)
			return -ENOMEM;
		got = remote_mmap(tid, set->syscall_insn, a, PAGE, BP_SCRATCH_PROT,
				  BP_SCRATCH_FLAGS, &res);
		if (got == -EEXIST)
			continue;	/* another thread mapped it meanwhile */
		if (got < 0 && got > -4096)
			return (int)got;
		if ((uint64_t)got != a) {
			/* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
			remote_munmap(tid, set->syscall_insn, (uint64_t)got, PAGE, &res);
			continue;
		}
		memset(head, BP_ARCH_TRAP_BYTE, sizeof(head));
		err = mem_write(set, tid, a, head, sizeof(head));
		if (err < 0) {
			remote_munmap(tid, set->syscall_insn, a, PAGE, &res);
			return err;
		}
		set->pages = xgrowarray(set->pages, &set->pages_cap, set->npages + 1,
					sizeof(*set->pages));
		set->pages[set->npages].addr = a;
		set->pages[set->npages].used = SLOT0;
		if (!set->tramp)
			set->tramp = a;
		debug_msg("pid %d: scratch page at %#" PRIx64 " for %#" PRIx64,
			  set->pid, a, addr);
		return (int)set->npages++;
	}
	return -ENOMEM;
}

/* A free slot within reach of addr (and of the insn's target): address or 0. */
static uint64_t slot_find(struct bp_set *set, uint64_t addr, const struct bp_insn *insn)
{
	for (size_t i = 0; i < set->npages; i++) {
		struct scratch *s = &set->pages[i];
		uint64_t slot = s->addr + s->used;

		if (s->used + BP_ARCH_SLOT_SIZE > PAGE)
			continue;
		if (!bp_arch_in_rel32(slot, addr))
			continue;
		if ((insn->riprel || insn->kind == BPI_JCC) &&
		    !bp_arch_in_rel32(slot, insn->target))
			continue;
		return slot;
	}
	return 0;
}

static void slot_take(struct bp_set *set, uint64_t slot)
{
	for (size_t i = 0; i < set->npages; i++)
		if (slot == set->pages[i].addr + set->pages[i].used)
			set->pages[i].used += BP_ARCH_SLOT_SIZE;
}

/* CET shadow stacks: x86_Thread_features in /proc/PID/status. */
static int has_shadow_stack(pid_t pid)
{
	char path[64], line[256];
	int on = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "x86_Thread_features:", 20) == 0 && strstr(line, "shstk"))
			on = 1;
	fclose(f);
	return on;
}

int bp_insert(struct bp_set *set, pid_t stopped_tid, uint64_t addr,
	      int want_return, void *cookie)
{
	uint8_t buf[BP_ARCH_MAX_INSN], code[BP_ARCH_SLOT_SIZE];
	uint8_t trap = BP_ARCH_TRAP_BYTE;
	struct bp_insn insn;
	uint64_t slot = 0;
	unsigned resume_off = 0;
	struct bp *bp;
	int err;

	if (bp_at(set, addr))
		return -EEXIST;
	if (want_return) {
		if (set->cet < 0)
			set->cet = has_shadow_stack(set->pid);
		if (set->cet)
			return -ENOTSUP;
	}
	/* the instruction may end near the end of a mapping: read less */
	size_t n = sizeof(buf);

	while (n > 0 && mem_read(set, addr, buf, n) < 0)
		n--;
	if (n == 0)
		return -EIO;
	err = bp_arch_decode(addr, buf, n, &insn);
	if (err < 0)
		return err;

	if (bp_arch_needs_slot(&insn) || (want_return && !set->tramp)) {
		slot = slot_find(set, addr, &insn);
		if (!slot) {
			err = scratch_map(set, stopped_tid, addr);
			if (err < 0)
				return err;
			slot = slot_find(set, addr, &insn);
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
		err = mem_write(set, stopped_tid, slot, code, sizeof(code));
		if (err < 0)
			return err;
		slot_take(set, slot);
	}
	err = mem_write(set, stopped_tid, addr, &trap, 1);
	if (err < 0)
		return err;	/* the slot stays used, unreachable */

	bp = xcalloc(1, sizeof(*bp));
	bp->addr = addr;
	bp->insn = insn;
	bp->orig = buf[0];
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

/* A new call will use the return slot at sp: drop entries found stale. */
static void rets_drop_stale(struct bp_set *set, struct bp_thread *t, uint64_t sp)
{
	size_t keep = 0;

	for (size_t i = 0; i < t->nrets; i++) {
		struct ret_entry *e = &t->rets[i];
		uint64_t v = 0;

		if (e->slot > sp ||
		    (e->slot < sp && mem_read(set, e->slot, &v, sizeof(v)) == 0 &&
		     v == set->tramp)) {
			t->rets[keep++] = *e;
			continue;
		}
		set->stats.stale++;
	}
	t->nrets = keep;
}

/* Trampoline the return address at regs->rsp; 0 or -errno. */
static int ret_push(struct bp_set *set, pid_t tid, const arch_regs_t *regs,
		    struct bp *bp, uint64_t orig)
{
	struct bp_thread *t = thread_find(set, tid, 1);
	struct ret_entry *e;
	int err;

	if (t->nrets && t->rets[t->nrets - 1].slot <= regs->rsp)
		rets_drop_stale(set, t, regs->rsp);
	if (t->nrets >= MAX_RETS)
		return -ENOSPC;
	err = mem_write(set, tid, regs->rsp, &set->tramp, sizeof(set->tramp));
	if (err < 0)
		return err;
	t->rets = xgrowarray(t->rets, &t->cap, t->nrets + 1, sizeof(*t->rets));
	e = &t->rets[t->nrets++];
	e->slot = regs->rsp;
	e->orig = orig;
	e->bp = bp;
	e->args[0] = regs->rdi;
	e->args[1] = regs->rsi;
	e->args[2] = regs->rdx;
	return 0;
}

/* The entry of tid (or, failing that, of any thread) whose slot is slot. */
static struct bp_thread *ret_lookup(struct bp_set *set, pid_t tid, uint64_t slot,
				    size_t *idx)
{
	struct bp_thread *t = thread_find(set, tid, 0);

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

static int set_regs(pid_t tid, arch_regs_t *regs)
{
	if (ptrace(PTRACE_SETREGS, tid, 0L, regs) < 0)
		return -errno;
	return 0;
}

static int on_return(struct bp_set *set, pid_t tid, arch_regs_t *regs,
		     struct bp_hit *out)
{
	uint64_t slot = regs->rsp - 8;	/* ret popped it */
	struct bp_thread *t;
	struct ret_entry e;
	size_t i;

	t = ret_lookup(set, tid, slot, &i);
	if (!t) {
		debug_msg("pid %d tid %d: return at %#llx with no saved return address",
			  set->pid, tid, regs->rsp);
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
	out->retval = regs->rax;
	out->caller = e.orig;
	out->sp = slot;
	regs->rip = e.orig;
	return set_regs(tid, regs) < 0 ? -errno : BP_HIT_RETURN;
}

/* Set regs so that the thread runs the function as if never stopped. */
static int resume_regs(struct bp_set *set, pid_t tid, struct bp *bp, arch_regs_t *regs)
{
	switch (bp->insn.kind) {
	case BPI_DISPLACE:
	case BPI_JCC:
		regs->rip = bp->slot;
		break;
	case BPI_ENDBR:
		regs->rip = bp->addr + bp->insn.len;
		break;
	case BPI_JMP:
		regs->rip = bp->insn.target;
		break;
	case BPI_CALL: {
		uint64_t ret = bp->addr + bp->insn.len;
		int err = mem_write(set, tid, regs->rsp - 8, &ret, sizeof(ret));

		if (err < 0)
			return err;
		regs->rsp -= 8;
		regs->rip = bp->insn.target;
		break;
	}
	}
	return set_regs(tid, regs);
}

int bp_hit(struct bp_set *set, pid_t tid, arch_regs_t *regs, struct bp_hit *out)
{
	struct bp_thread *t = thread_find(set, tid, 0);
	uint64_t pc = regs->rip - BP_ARCH_TRAP_LEN;
	struct bp *bp;
	uint64_t caller = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (t && t->suppress) {
		t->suppress = 0;
		if (regs->rip == t->suppress_rip) {
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
	regs->rip = pc;
	mem_read(set, regs->rsp, &caller, sizeof(caller));
	if (set->tramp && caller == set->tramp) {
		/* tail-called from a function whose return is trampolined */
		size_t i;
		struct bp_thread *rt = ret_lookup(set, tid, regs->rsp, &i);

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
	out->args[0] = regs->rdi;
	out->args[1] = regs->rsi;
	out->args[2] = regs->rdx;
	out->caller = caller;
	out->sp = regs->rsp;
	err = resume_regs(set, tid, bp, regs);
	return err < 0 ? err : BP_HIT_ENTRY;
}

size_t bp_fix_stack(struct bp_set *set, uint64_t sp, void *buf, size_t len)
{
	size_t fixed = 0;

	if (!set->tramp)
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

/* The breakpoint whose slot holds pc: 1 at its start, 2 at its jmp back. */
static struct bp *in_slot(struct bp_set *set, uint64_t pc, int *where)
{
	for (struct bp *bp = set->all; bp; bp = bp->all_next) {
		if (!bp->slot)
			continue;
		if (pc == bp->slot) {
			*where = 1;
			return bp;
		}
		if (pc == bp->slot + bp->resume_off) {
			*where = 2;
			return bp;
		}
	}
	return NULL;
}

int bp_thread_fixup_for_detach(struct bp_set *set, pid_t tid)
{
	arch_regs_t regs;
	struct bp_thread *t;
	struct bp *bp;
	uint64_t pc;
	size_t i;
	int where, queued, changed = 0;

	if (ptrace(PTRACE_GETREGS, tid, 0L, &regs) < 0)
		return -errno;
	pc = regs.rip;
	bp = bp_at(set, pc - BP_ARCH_TRAP_LEN);
	queued = (bp || (set->tramp && pc - BP_ARCH_TRAP_LEN == set->tramp)) &&
		 sigtrap_pending(set->pid, tid);

	if (set->tramp && (pc == set->tramp || pc == set->tramp + BP_ARCH_TRAP_LEN)) {
		/* returned into the trampoline: go where the return went */
		if ((t = ret_lookup(set, tid, regs.rsp - 8, &i))) {
			regs.rip = t->rets[i].orig;
			t->nrets = i;
			changed = 1;
		}
	} else if (bp && (queued || bp->insn.len > BP_ARCH_TRAP_LEN)) {
		/*
		 * The int3 ran.  With a one-byte first instruction, addr + 1
		 * is also an instruction boundary: only a queued SIGTRAP
		 * says the int3 ran.
		 */
		regs.rip = bp->addr;
		changed = 1;
	} else if ((bp = in_slot(set, pc, &where))) {
		regs.rip = where == 1 ? bp->addr : bp->addr + bp->insn.len;
		changed = 1;
	}
	if (changed && ptrace(PTRACE_SETREGS, tid, 0L, &regs) < 0)
		return -errno;
	if (queued) {
		t = thread_find(set, tid, 1);
		t->suppress = 1;
		t->suppress_rip = regs.rip;
		return 1;
	}
	return 0;
}

int bp_unmap_scratch(struct bp_set *set, pid_t stopped_tid)
{
	struct remote_result res;
	int err = 0;

	if (!set->npages)
		return 0;
	if ((err = ensure_syscall_insn(set)) < 0)
		return err;
	while (set->npages > 0) {
		int64_t r = remote_munmap(stopped_tid, set->syscall_insn,
					  set->pages[set->npages - 1].addr, PAGE, &res);

		if (r < 0)
			return (int)r;
		set->npages--;
	}
	set->tramp = 0;
	return 0;
}

/* Write back trampolined return addresses still on stacks of memory fd. */
static int restore_ret_slots(struct bp_set *set, pid_t pid, int fd, pid_t tid)
{
	int first = 0;

	for (size_t b = 0; b < NTBUCKETS; b++)
		for (struct bp_thread *t = set->threads[b]; t; t = t->next)
			for (size_t i = t->nrets; i-- > 0;) {
				uint64_t slot = t->rets[i].slot, v = 0;
				int err;

				if (remote_read(pid, fd, slot, &v, sizeof(v)) < 0 ||
				    v != set->tramp)
					continue;
				err = remote_write(pid, fd, tid, slot, &t->rets[i].orig, 8);
				if (err < 0 && !first)
					first = err;
			}
	return first;
}

int bp_remove_all(struct bp_set *set, pid_t stopped_tid)
{
	int first = 0, err;

	for (struct bp *bp = set->all; bp; bp = bp->all_next) {
		err = mem_write(set, stopped_tid, bp->addr, &bp->orig, 1);
		if (err < 0 && !first)
			first = err;
	}
	if (set->tramp) {
		err = restore_ret_slots(set, set->pid, set->mem_fd, stopped_tid);
		if (err < 0 && !first)
			first = err;
	}
	free_bps(set);
	free_threads(set);
	err = bp_unmap_scratch(set, stopped_tid);
	if (err < 0 && !first)
		first = err;
	return first;
}

int bp_clean_fork_child(struct bp_set *set, pid_t child)
{
	int fd = remote_open_mem(child), first = 0, err;

	if (fd < 0)
		return fd;
	for (struct bp *bp = set->all; bp; bp = bp->all_next) {
		err = remote_write(child, fd, 0, bp->addr, &bp->orig, 1);
		if (err < 0 && !first)
			first = err;
	}
	if (set->tramp) {
		err = restore_ret_slots(set, child, fd, 0);
		if (err < 0 && !first)
			first = err;
	}
	close(fd);
	return first;
}

int bp_unmap_fork_child(struct bp_set *set, pid_t child)
{
	struct remote_result res;
	int first = 0, err;

	if (!set->npages)
		return 0;
	if ((err = ensure_syscall_insn(set)) < 0)
		return err;
	for (size_t i = 0; i < set->npages; i++) {
		int64_t r = remote_munmap(child, set->syscall_insn, set->pages[i].addr,
					  PAGE, &res);

		if (r < 0 && !first)
			first = (int)r;
	}
	return first;
}

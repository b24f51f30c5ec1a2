/*
 * breakpoint.h - int3 breakpoints on function entries, with optional
 * capture of the return value, in one traced process (one address
 * space).
 *
 * How a hit resumes ("displaced instruction + jmp back"): the first
 * instruction of the function is copied into a slot of a scratch page
 * that memtap maps into the target within reach of the function
 * (ARCH_NEAR_REACH; an injected mmap), followed by a jmp back to the next
 * instruction.  On a hit the thread stops once (SIGTRAP, the pc it
 * reports names the int3: arch_bp_addr_from_pc()); bp_hit() sets its pc
 * to the slot and it continues.  The int3 is never removed while the
 * target runs, so every thread sees it all the time and counts are exact.
 * endbr64, relative jmp and relative call are emulated instead.
 *
 * Return values (want_return): at the entry hit the return address in
 * its return slot (arch/bp_arch.h; x86-64: the stack word at sp) is saved
 * (per thread, with the slot's address) and replaced by the address of an
 * int3 "trampoline" in the scratch page; the function returns into it,
 * bp_hit() reports the return value and sets the pc to the saved return
 * address.  Only for functions that return normally or by longjmp: a
 * C++ exception unwinding through a replaced return address terminates
 * the target, so never ask for the return of anything that can throw
 * (operator new).  Refused (-ENOTSUP) when the
 * process runs with CET shadow stacks.  Entries of frames left by longjmp
 * are dropped when found stale.  Unwinders must see the real return
 * addresses: bp_fix_stack() patches a stack snapshot.
 *
 * Life cycle:
 *   bp_set_new()          per address space (after each exec: a new one)
 *   bp_insert()           with one thread of the process in a ptrace-stop
 *                         (see remote.h for which stops; other threads may
 *                         run)
 *   bp_hit()              at every SIGTRAP signal-delivery-stop
 *   bp_thread_gone()      when a thread exits
 *   detach:               stop every thread; bp_thread_fixup_for_detach()
 *                         on each; bp_remove_all(); PTRACE_DETACH
 *   bp_clean_fork_child() at the parent's fork event, bp_unmap_fork_child()
 *                         at the child's first stop, then detach the child
 *                         (a vfork child shares the memory: never clean it)
 *   bp_set_free()         frees memtap's memory, never touches the target
 *
 * Ownership: the set owns every struct bp; cookies are the caller's and
 * are never freed here.  No function exits or prints, except debug_msg().
 */
#ifndef MEMTAP_BREAKPOINT_H
#define MEMTAP_BREAKPOINT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "arch/arch.h"

#ifndef MAP_FIXED_NOREPLACE
# define MAP_FIXED_NOREPLACE 0x100000
#endif

/*
 * How a scratch page is mapped: one page, by an injected mmap with these
 * prot and flags (fd -1, offset 0); it goes with an injected munmap.
 * Whoever checks beforehand that the target's seccomp filters allow
 * them (attach.c) uses these.  MAP_FIXED_NOREPLACE only where the
 * kernel knows it (linux/features.h); without it the address is a hint,
 * and a page the kernel put elsewhere is unmapped and the next hole tried.
 */
#define BP_SCRATCH_PROT (PROT_READ | PROT_EXEC)
#define BP_SCRATCH_FLAGS (bp_scratch_flags())
int bp_scratch_flags(void);

struct bp_set;
struct bp;

enum bp_hit_kind {
	BP_HIT_NONE = 0,	/* not ours: deliver the signal */
	BP_HIT_ENTRY = 1,	/* a function was entered */
	BP_HIT_RETURN = 2,	/* a function with want_return returned */
	BP_HIT_SUPPRESS = 3,	/* a late SIGTRAP of ours: do not deliver it */
};

struct bp_hit {
	enum bp_hit_kind kind;
	struct bp *bp;
	uint64_t addr;		/* the function (breakpoint address) */
	void *cookie;		/* as given to bp_insert() */
	uint64_t args[3];	/* the first 3 arguments at entry (for a return too) */
	uint64_t retval;	/* BP_HIT_RETURN: the return value */
	uint64_t caller;	/* the return address */
	uint64_t sp;		/* sp at entry (the return slot's address) */
	int tail;		/* BP_HIT_ENTRY: entered with the trampoline as
				   its return address (arch_caller_at_entry()),
				   so tail-called from a hooked call whose
				   return slot it shares */
};

struct bp_stats {
	uint64_t entries;	/* entry hits */
	uint64_t returns;	/* return hits */
	uint64_t stale;		/* return entries dropped (longjmp) */
	uint64_t lost;		/* return slots not trampolined (write failed) */
	uint64_t suppressed;	/* late SIGTRAPs swallowed */
};

/* A set for process pid (any tid of it works for memory).  Never NULL. */
struct bp_set *bp_set_new(pid_t pid);

/*
 * Free the set and every breakpoint, without touching the target: after
 * bp_remove_all(), after exec (the address space is gone), or after the
 * process died.
 */
void bp_set_free(struct bp_set *set);

/*
 * Put an int3 at addr, the first byte of a function.  stopped_tid is a
 * thread of the process in a ptrace-stop usable for an injected syscall
 * (needed the first time a scratch page near addr is mapped).
 * Returns 0, or -errno: -EEXIST (a breakpoint is there; aliases of one
 * function share it), -EBUSY (an int3 is there already; or stopped_tid is
 * at a stop where no syscall can be injected), -ENOTSUP (an instruction
 * that cannot run out of line; want_return under CET shadow stacks),
 * -ENOMEM (no room for a scratch page within reach), -EIO, -ESRCH.
 * Nothing is left behind on failure.
 */
int bp_insert(struct bp_set *set, pid_t stopped_tid, uint64_t addr,
	      int want_return, void *cookie);

/*
 * Forget the breakpoint at addr without touching the target: its code
 * was unmapped (dlclose).  Return entries of its calls are dropped.
 * 0 or -ENOENT.
 */
int bp_forget(struct bp_set *set, uint64_t addr);

/*
 * Take the breakpoint at addr out, through a thread in a ptrace-stop:
 * its original byte back, then forgotten.  Its slot stays mapped and
 * used: a thread still in the slot goes on to the original code.  A
 * thread stopped at its hit (pc just past it) must be fixed up first
 * (bp_thread_fixup_for_detach()).  0, -ENOENT or -errno.
 */
int bp_remove(struct bp_set *set, pid_t stopped_tid, uint64_t addr);

/* The breakpoint at addr, or NULL. */
struct bp *bp_at(struct bp_set *set, uint64_t addr);
uint64_t bp_addr(const struct bp *bp);
void *bp_cookie(const struct bp *bp);

/*
 * At a SIGTRAP signal-delivery-stop of tid, with regs just read by
 * arch_regs_get().  Returns a BP_HIT_* kind (fills *out) or -errno.  For
 * ENTRY and RETURN the registers are changed (and written back with
 * arch_regs_set()) so that PTRACE_CONT with signal 0 continues the
 * function; for SUPPRESS nothing changes and the signal must not be
 * delivered either.  NONE: not ours, deliver SIGTRAP.  An unwinder at
 * an entry hit should start from pc = out->addr and sp = out->sp.
 */
int bp_hit(struct bp_set *set, pid_t tid, arch_regs_t *regs, struct bp_hit *out);

/* tid exited (or exec'd away): forget its return entries. */
void bp_thread_gone(struct bp_set *set, pid_t tid);

/*
 * For detach, with tid in a ptrace-stop (any stop; SIGTRAP stops already
 * passed to bp_hit()): move its pc out of memtap's code.  A thread that
 * ran the int3 at addr goes back to addr, one in a slot back into the
 * function (slot -> addr, jmp back -> addr + len), one at the trampoline
 * to its saved return address.  Returns 0 when tid may be detached once
 * bp_remove_all() ran, 1 when an int3 SIGTRAP of tid is still queued
 * (the interrupt stop was reported first): then resume tid with
 * PTRACE_CONT, signal 0, pass its next stop (that SIGTRAP) to bp_hit(),
 * which answers BP_HIT_SUPPRESS, and call this again.  -errno on
 * failure (-ESRCH: gone).
 */
int bp_thread_fixup_for_detach(struct bp_set *set, pid_t tid);

/*
 * With every thread of the process stopped and fixed up: write back
 * every original byte and every trampolined return address still on a
 * stack, then unmap the scratch pages through stopped_tid (a thread at a
 * signal-delivery-stop or PTRACE_EVENT_STOP).  Where a return address
 * cannot be written back (!arch_ret_slot_in_memory(): arm64's x30) and
 * hooked calls are in flight, the trampoline's page stays, rewritten as
 * a routine that sends each of them to its return address
 * (arch_ret_lookup_page()); so too in a fork child's copy.  The set is empty
 * afterwards (free it with bp_set_free()).  Returns 0 or the first
 * -errno; on -EBUSY from the unmapping, only the pages are left: call
 * bp_unmap_scratch() with another thread.  bp_restore_all(): all of
 * that but the unmapping, the pages left to bp_unmap_scratch().
 */
int bp_remove_all(struct bp_set *set, pid_t stopped_tid);
int bp_restore_all(struct bp_set *set, pid_t stopped_tid);
int bp_unmap_scratch(struct bp_set *set, pid_t stopped_tid);

/*
 * child is a fork (not a vfork: that one shares our memory) of this
 * process.  Call at the parent's PTRACE_EVENT_FORK stop, before resuming
 * the parent: its return entries are then those the child inherited.
 * Writes the original bytes and return addresses into the child's copy
 * of the memory: through /proc/CHILD/mem, for which the child need not
 * be stopped yet; else by PTRACE_POKEDATA at the child's first stop,
 * waited for here without taking it from the tracer's loop (waitid
 * WNOWAIT; or already reported and held).  The set is unchanged.  0 or
 * -errno.
 */
int bp_clean_fork_child(struct bp_set *set, pid_t child);

/*
 * At the fork child's first stop (PTRACE_EVENT_STOP), after
 * bp_clean_fork_child(): unmap its copies of the scratch pages with an
 * injected munmap.  Then the child can be detached.  0 or -errno.
 */
int bp_unmap_fork_child(struct bp_set *set, pid_t child);

/*
 * Replace trampoline addresses by the saved return addresses in len bytes
 * of stack copied from address sp (a snapshot for the unwinder).
 * Returns how many were replaced.
 */
size_t bp_fix_stack(struct bp_set *set, uint64_t sp, void *buf, size_t len);

/* The scratch pages mapped into the target (for tests). */
size_t bp_scratch_pages(const struct bp_set *set, uint64_t *addrs, size_t max);

void bp_get_stats(const struct bp_set *set, struct bp_stats *stats);

#endif /* MEMTAP_BREAKPOINT_H */

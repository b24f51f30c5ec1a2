/*
 * unwind.h - stack snapshots and the unwinders that walk them.
 *
 * The tracer copies the top of a stopped thread's stack with one
 * process_vm_readv (stack_snapshot_take), resumes the thread, and only
 * then unwinds from the copy (unwinder_walk), so the target waits for
 * one copy, never for an unwind.
 *
 * Back ends (--unwind=):
 *   fp      frame-pointer walk over the snapshot (unwind-fp.c); exact
 *           only where every function keeps fp as frame pointer
 *   dwarf   libunwind-ptrace with accessors that read the snapshot
 *           (unwind-libunwind.c)
 *   libdw   elfutils libdwfl with thread callbacks over the snapshot
 *           (unwind-libdw.c); frames without CFI by their instructions
 *           (unwind-insn.h), else by the frame pointer
 *   none    the stop's pc alone
 *
 * Frame convention of unwinder_walk(): pcs[0] is the exact pc of the
 * stop; every later entry is a return address, so the call site is
 * pcs[i] - 1 (symbolize that, not pcs[i]).  A frame interrupted by a
 * signal (its pc is exact, not a return address) is stored as pc + 1 so
 * that the rule holds for every i > 0.
 */
#ifndef MEMTAP_UNWIND_H
#define MEMTAP_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

struct proc_modules;

/* Deepest stack an unwinder returns; callers may ask for less. */
#define UNWIND_MAX_DEPTH 256

/* Default snapshot size: enough for ~60 typical frames. */
#define STACK_SNAPSHOT_DEFAULT (32 * 1024)

/*
 * A copy of [start, start + len) of a thread's stack, taken at a stop,
 * with the registers of that stop.
 *
 * Lifecycle: zero-initialize (STACK_SNAPSHOT_INIT), call
 * stack_snapshot_take() any number of times (the buffer is reused and
 * grown as needed), then stack_snapshot_release().  The struct owns data.
 */
struct stack_snapshot {
	pid_t pid;		/* thread group: where fallback reads go */
	pid_t tid;		/* the thread: PTRACE_PEEKDATA fallback */
	arch_regs_t regs;
	uint64_t start;		/* tracee address of data[0] (the stop's sp) */
	size_t len;		/* bytes valid in data */
	unsigned char *data;
	size_t cap;		/* bytes allocated in data */
	size_t asked;		/* bytes asked for: len < asked, the stack's end */
	int cut;		/* a read above a whole copy failed: the unwinder
				 * stopped before the stack's end */
	int borrowed;		/* data is not the snapshot's but its source's (a
				 * record of an in-target ring), valid until the
				 * sink is flushed: never freed nor grown */
	int live;		/* stack_snapshot_extend()'s walk: the thread is
				 * stopped, reads above the copy go to it */
	uint64_t reach;		/* and the end of the highest of them */
	/*
	 * A Go program's thread stopped on its g0 stack: the goroutine that
	 * switched there (go_snapshot_take()), its stack copied to
	 * data[go_off, go_off + go_len) (after the stack's copy), from
	 * go_start (its sched.sp) up to go_hi at most.  go_len 0: none.
	 */
	int go_g0;		/* the thread was on its g0 stack */
	uint64_t go_start;
	size_t go_off, go_len;
	uint64_t go_hi;		/* the end of its stack (g.stack.hi) */
	uint64_t go_pc, go_sp, go_bp;	/* its frame: a return address, sp, bp */
	uint64_t go_lr;		/* its sched's lr, for a CPU whose calls leave the
				 * return address in a register (arch/go.h) */
	/*
	 * A ring record's stub walk (trace/ring.c): the npre return
	 * addresses at pre (borrowed as data) are the stack's first
	 * frames.  STACK_WALK_END: they are all of it (no copy);
	 * STACK_WALK_TAIL: the copy is that of the frame after them,
	 * whose pc is a return address (its frame's rule is its
	 * call's) and of whose registers only pc, sp and fp are known
	 * (the others 0, never used).  0: no walk.
	 */
	const uint64_t *pre;
	int npre;
	int walked;
};

enum { STACK_WALK_TAIL = 1, STACK_WALK_END };

#define STACK_SNAPSHOT_INIT { 0 }

/*
 * Copy up to max_bytes of tid's stack from its stack pointer upward, in
 * one process_vm_readv (linux/memio.h: or /proc/PID/mem, or
 * PTRACE_PEEKDATA): a read is cut short where the mapping ends.  regs
 * are copied.  The thread must be in a ptrace-stop; it may be resumed
 * as soon as this returns.
 *
 * Returns 0 (len may be 0 if nothing was readable: unwinders then give
 * the pc alone), or -1 with errno set when regs is unusable.
 */
int stack_snapshot_take(struct stack_snapshot *s, pid_t pid, pid_t tid,
			const arch_regs_t *regs, size_t max_bytes);

/* Free the buffer; s can be taken again afterwards. */
void stack_snapshot_release(struct stack_snapshot *s);

/* The copy grows to at most this many times the bytes first asked for. */
#define STACK_SNAPSHOT_GROW 64
/* and to at most this many bytes */
#define STACK_SNAPSHOT_GROW_MAX ((size_t)64 << 20)

/*
 * Read len bytes at tracee address addr: from the copy when it holds
 * them all; a read at or above start that it does not hold fails (the
 * stack as the thread left it later: no frame may come from it), and
 * marks the snapshot cut when the copy has all the bytes asked for
 * (with live set, stack_snapshot_extend()'s walk: it is read from the
 * stopped thread, and raises reach);
 * other addresses are read from the process (linux/memio.h: the
 * PTRACE_PEEKDATA fallback on tid works only while it is stopped).
 * Returns 0 or -1.  Changes nothing in s but its cut mark (and reach), set when a
 * read above a copy of all the bytes asked for fails (the stack goes on
 * beyond the copy, and the process no longer gives it: without
 * process_vm_readv and /proc/PID/mem, once the thread runs again).
 */
int stack_snapshot_read(const struct stack_snapshot *s, uint64_t addr,
			void *buf, size_t len);

/*
 * A walk that reads through a copy of s (its registers changed: a stub's
 * or a goroutine's frame) gives s the marks its reads left on the copy:
 * cut, reach.
 */
static inline void stack_snapshot_marks(const struct stack_snapshot *s,
					const struct stack_snapshot *copy)
{
	struct stack_snapshot *m = (struct stack_snapshot *)s;

	m->cut |= copy->cut;
	if (copy->reach > m->reach)
		m->reach = copy->reach;
}

/* Read from a process without a snapshot (same fallbacks). */
int unwind_read_remote(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len);

enum unwind_kind {
	UNWIND_NONE,
	UNWIND_FP,
	UNWIND_DWARF,		/* libunwind-ptrace over the snapshot */
	UNWIND_LIBDW,		/* libdw over the snapshot */
	UNWIND_NKINDS
};

/*
 * The default --unwind back end.  libdw with its rule cache: 0.1-1 µs
 * per warm walk of 10-66 frames here, against 10-50 µs for libunwind
 * over the same snapshot, and a cheaper first walk and maps change
 * (tests/unit/unwind-bench.c).
 */
#define UNWIND_DEFAULT UNWIND_LIBDW

/* "none", "fp", "dwarf", "libdw"; -1 for an unknown name. */
int unwind_kind_from_name(const char *name);
const char *unwind_kind_name(enum unwind_kind kind);
/* 1 when the back end was compiled in. */
int unwind_kind_available(enum unwind_kind kind);

struct unwinder;

/* A back end: each unwind-*.c defines one of these. */
struct unwinder_ops {
	const char *name;
	/* Set up uw->priv; 0 or -1 (the unwinder is then unusable). */
	int (*init)(struct unwinder *uw);
	void (*fini)(struct unwinder *uw);
	/* The process's mappings changed: drop what depends on them. */
	void (*maps_changed)(struct unwinder *uw);
	/* Fill pcs[0..max_depth); return the depth (>= 1 when max_depth >= 1). */
	int (*walk)(struct unwinder *uw, const struct stack_snapshot *s,
		    uint64_t *pcs, int max_depth);
};

struct unwinder {
	enum unwind_kind kind;
	const struct unwinder_ops *ops;
	pid_t pid;
	struct proc_modules *pm;	/* borrowed, may be NULL */
	unsigned pm_version;		/* modules_version() last seen */
	int dirty;			/* maps_changed pending */
	unsigned code_gen;		/* unwinder_code_changed() calls: a back
					 * end that keeps rules of run-time code
					 * makes them again when it changed */
	void *priv;			/* the back end's state */
	uint64_t walks, frames, failures;
	/* frames stepped by CFI, by instruction analysis (code without
	 * CFI, stack/unwind/unwind-insn.h), by the frame pointer (the rest); by
	 * the CFI of a jitdump (stack/runtimes/jitcfi.h), not in by_cfi */
	uint64_t by_cfi, by_insn, by_fp, by_jit;
};

/*
 * Create the unwinder of one process (all its threads).  pm is the
 * process's module list, borrowed: it must outlive the unwinder.  libdw
 * requires it (its modules and ELF files come from there, opened
 * through /proc/PID/map_files or /proc/PID/root); fp uses it to tell
 * code addresses (without it, the leaf's caller is lost); libunwind
 * and none accept NULL.  Memory is read through pm->pid.  Keep one unwinder per process for
 * its whole life: creating one is cheap, but its caches (filled by the
 * first walks) cost milliseconds to rebuild.
 *
 * Returns NULL (errno set) if the back end is not compiled in or fails
 * to start; callers then fall back to another kind.
 */
struct unwinder *unwinder_new(enum unwind_kind kind, pid_t pid, struct proc_modules *pm);

/*
 * The process mapped or unmapped code (dlopen, dlclose, exec): caches
 * keyed by address are flushed before the next walk.  Cheap; the work is
 * done lazily.  A change seen through pm (modules_version) has the same
 * effect without this call.
 */
void unwinder_maps_changed(struct unwinder *uw);

/*
 * Code may have been written where there was code (memory made
 * executable: a JIT's page rewritten and made executable again, an
 * executable mapping replaced by another at the same address).  No
 * mapping of a file need have changed, so unwinder_maps_changed() is
 * not called: what the back ends keep of code in no module (rules read
 * from its instructions or a jitdump's CFI, by pc) is made again at
 * its next use; their rules of modules' code stay.  Cheap.
 */
static inline void unwinder_code_changed(struct unwinder *uw)
{
	uw->code_gen++;
}

/*
 * Unwind the thread of snapshot s into pcs (see the frame convention
 * above).  The module list is brought up to date first (re-read when
 * marked changed, or when the pc is in no known module); a walk that
 * ends at a pc of no known module re-reads it (modules_lookup(): at
 * most once per event) and, if that found new code, walks again.  The
 * thread may be running: reads beyond the snapshot then see its current
 * memory.  Returns the depth, 0 if max_depth is 0, -1 on
 * bad arguments.  Never blocks on the tracee, never calls ptrace except
 * PTRACE_PEEKDATA when nothing else reads the memory (linux/memio.h).
 */
int unwinder_walk(struct unwinder *uw, const struct stack_snapshot *s,
		  uint64_t *pcs, int max_depth);

void unwinder_free(struct unwinder *uw);

/*
 * A copy too short for its walk.  At a stop (the thread still stopped,
 * s just taken by stack_snapshot_take(): not borrowed, no stub walk, no
 * goroutine yet) whose copy holds all the bytes asked for: walk s as
 * unwinder_walk() will, reading what lies above the copy from the
 * thread, and grow the copy with one more read to the end of the
 * highest of those reads, at most max_bytes from s->start in all.  The
 * walk that comes later, the thread resumed, then finds in the copy
 * every byte of the stack it reads; one that needs more than max_bytes
 * ends cut as before.  A copy cut short by the stack's end, or one that
 * the walk did not go beyond, is left alone (one test, no walk, for the
 * first).  Returns the bytes added.  The walk is not counted
 * (uw->walks); nothing of s changes but its copy (data, cap, len,
 * asked).
 */
size_t stack_snapshot_extend(struct unwinder *uw, struct stack_snapshot *s, int max_depth,
			     size_t max_bytes);

/*
 * Stub frames (stack/modules.h, struct stub_frame: the in-target
 * probes' code, which has no CFI).  *regs is a frame of a walk over s
 * whose pc is in a stub range of uw->pm (an exact pc, or a return
 * address: the table is the same).  Its pc, sp and callee-saved
 * registers become those of the first caller outside the stubs (a stub
 * that a stub called is stepped over too); the other registers are
 * left alone.  Returns 1 (its pc is the caller's return address), 0
 * when the pc is in no stub range, -1 when it is but its frame is
 * unknown or unreadable (the walk ends there).  Every back end calls it
 * at each frame, so a walk goes on through a stub as through any
 * function.
 */
int unwind_stub_step(const struct unwinder *uw, const struct stack_snapshot *s,
		     arch_regs_t *regs);

/*
 * Go's stack switches (stack/runtimes/goruntime.h).  At a stop (thread still
 * stopped, s not borrowed) of a process whose module list has a Go
 * runtime (pm->go): when the thread runs on its g0 stack for a
 * goroutine (m.curg), that goroutine's frame and its stack from its sp
 * up (to its top, at most max_bytes) are copied into s, which reads
 * serve from then (stack_snapshot_read()): a read of the goroutine's
 * stack beyond that copy fails, and marks s cut (the goroutine may
 * have run on since).  Anything unreadable or implausible (a g, m or
 * sched of garbage) leaves s without them.
 */
void go_snapshot_take(struct stack_snapshot *s, const struct proc_modules *pm,
		      size_t max_bytes);

/*
 * A frame of a walk over s whose pc is a return address (not the
 * exact pc of the stop): when it returns into one of Go's switch
 * functions on the g0 stack and s holds the goroutine that switched,
 * its pc, sp and fp become the goroutine's frame (pc a return address
 * again).  1 stepped; 2 stepped two frames: the goroutine's
 * function had not made its frame (runtime.morestack), the walk gives
 * s->go_pc as its frame, then regs, its caller's; -1 such a frame but
 * no goroutine in s (none ran, or it was not read): the walk ends
 * there, at the bottom of g0; 0 not such a frame.  A walk calls it at
 * each frame after the first; for a stop not on a Go thread's g0 (every
 * program not in Go) it costs one test.
 */
int unwind_go_step_frame(const struct proc_modules *pm, const struct stack_snapshot *s,
			 arch_regs_t *regs);

/* pm: the unwinder's module list (uw->pm), may be NULL. */
static inline int unwind_go_step(const struct proc_modules *pm, const struct stack_snapshot *s,
				 arch_regs_t *regs)
{
	return s->go_g0 ? unwind_go_step_frame(pm, s, regs) : 0;
}

/*
 * libdw back end: 1 (default) walks from a per-pc cache of simple CFI
 * rules and uses libdwfl's unwinder only for the frames that need it;
 * 0 always uses libdwfl (for measurements and comparisons).
 */
extern int unwind_libdw_rule_cache;

/* Back ends (NULL when not compiled in). */
extern const struct unwinder_ops unwinder_none_ops;
extern const struct unwinder_ops unwinder_fp_ops;
extern const struct unwinder_ops *const unwinder_libunwind_ops;
extern const struct unwinder_ops *const unwinder_libdw_ops;

/*
 * A one-page cache for reads beyond the snapshot (code, unwind tables):
 * back ends reset it at the start of each walk, since the tracee may
 * have changed its memory in between.
 */
struct unwind_memcache {
	uint64_t page;		/* tracee address of buf, valid if len */
	size_t len;
	unsigned char buf[4096];
};

static inline void unwind_memcache_reset(struct unwind_memcache *c)
{
	c->len = 0;
}

/* stack_snapshot_read() through the cache. */
int unwind_memcache_read(struct unwind_memcache *c, const struct stack_snapshot *s,
			 uint64_t addr, void *buf, size_t len);

/*
 * The same for a read of code (stack/unwind/unwind-insn.h): one that fails
 * says nothing of the stack's end, and leaves the cut mark alone.
 */
int unwind_memcache_read_code(struct unwind_memcache *c, const struct stack_snapshot *s,
			      uint64_t addr, void *buf, size_t len);

#endif /* MEMTAP_UNWIND_H */

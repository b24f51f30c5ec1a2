/*
 * detour.h - in-target probes: function entries become `jmp rel32` to
 * stubs that memtap writes into the target, which record each call into
 * a ring in the target's memory (detour.c; the layout and the stubs:
 * arch/stub-abi.h, arch/$(arch)/detour-stubs.S).  No ptrace
 * stop per call: memtap drains the ring (trace/ring.c).
 *
 * One struct detour_set per address space.  Its stub mapping (code,
 * data and counter pages) goes within rel32 reach of the probed code,
 * its ring anywhere; code out of its reach (another object, terabytes
 * away: a PIE executable's own allocator functions and libc's) gets a
 * far code page within reach of it (detour_far()), whose slots record
 * into the same ring and count in the same counters.  A probe is
 * refused (-ENOTSUP, *why said) where the function has a relative
 * branch into the displaced bytes (the function is decoded over its
 * st_size), where a stopped thread's pc is inside them, where an entry
 * instruction cannot be relocated, or where the function is out of
 * reach of the mapping and of every far page: the caller then puts an
 * int3 breakpoint there instead.
 *
 * What stays in the target: the entries hold their original bytes again
 * after detour_remove_all() (a detach), but the stub mapping, its far
 * pages and the ring stay mapped for good, since a thread may still be
 * inside a stub or return into one; they are unused from then on.  The
 * next memtap that attaches finds them (the template's bytes, the
 * layout; a far page's header) and uses them again: a slot is written
 * again only when it is unused or gets the same bytes (the same
 * function, the same probe), so that a thread still returning into an
 * old stub finds the code it left.  If memtap dies, the detours stay and
 * keep recording until the ring is full, then only count: nothing in the
 * stubs traps.
 *
 * Life cycle:
 *   detour_set_new()        per address space (after each exec: a new one)
 *   detour_install()        the mappings, through a thread in a ptrace-stop
 *                           that allows injected syscalls (remote.h)
 *   detour_insert()         with every thread of the process stopped
 *   detour_remove_all()     detach, every thread stopped
 *   detour_clean_fork_child() at a fork child's first stop (it is
 *                           stopped): its copy of the entries gets the
 *                           original bytes
 *   detour_set_free()       frees memtap's memory, never touches the target
 * Nothing here exits or prints, except debug_msg().
 */
#ifndef MEMTAP_DETOUR_H
#define MEMTAP_DETOUR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct detour_set;
struct elfsym_proc;

struct detour_config {
	uint64_t copy_len;	/* bytes of stack copied per record (multiple of 8) */
	uint64_t nrec;		/* records in the ring, a power of 2 */
	uint64_t min_size;	/* sized calls outside [min, max] are only counted */
	uint64_t max_size;	/* 0 = no limit */
	uint64_t wait_spins;	/* sleeps on a full ring, memtap not draining, before a drop */
	uint64_t sample_mean;	/* byte sampling at this mean interval; 0: every call */
	uint64_t sample_seed;	/* of the intervals' generator */
	uint64_t leak_set;	/* sampled: entries of the set of sampled blocks, followed
				   to their free (a power of 2, 2 .. DT_SET_N); 0: none */
	uint64_t test_slots;	/* for tests only: slots given at most (0: all) */
	int compact;		/* compact records (stub-abi.h, D_COMPACT) with a
				   shared ring, while the nest table holds every range */
};

/* How a probe's calls are recorded. */
struct detour_probe {
	int result;		/* record after the function returned, with the return value */
	int sync;		/* entry probe that then waits until memtap read the
				   ring (execve: the ring goes with the address space) */
	unsigned size_kind;	/* SK_* of stub-abi.h */
	unsigned flags;		/* DF_* of stub-abi.h */
	void *cookie;		/* the caller's, handed back with each record */
	int outer;		/* an allocator: the calls made inside it (realloc's
				   malloc) are its own, not events (detour_nested()) */
};

/* Where the ring is, for its reader. */
struct detour_ring {
	pid_t pid;
	uint64_t data;		/* the data page: HEAD, DROPPED */
	uint64_t commit, ring;	/* commit words (no longer written) and records */
	uint64_t tail;		/* TAIL, after the records */
	uint64_t nrec, rec_size;
	uint64_t head;		/* HEAD at install: the first record to read */
	uint64_t dropped;	/* DROPPED at install (a reused mapping's) */
	void *local;		/* commit words, records and TAIL mapped in memtap too, or NULL */
	int clock;		/* the records carry the time of the call (stub-abi.h R_TIME) */
};

/*
 * The records' times (stub-abi.h R_TIME).  detour_clock_sync(), once
 * for each batch of records, before their times are asked: 1 if they
 * carry the time of their call (the stubs stamp them, and the CPU's
 * counter is still in step with CLOCK_MONOTONIC: once it is not, -v
 * says so, once), else 0.  detour_record_time(): the time of the call
 * of a record of the batch, in ns since the start (util/clock.h),
 * given the time memtap read it (read_ns, since the start too) and what
 * detour_clock_sync() said: never later than read_ns, nor before the
 * start (the record is the target's); read_ns itself when the record
 * carries no time.
 */
int detour_clock_sync(const struct detour_ring *r);
uint64_t detour_record_time(const struct detour_ring *r, int synced, const uint8_t *rec,
			    uint64_t read_ns);

/* Per probe totals from the counter page. */
struct detour_counts {
	uint64_t calls, bytes, kept, filtered, unsampled;
	uint64_t fast;		/* of the calls, those the prefilter sent on */
};

struct detour_set *detour_set_new(pid_t pid, const struct detour_config *cfg);
void detour_set_free(struct detour_set *ds);

/*
 * The stub walk (stub-abi.h, R_WALK; detour-cfi.c): after
 * detour_install() with a shared ring, a mapping of CFI tables shared
 * with the process, the tables of the modules it maps now, then the
 * data page's words that turn the walk on, max_pcs return addresses a
 * record at most (max_pcs * 8 <= copy_len).  Through the stopped thread
 * tid.  0, or -errno: no walk, the stubs copy the stack (-ENOTSUP: the
 * CPU's stubs have none, arch_stub_walks()).
 * detour_walk_update(): the modules mapped since (a dlopen) get their
 * tables and a new directory; nothing without a walk.
 * detour_walk_free(): memtap's side goes (detour_set_free() calls it);
 * the process's mapping stays.
 */
int detour_walk_start(struct detour_set *ds, pid_t tid, unsigned max_pcs);
void detour_walk_update(struct detour_set *ds);
void detour_walk_free(struct detour_set *ds);
/*
 * The chain table (stub-abi.h, CH_*), with the walk:
 * detour_chain_learn() puts the n return addresses of a full record's
 * walk that ended without a tail into it (a compact record then stands
 * for the next calls with them); detour_chain() gives those of a
 * compact record's chain id back, *n of them, or NULL for an id it
 * never gave.
 */
void detour_chain_learn(struct detour_set *ds, const uint64_t *pcs, uint64_t n);
const uint64_t *detour_chain(const struct detour_set *ds, uint64_t id, unsigned *n);
/* Are the stubs told to make compact records (detour_config.compact)? */
int detour_compact(const struct detour_set *ds);

/*
 * Map the stub mapping within reach of [lo, hi) and the ring, through
 * tid (in a ptrace-stop that allows injected syscalls); ep: the
 * process's objects (libc's cached tid).  Every syscall injected, and
 * those the stubs will make, are checked against the thread's seccomp
 * filters first.  Returns 0, -EPERM (the filters forbid one;
 * remote_refusal() or *why says which), -ENOMEM (no hole within reach),
 * -ENOTSUP (the system's pages are not the DT_PAGE bytes the layout
 * assumes: *why says so), or another -errno.  Nothing is left mapped on failure.
 */
int detour_install(struct detour_set *ds, pid_t tid, struct elfsym_proc *ep, uint64_t lo,
		   uint64_t hi, const char **why);
int detour_installed(const struct detour_set *ds);

/*
 * A far code page within reach of [lo, hi) (code out of the stub
 * mapping's reach), through tid as detour_install(), after it: one an
 * earlier memtap left for the same mapping, else a new one.  0,
 * -ENOSPC (DT_FAR_MAX pages already), -ENOMEM (no hole within reach),
 * or another -errno.  Nothing is left mapped on failure.
 */
int detour_far(struct detour_set *ds, pid_t tid, uint64_t lo, uint64_t hi);

/* A stopped thread and its program counter, for detour_insert(). */
struct detour_thread {
	pid_t tid;
	uint64_t pc;
};

/*
 * Detour the function at addr (st_size size; 0 = unknown) through tid,
 * every thread stopped: threads[0..n) are they.  A thread stopped
 * inside the instructions that the jmp displaces goes on from their
 * copy in the slot (its pc is moved there, for good: the copy jumps
 * back and stays mapped).  Returns 0, -EEXIST (detoured already),
 * -ENOTSUP with *why (refused: use int3), -ENOSPC (no slot left), or
 * -errno of a memory or register access.
 */
int detour_insert(struct detour_set *ds, pid_t tid, uint64_t addr, uint64_t size,
		  const struct detour_probe *dp, const struct detour_thread *threads, size_t n,
		  const char **why);

/*
 * Where the instruction at insn (a detoured wrapper's syscall
 * instruction, arch_syscall_sites()) runs: *at, its copy in the slot
 * when the patch displaced it (1), else insn itself (0; insn in no
 * detoured function's displaced bytes); -ENOTSUP when the plan made
 * again does not give it (insn inside an instruction), or -errno of a
 * read of the target, through tid (detour-sites.c).  The target is
 * only read.  detour_moved_insn(): the same from the function's bytes
 * buf[0..got) at func as they were before the patch (size its
 * st_size, 0 = unknown), its slot at slot.
 */
int detour_runs_at(const struct detour_set *ds, pid_t tid, uint64_t insn, uint64_t *at);
int detour_moved_insn(uint64_t func, const uint8_t *buf, size_t got, uint64_t size,
		      uint64_t slot, uint64_t insn, uint64_t *at);

/* Is addr detoured?  The slot's cookie, or NULL. */
void *detour_at(const struct detour_set *ds, uint64_t addr);
/* The cookie of the slot in a record's DESC, or NULL. */
void *detour_slot_cookie(const struct detour_set *ds, uint64_t desc);
/* The function of the slot in a record's DESC, or 0. */
uint64_t detour_slot_func(const struct detour_set *ds, uint64_t desc);
/*
 * Is a call whose return address is addr made by a detoured function
 * whose probe is outer (inside its st_size) or by a stub (a tail call of
 * one)?  Then it is nested in another probed call (realloc(NULL, n)
 * calling malloc).  A --probe function's calls are events of their own.
 * It answers from a table that detour_nested_refresh() makes: call that
 * after the set changed (before each batch of records).
 */
int detour_nested(const struct detour_set *ds, uint64_t addr);
/*
 * Do the stubs leave nested calls out of their counters too (the table
 * is in the target: stub-abi.h)?  Then those count the program's calls.
 */
int detour_nested_counted(const struct detour_set *ds);
void detour_nested_refresh(struct detour_set *ds);
/*
 * The stubs' code, for the unwinders: the stub mapping's (i = 0), then
 * far page i's: its start (0 if none) and *len; detour_stub_frame() is
 * the stub_frame_fn of stack/modules.h (detour-frame.c): the frame at
 * pc in the code of the stub mapping or far page at start in process
 * pid, from the slot's code as detour_frame_note() kept it when memtap
 * wrote it, else read from the process's memory.
 */
uint64_t detour_stubs(const struct detour_set *ds, unsigned i, uint64_t *len);
struct stub_frame;
int detour_stub_frame(pid_t pid, uint64_t start, uint64_t pc, struct stub_frame *f);
void detour_frame_note(pid_t pid, uint64_t slot, const uint8_t *code);

/*
 * Bytes of the mappings (stubs, ring) this memtap made in the process,
 * which stay there after it detached; *data: the private writable ones.
 */
uint64_t detour_made(const struct detour_set *ds, uint64_t *data);

/* How many functions are detoured. */
size_t detour_count(const struct detour_set *ds);

/*
 * Forget the detour at addr without touching the target: its code is
 * unmapped (dlclose).  Its slot is gone: detour_insert() gives it again
 * to a probe of the same cookie once no thread can be inside it (every
 * thread's pc, registers and stack looked at: detour-reuse.c), when no
 * unused slot is within reach.  detour_slot_stats(): how many gone
 * slots were given again, how many are gone now.
 */
void detour_forget(struct detour_set *ds, uint64_t addr);
void detour_slot_stats(const struct detour_set *ds, uint64_t *again, uint64_t *gone);

/*
 * Every thread stopped: write the original bytes back at every entry
 * (through tid).  The mappings stay.  0 or the first -errno.
 */
int detour_remove_all(struct detour_set *ds, pid_t tid);

/*
 * child, a fork of the process in a ptrace-stop: its copy of the entries
 * gets the original bytes.
 */
int detour_clean_fork_child(const struct detour_set *ds, pid_t child);

/*
 * The thread table: thread tid (stopped, %fs base key) runs on the stack
 * [lo, hi); its stubs copy from it with rep movsb, and count down its
 * own sampling interval (a fresh one from here).  At its first stop;
 * detour_thread_remove() when it exits.  0 or -errno (-ENOSPC: the table
 * is full, its copies take process_vm_readv).
 */
int detour_thread_add(struct detour_set *ds, pid_t tid, uint64_t key, uint64_t lo, uint64_t hi);
void detour_thread_remove(struct detour_set *ds, pid_t tid);

void detour_get_ring(const struct detour_set *ds, struct detour_ring *r);

/*
 * Sum of the counter page over the slots whose cookie is cookie (NULL:
 * every slot): 0 or -errno (the process is gone).
 */
int detour_read_counts(const struct detour_set *ds, const void *cookie,
		       struct detour_counts *c);
/* The same for n cookies at once, into out[0 .. n) (n 0: all into out[0]). */
int detour_read_counts_of(const struct detour_set *ds, const void *const *cookies, size_t n,
			  struct detour_counts *out);
/*
 * The calls and bytes thread tid counted in its own block of the
 * per-thread pages (stub-abi.h), per cookie into out[0 .. n) (the
 * other fields 0): 0, -ENOENT when tid has no entry in the thread table
 * (its calls count in the counter page, with those of every other
 * thread without one), or -errno.  A vfork child counts in the block of
 * the thread that vforked: it runs on that thread's TCB.
 */
int detour_read_thread_counts(const struct detour_set *ds, pid_t tid,
			      const void *const *cookies, size_t n, struct detour_counts *out);
/*
 * Sampling (cfg.sample_mean not 0): fresh intervals into the pool
 * entries the stubs took since the last call, drawn at mean (0: the
 * mean in force; another mean becomes the one in force).  At each
 * drain.  0 or -errno.
 */
int detour_sample_refill(struct detour_set *ds, uint64_t mean);
/* The mean of new intervals; 0: no sampling. */
uint64_t detour_sample_mean(const struct detour_set *ds);

/*
 * A set of sampled blocks (cfg.leak_set) filled with ptrs, as the stubs
 * would have: a fork child's blocks inherited from its parent, whose
 * copy of the set was wiped.  Through tid, stopped; 0 or -errno.
 */
int detour_leak_seed(struct detour_set *ds, pid_t tid, const uint64_t *ptrs, size_t n);

/* A word of the data page (D_DROPPED, D_COPY_SLOW...): 0 or -errno. */
int detour_read_data(const struct detour_set *ds, unsigned off, uint64_t *v);

#endif /* MEMTAP_DETOUR_H */

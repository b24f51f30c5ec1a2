/*
 * detour-int.h - the detour set's own state, shared by detour.c (the
 * mappings, the detours) and detour-data.c (the data pages: thread
 * table, counters, sampling pool, ring).  Private to the two.
 */
#ifndef MEMTAP_DETOUR_INT_H
#define MEMTAP_DETOUR_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/stub-abi.h"
#include "probe/detour.h"
#include "probe/remote.h"
#include "record/sample.h"

/* The last slots hold the trampoline of injected syscalls (remote.h). */
#define TRAMP_SLOTS ((REMOTE_TRAMP_SIZE + DT_SLOT_SIZE - 1) / DT_SLOT_SIZE)
#define PROBE_SLOTS (DT_NSLOTS - TRAMP_SLOTS)
#define TRAMP_OFF (DT_CODE_SIZE - TRAMP_SLOTS * DT_SLOT_SIZE)

struct dt_site {
	uint64_t func;		/* the function */
	uint64_t size;		/* its st_size, 0 = unknown */
	uint64_t site;		/* where the patch is: func, or after its landing pad */
	unsigned len;		/* bytes displaced */
	uint8_t orig[32];	/* the bytes at site before the patch */
	void *cookie;
	int live;		/* 0: forgotten (dlclose), or removed (detach) */
	int gone;		/* forgotten: its code unmapped (detour-reuse.c) */
	int outer;		/* calls made inside it are part of its own (detour_nested()) */
};


/* A far code page (stub-abi.h). */
struct dt_far {
	uint64_t base;		/* 0: none */
	size_t used;		/* its slots used (forgotten ones included) */
	int reused;		/* left by an earlier memtap */
};

struct detour_set {
	pid_t pid;
	struct detour_config cfg;
	uint64_t base;		/* the stub mapping, 0 until installed */
	size_t used;		/* its slots used (forgotten ones included) */
	struct dt_far far[DT_FAR_MAX];	/* far page k is far[k - 1] */
	uint64_t old_far[DT_FAR_MAX];	/* far pages an earlier memtap left, by index */
	uint64_t commit, ring, rec_size, ring_len;
	uint64_t tail;		/* TAIL's address, after the records */
	void *local;		/* memtap's mapping of a shared ring (detour-ring.h) */
	int clock;		/* D_CLOCK: the stubs stamp calls (stub-abi.h R_TIME) */
	uint64_t head0, dropped0;	/* a reused mapping's HEAD and DROPPED */
	int reused;
	int tramp;		/* the trampoline of injected syscalls is set */
	uint64_t made, made_data;	/* bytes of the mappings this memtap made */
	uint64_t syscall_insn;
	struct dt_site sites[DT_ALL_SLOTS];	/* by DESC number */
	/* detour_nested_refresh(): the code a nested call returns into */
	struct {
		uint64_t lo, hi;
	} nest[DT_FAR_MAX + 1 + DT_ALL_SLOTS];
	size_t nnest;
	int nest_counted;	/* the stubs have the table: their counters leave
				   nested calls out */
	int compact;		/* D_COMPACT as last written */
	size_t nslots;		/* 1 + the highest DESC number used */
	uint64_t keys[K_NENT];	/* the thread table's keys, as written */
	pid_t key_tids[K_NENT];
	uint64_t key_lo[K_NENT], key_hi[K_NENT];	/* their stacks, as written */
	uint64_t again;		/* gone slots given again (dt_slot_again()) */
	uint64_t blocks_used;	/* bit i: entry i was given, its counter block holds counts */
	struct sample_rng rng;	/* the sampling intervals */
	uint64_t mean;		/* the mean of new intervals, 0: no sampling */
	uint64_t pool_idx;	/* D_POOL_IDX when the pool was last filled */
	uint64_t pool[DT_POOL_N * 2];	/* the pool as written */
	/* the stub walk's tables (detour-cfi.c) */
	void *wtab;		/* memtap's mapping of them; NULL: no walk */
	uint64_t wtab_addr;	/* the process's */
	uint64_t wtab_used;	/* bytes appended */
	struct proc_modules *wpm;	/* the process's modules, for them */
	struct dt_wmod {
		uint32_t module;
		uint64_t bias, off;	/* the table of module at bias: at off */
	} *wmods;
	size_t nwmods, wmods_cap;
	/* the chain table (CH_*, at the end of that mapping): by id - 1 */
	struct dt_chain {
		size_t off;	/* its return addresses in chain_pcs */
		unsigned n;
	} *chains;
	size_t nchains, chains_cap;
	uint64_t *chain_pcs;
	size_t chain_pcs_n, chain_pcs_cap;
};

/*
 * The walk memos of thread table entry `entry` (stub-abi.h, MB_BUSY):
 * usable again by the thread it is given to (detour-cfi.c).
 */
void detour_memo_reset(struct detour_set *ds, unsigned entry);
/*
 * The nest table into the data page, and D_COMPACT with it (detour-data.c):
 * after the set's outer detours changed, through tid (0: any).
 */
int dt_nest_publish(struct detour_set *ds, pid_t tid);
/* Does every call make a record (stub-abi.h, D_KEEP_ALL)?  (detour-data.c) */
int detour_keeps_all(const struct detour_set *ds);
/* A free range of len bytes within reach of [lo, hi) (hole.h), -ENOMEM or -errno (detour.c). */
int64_t dt_hole(const struct detour_set *ds, uint64_t lo, uint64_t hi, uint64_t len);
/* mmap at a (fixed, or refused), else -errno (detour.c). */
int64_t dt_map_at(struct detour_set *ds, pid_t tid, uint64_t a, uint64_t len, int prot);

/*
 * The code pages of slots (detour-far.c): pg 0 the stub mapping's, k
 * far page k.  Their base (0: none), the DESC number of their first
 * slot, how many slots, used again, how many used.
 */
uint64_t dt_page_base(const struct detour_set *ds, unsigned pg);
size_t dt_page_first(unsigned pg);
size_t dt_page_slots(unsigned pg);
int dt_page_reused(const struct detour_set *ds, unsigned pg);
size_t *dt_page_used(struct detour_set *ds, unsigned pg);
/* Is slot the start of a slot of a page?  1 with *pg, else 0. */
int dt_page_of(const struct detour_set *ds, uint64_t slot, unsigned *pg);
/*
 * A gone slot (detour_forget()) of cookie within reach of p that no
 * thread of th[0 .. n) (every thread of the process, stopped) can be
 * inside: 1 with its page *pg and index *j there, else 0 (detour-reuse.c).
 */
struct plan;
int dt_slot_again(struct detour_set *ds, const struct plan *p, const void *cookie,
		  const struct detour_thread *th, size_t n, unsigned *pg, size_t *j);
/* Are the slots given as many as cfg.test_slots allows (0: no limit)? */
int dt_slots_capped(const struct detour_set *ds);
/* The stub mapping used again: the far pages an earlier memtap left for it, into old_far. */
void dt_far_scan(struct detour_set *ds, pid_t tid);

_Static_assert((DT_ALL_SLOTS << C_SHIFT) <= DT_PAGE, "the counters fit their page");
_Static_assert(DT_TEMPLATE_MAX + DT_FAR_SLOTS * DT_SLOT_SIZE <= DT_CODE_SIZE,
	       "a far page holds its slots");
_Static_assert(DT_ALL_SLOTS <= 0x10000, "DESC numbers its slots");
_Static_assert(DT_POOL + (DT_POOL_N << P_SHIFT) <= DT_MAP_SIZE, "the pool fits the mapping");
_Static_assert((K_NENT << K_SHIFT) <= DT_PAGE, "the thread table fits its page");
_Static_assert((DT_ALL_SLOTS << PT_SLOT_SHIFT) <= (1 << PT_SHIFT), "a thread's counters fit its block");
_Static_assert(K_NENT <= 64, "blocks_used has a bit for each entry");
_Static_assert(DT_SET + DT_SET_N * 8 <= DT_PERTHREAD &&
	       DT_PERTHREAD + (K_NENT << PT_SHIFT) <= DT_MAP_SIZE, "the per-thread counters fit");

#endif /* MEMTAP_DETOUR_INT_H */

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

#include "detour-abi.h"
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
	uint64_t site;		/* where the jmp is: func, or func + 4 after endbr64 */
	unsigned len;		/* bytes displaced */
	uint8_t orig[32];	/* the bytes at site before the patch */
	void *cookie;
	int live;		/* 0: forgotten (dlclose) */
};


struct detour_set {
	pid_t pid;
	struct detour_set *sib;	/* the next set of the address space (a circle; itself when alone) */
	struct detour_config cfg;
	uint64_t base;		/* the stub mapping, 0 until installed */
	uint64_t commit, ring, rec_size, ring_len;
	uint64_t head0, dropped0;	/* a reused mapping's HEAD and DROPPED */
	int reused;
	int tramp;		/* the trampoline of injected syscalls is set */
	uint64_t made, made_data;	/* bytes of the mappings this memtap made */
	uint64_t syscall_insn;
	struct dt_site sites[DT_NSLOTS];
	size_t nslots;		/* slots used (forgotten ones included) */
	uint64_t keys[K_NENT];	/* the thread table's keys, as written */
	pid_t key_tids[K_NENT];
	struct sample_rng rng;	/* the sampling intervals */
	uint64_t mean;		/* the mean of new intervals, 0: no sampling */
	uint64_t pool_idx;	/* D_POOL_IDX when the pool was last filled */
	uint64_t pool[DT_POOL_N * 2];	/* the pool as written */
};

_Static_assert((DT_NSLOTS << C_SHIFT) <= DT_PAGE, "the counters fit their page");
_Static_assert(DT_POOL + (DT_POOL_N << P_SHIFT) <= DT_MAP_SIZE, "the pool fits the mapping");
_Static_assert((K_NENT << K_SHIFT) <= DT_PAGE, "the thread table fits its page");

#endif /* MEMTAP_DETOUR_INT_H */

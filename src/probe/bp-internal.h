/*
 * bp-internal.h - what breakpoint.c, bp-scratch.c and bp-undo.c share:
 * the set's structures and their helpers.  Private to the three files.
 */
#ifndef MEMTAP_BP_INTERNAL_H
#define MEMTAP_BP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "probe/breakpoint.h"

#define PAGE arch_page_size()
#define SLOT0 32u		/* first slot offset; below: trampoline */
#define NBUCKETS 256		/* breakpoint hash; a few dozen probes */
#define NTBUCKETS 64		/* thread hash */
#define MAX_RETS 4096		/* return entries per thread */

struct bp {
	uint64_t addr;
	struct bp_insn insn;
	uint8_t orig[ARCH_BP_LEN];	/* the bytes under the breakpoint */
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
	int suppress;		/* swallow the SIGTRAP reported at suppress_pc */
	uint64_t suppress_pc;	/* a pc */
	struct bp_thread *next;
};

struct bp_set {
	pid_t pid;
	struct bp *buckets[NBUCKETS];
	struct bp *all, **all_tail;
	struct scratch *pages;
	size_t npages, pages_cap;
	uint64_t tramp;		/* 0 until the first page is mapped */
	uint64_t syscall_insn;
	int cet;		/* -1 unknown, 0 no shadow stack, 1 shadow stack */
	int tramp_kept;		/* the trampoline's page stays: bp-undo.c, keep_tramp() */
	struct bp_thread *threads[NTBUCKETS];
	struct bp_stats stats;
};

/* breakpoint.c */
void bp_free_bps(struct bp_set *set);
void bp_free_threads(struct bp_set *set);
struct bp_thread *bp_thread_find(struct bp_set *set, pid_t tid, int create);
/* The entry of tid (or, failing that, of any thread) whose slot is slot. */
struct bp_thread *bp_ret_lookup(struct bp_set *set, pid_t tid, uint64_t slot,
				size_t *idx);
/*
 * Target memory through linux/memio.h; tid: a stopped thread or 0.
 * Code (a trap, a displaced instruction, the bytes an undo puts back)
 * goes through bp_mem_write_code(), memio_write_code().
 */
int bp_mem_read(struct bp_set *set, pid_t tid, uint64_t addr, void *buf, size_t len);
int bp_mem_write(struct bp_set *set, pid_t tid, uint64_t addr,
		 const void *buf, size_t len);
int bp_mem_write_code(struct bp_set *set, pid_t tid, uint64_t addr,
		      const void *buf, size_t len);

/* bp-scratch.c */
int bp_ensure_syscall_insn(struct bp_set *set, pid_t tid);
/* Map a scratch page near addr; its index in set->pages or -errno. */
int bp_scratch_map(struct bp_set *set, pid_t tid, uint64_t addr);
/* A free slot within reach of addr (and of the insn's target): address or 0. */
uint64_t bp_slot_find(struct bp_set *set, uint64_t addr, const struct bp_insn *insn);
void bp_slot_take(struct bp_set *set, uint64_t slot);

/*
 * bp-undo.c.  Does the trampoline's page in pid (a fork child) hold the
 * routine of hooked returns that bp_clean_fork_child() wrote there
 * rather than breakpoints?  Then it stays mapped.  1 or 0.
 */
int bp_tramp_kept_in(struct bp_set *set, pid_t pid);

#endif /* MEMTAP_BP_INTERNAL_H */

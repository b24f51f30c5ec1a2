/*
 * insn-walk.h - how every CPU's instruction analysis (insn-unwind.h,
 * src/arch/$(arch)/insn-unwind.c) follows the paths of the code, the
 * same for every CPU (insn-walk.c): the jump targets visited, so that a
 * loop ends its path; the code of memtap's probes, never followed; the
 * budget of instructions over every path; and the other arms of
 * conditional branches, kept with their paths' state and tried in turn
 * when a path ends without a rule.
 *
 * A path is the CPU's own struct, copied whole: the walk only keeps
 * path_size bytes of it in the array the CPU gives (INSN_WALK_MAX_ALTS
 * of them).  The CPU decodes, steps and decides where a path goes;
 * insn_walk_run() drives its step() over the first path and the
 * arms, one instruction at a time by the CPU's step().  The values a
 * path holds are relative to the sp or the fp of the pc (struct
 * insn_val).
 */
#ifndef MEMTAP_ARCH_INSN_WALK_H
#define MEMTAP_ARCH_INSN_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "arch/insn-unwind.h"

#define INSN_WALK_MAX_INSNS 4096	/* decoded, over every path */
#define INSN_WALK_MAX_ALTS 32		/* other arms waiting */
#define INSN_WALK_MAX_VISITED 256	/* jump targets seen */

/*
 * A value on a path: off from base, the sp (INSN_B_SP) or the fp
 * (INSN_B_FP) the thread had at the pc, or unknown (INSN_B_NONE).
 */
enum { INSN_B_SP, INSN_B_FP, INSN_B_NONE };

struct insn_val {
	int8_t base;
	int32_t off;
};

#define INSN_MAX_OFF (1 << 24)	/* larger frames: not believed */

/* v + d, or unknown when v is or when the offset grows past INSN_MAX_OFF. */
static inline struct insn_val insn_val_add(struct insn_val v, int64_t d)
{
	int64_t o = (int64_t)v.off + d;

	if (v.base == INSN_B_NONE || o < -INSN_MAX_OFF || o > INSN_MAX_OFF)
		return (struct insn_val){ INSN_B_NONE, 0 };
	v.off = (int32_t)o;
	return v;
}

/* Are a and b the same known value? */
static inline int insn_val_same(struct insn_val a, struct insn_val b)
{
	return a.base != INSN_B_NONE && a.base == b.base && a.off == b.off;
}

/* What a step of a path says: go on, a dead end, or the frame's rule found. */
enum { INSN_GO_ON, INSN_DEAD, INSN_FOUND };

struct insn_walk {
	const struct insn_code *code;
	uint64_t align;		/* a power of two: a target not a multiple is never entered */
	int budget;		/* instructions the CPU may still decode */
	void *alts;		/* INSN_WALK_MAX_ALTS paths of path_size bytes, the CPU's */
	size_t path_size;
	int nalts;
	uint64_t visited[INSN_WALK_MAX_VISITED];
	int nvisited;
};

/*
 * A walk of code with nothing visited yet, the budget whole, for paths
 * of path_size bytes kept in alts (INSN_WALK_MAX_ALTS of them, owned by
 * the caller); align is the code's, a power of two (1: any).  Allocates
 * nothing.
 */
void insn_walk_init(struct insn_walk *w, const struct insn_code *code, uint64_t align,
		    void *alts, size_t path_size);

/* Is addr in the code of memtap's in-target probes (code->is_probe_entry)? */
int insn_walk_probe_code(const struct insn_walk *w, uint64_t addr);

/*
 * May a path go on at target: above the first page, aligned, not the
 * probes' code, and not visited yet?  1, and target is visited now; or 0
 * (also when the visited list is full).
 */
int insn_walk_enterable(struct insn_walk *w, uint64_t target);

/*
 * The other arm of a conditional branch: when there is room for one
 * more and target is enterable (visited then), a copy of path is kept
 * and returned, for the caller to set its place to target; else NULL,
 * nothing kept.
 */
void *insn_walk_fork(struct insn_walk *w, const void *path, uint64_t target);

/*
 * Follow path (path_size bytes, overwritten) with step(), one
 * instruction at its place at a time, each taken from the budget: step()
 * moves the path on and returns INSN_GO_ON, or returns INSN_DEAD, or
 * INSN_FOUND with the frame's rule in *rule.  A dead end (or the budget
 * spent) goes on with the arms kept, the last first, until one finds
 * the rule, none is left or the budget is spent.  Returns 0 (found) or
 * -1.
 */
int insn_walk_run(struct insn_walk *w, void *path,
		  int (*step)(struct insn_walk *w, void *path, struct insn_rule *rule),
		  struct insn_rule *rule);

#endif /* MEMTAP_ARCH_INSN_WALK_H */

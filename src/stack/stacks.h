/*
 * stacks.h - the stack table: every distinct stack once, named by a
 * 32-bit id that aggregates index.
 *
 * A stack is an array of frames, leaf first.  A frame is a module id
 * and an address relative to that module's ELF (modules.h), or, when
 * the pc is in no file mapping, the process's run-time code id
 * (jit_names_module(), jitnames.h; MODULE_NONE without a process) and
 * the raw pc.  Stored
 * addresses are the ones to symbolize: the stop's pc for frame 0, the
 * return address minus one (the call instruction) for the others;
 * stack_table_intern_pcs() makes that adjustment.
 *
 * Memory is bounded: once the table would grow beyond the limit given
 * to stack_table_new(), new stacks are not stored and intern returns
 * STACK_ID_LOST (counted by stack_table_lost()); known stacks still
 * intern to their id.  A cap on the number of stacks
 * (stack_table_set_max_stacks()) folds the new stacks met once the
 * table is full into one stack, [other] (a single frame
 * STACK_FRAME_OTHER_ADDR), whose id intern returns for each of them
 * (counted by stack_table_folded()): what they weigh is still counted,
 * on [other].  Nothing is ever evicted: every id handed out stays valid
 * (aggregates, live blocks, held ranges, the timeline and the sources'
 * chain caches keep ids), so the table's size is the cap.  Frame arrays never move: pointers from
 * stack_table_get() stay valid until stack_table_free().
 *
 * Lifecycle: stack_table_new(), any number of interns and gets,
 * stack_table_free().  The table owns all its memory.  Not thread-safe.
 */
#ifndef MEMTAP_STACKS_H
#define MEMTAP_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct proc_modules;

struct stack_frame {
	uint64_t addr;		/* relative to the module, or the raw pc */
	uint32_t module;	/* module id; a raw pc: MODULE_NONE or a JIT id */
	uint32_t reserved;	/* 0 */
};

/*
 * The root frame that marks a stack the unwinder could not finish: it
 * needed stack memory beyond the copy that the process no longer gave
 * (stack_snapshot's cut).  Unwinders put STACK_PC_CUT after the last
 * frame they found; stack_table_intern_pcs() turns it into this frame
 * (no return address is 0), which the reports name "[stack cut]".
 */
#define STACK_PC_CUT 0
#define STACK_FRAME_CUT_ADDR UINT64_MAX	/* with module MODULE_NONE */
#define STACK_CUT_NAME "[stack cut]"

/*
 * The one frame of the stack that new stacks are folded into when the
 * table holds its cap (stack_table_set_max_stacks()), named "[other]".
 */
#define STACK_FRAME_OTHER_ADDR (UINT64_MAX - 1)	/* with module MODULE_NONE */
#define STACK_OTHER_NAME "[other]"

/* Id 0: the empty stack, and where stacks go when the table is full. */
#define STACK_ID_LOST 0

/* Deepest stack kept; deeper ones are cut (leaf side kept). */
#define STACK_MAX_DEPTH 1024

/* Default memory limit. */
#define STACK_TABLE_DEFAULT_MAX (256u << 20)

/* Default cap on the number of stacks (--max-stacks). */
#define STACK_TABLE_DEFAULT_STACKS 1000000u

struct stack_table;

/* max_bytes: bound on the table's memory (0 = no bound).  Never NULL. */
struct stack_table *stack_table_new(size_t max_bytes);
void stack_table_free(struct stack_table *t);
/*
 * At most max distinct stacks (STACK_ID_LOST and [other] not counted;
 * 0: no cap, the default): a new stack met beyond interns as [other].
 * Stacks already stored stay.
 */
void stack_table_set_max_stacks(struct stack_table *t, uint32_t max);

/*
 * The id of frames[0..depth), adding the stack if new.  depth 0 gives
 * STACK_ID_LOST; depth > STACK_MAX_DEPTH is cut.  frames is copied.
 */
uint32_t stack_table_intern(struct stack_table *t, const struct stack_frame *frames,
			    int depth);

/*
 * Resolve pcs[0..depth) as unwinder_walk() returns them (unwind.h) to
 * frames with modules_resolve(), adjust return addresses, and intern.
 * pm may be NULL: every frame is then a raw pc.
 */
uint32_t stack_table_intern_pcs(struct stack_table *t, struct proc_modules *pm,
				const uint64_t *pcs, int depth);
/*
 * The same, and *stable = 1 when pcs give this id again for as long as
 * pm's ranges stay as they are (its serial and version, no re-read due):
 * every frame in a module; what the chain cache keeps.
 */
uint32_t stack_table_intern_pcs_stable(struct stack_table *t, struct proc_modules *pm,
				       const uint64_t *pcs, int depth, int *stable);

/*
 * The frames of id (borrowed, leaf first) and their number.  Returns 0,
 * or -1 for an id never returned by intern.
 */
int stack_table_get(const struct stack_table *t, uint32_t id,
		    const struct stack_frame **frames, int *depth);

/* Number of ids handed out, STACK_ID_LOST included: ids are < this. */
uint32_t stack_table_count(const struct stack_table *t);

/* Bytes allocated by the table. */
size_t stack_table_memory(const struct stack_table *t);

/* Interns refused because the table was full. */
uint64_t stack_table_lost(const struct stack_table *t);

/*
 * Interns of a stack not stored that gave [other] (the cap was
 * reached): a stack met again counts again, a chain the table's cache
 * of raw pcs holds does not.
 */
uint64_t stack_table_folded(const struct stack_table *t);

/* Does the table hold its cap of stacks (a new one would be [other])? */
int stack_table_full(const struct stack_table *t);

#endif /* MEMTAP_STACKS_H */

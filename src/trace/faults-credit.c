/*
 * faults-credit.c - the page-fault source's accounts: each thread's
 * counted faults credited to the stacks of its samples, so that every
 * thread's total is its exact count (faults.c says when; here how).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "linux/hugepages.h"
#include "stack/stacks.h"
#include "trace/faults-int.h"
#include "util/xmalloc.h"

struct fault_stack *fault_stack_slot(struct fault_kind *fk, uint32_t stack)
{
	size_t j;

	if ((fk->used + 1) * 2 > fk->size) {
		struct fault_stack *old = fk->stacks;
		size_t old_size = fk->size;

		fk->size = fk->size ? fk->size * 2 : 16;
		fk->stacks = xcalloc(fk->size, sizeof(*fk->stacks));
		for (size_t i = 0; i < old_size; i++) {
			if (!old[i].samples)
				continue;
			j = (old[i].stack * 2654435761u) & (fk->size - 1);
			while (fk->stacks[j].samples)
				j = (j + 1) & (fk->size - 1);
			fk->stacks[j] = old[i];
		}
		free(old);
	}
	j = (stack * 2654435761u) & (fk->size - 1);
	while (fk->stacks[j].samples && fk->stacks[j].stack != stack)
		j = (j + 1) & (fk->size - 1);
	if (!fk->stacks[j].samples) {
		fk->stacks[j].stack = stack;
		fk->used++;
	}
	return &fk->stacks[j];
}

/*
 * Faults without a sample of their own (lost) put on the stack sampled
 * next to them: weighed, and counted as such for the report.
 */
void fault_neighbour_weight(struct sink_proc *sp, const struct fault_kind *fk, uint64_t faults,
			    uint64_t bytes)
{
	sink_add_weight(sp, fk->kind, fk->last_stack, faults, bytes);
	if (fk->last_stack != STACK_ID_LOST)	/* no sample yet: on no stack */
		sink_add_neighbour(sp, fk->kind, faults, bytes);
}

/*
 * Credit the faults counted and not yet credited (count - credited).
 *   - samples lost after the last sample read (no sample after them
 *     brought their record to on_stacked()): to the last sample's stack;
 *   - with --fault-period N > 1, or once the kernel throttled: to the
 *     stacks of the samples, in proportion to their samples;
 *   - else (period 1, nothing throttled) what is left is faults the
 *     sampling event did not see (the two events are not one), or lost
 *     at the end with no record to say so: left for later while the
 *     thread lives; at its end (final) on the last sample's stack when
 *     its ring was ever found full, else on no stack.
 * lost: samples lost after the last sample read.  Each stack's faults
 * weigh its samples' mean page size.
 */
void fault_spread(struct fault_kind *fk, struct sink_proc *sp, uint64_t count, uint64_t lost,
		  int final, uint64_t period)
{
	uint64_t delta, cum = 0, given = 0, last_page = fk->last_page ? fk->last_page :
							 hugepages_base_size();

	if (count <= fk->credited)
		return;
	delta = count - fk->credited;
	if (lost > delta)
		lost = delta;
	if (lost) {
		fault_neighbour_weight(sp, fk, lost, lost * last_page);
		fk->credited += lost;
		delta -= lost;
	}
	if (!delta)
		return;
	if (period == 1 && !fk->pt.throttles) {
		if (!final)
			return;
		fk->credited += delta;
		if (fk->samples && fk->full_seen)
			fault_neighbour_weight(sp, fk, delta, delta * last_page);
		else
			sink_add_weight(sp, fk->kind, STACK_ID_LOST, delta,
					delta * hugepages_base_size());
		return;
	}
	fk->credited += delta;
	if (!fk->samples) {
		sink_add_weight(sp, fk->kind, STACK_ID_LOST, delta,
				delta * hugepages_base_size());
		return;
	}
	for (size_t i = 0; i < fk->size; i++) {
		const struct fault_stack *s = &fk->stacks[i];
		uint64_t upto, n;

		if (!s->samples)
			continue;
		cum += s->samples;
		upto = cum == fk->samples ? delta :
		       (uint64_t)((long double)delta * (long double)cum / (long double)fk->samples);
		n = upto - given;
		given = upto;
		if (n)
			sink_add_weight(sp, fk->kind, s->stack, n,
					(uint64_t)((long double)n * (long double)s->units /
						   (long double)s->samples) * UNIT);
	}
}

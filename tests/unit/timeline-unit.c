/*
 * timeline-unit - the -i timeline (timeline.c) kept to its last
 * intervals (timeline_set_max()) and a process forgotten
 * (timeline_forget(), aggregate_forget()): what each stack holds at the
 * end, from the intervals kept alone, is what its aggregate holds.
 * Prints "ok" or what differs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/aggregate.h"
#include "record/sink.h"
#include "record/timeline.h"
#include "report/profile.h"

/* two processes that exited: no /proc figures are read */
static struct sink_proc procs[2] = { { .pid = 1, .exited = 1, .next = &procs[1] },
				     { .pid = 2, .exited = 1 } };
static struct sink_proc *head = &procs[0];
static int failures;

struct sink_proc *sink_procs(void)
{
	return head;
}

static void check(int cond, const char *what, long i)
{
	if (!cond && failures++ < 10)
		printf("FAIL %s (%ld)\n", what, i);
}

/*
 * The intervals as a profile whose sample i is aggregate i: the count,
 * and what each aggregate holds at the end of the last, checked against
 * its figures.
 */
static void check_window(size_t want_intervals, const char *what)
{
	size_t nagg;
	const struct agg *a = aggregate_entries(&nagg);
	struct profile prof;
	size_t *agg_sample = calloc(nagg + 1, sizeof(*agg_sample));
	uint64_t *held = calloc(nagg + 1, sizeof(*held));

	memset(&prof, 0, sizeof(prof));
	prof.nsamples = nagg;
	for (size_t i = 0; i < nagg; i++)
		agg_sample[i] = i;
	timeline_to_profile(&prof, agg_sample, nagg);
	check(prof.nintervals == want_intervals, what, (long)prof.nintervals);
	for (size_t i = 0; i < prof.nintervals; i++)
		for (size_t j = 0; j < prof.intervals[i].nchanges; j++) {
			const struct prof_change *c = &prof.intervals[i].changes[j];

			check(c->sample < nagg, what, (long)c->sample);
			if (c->sample < nagg)
				held[c->sample] = c->held;
		}
	for (size_t i = 0; i < nagg; i++)
		check(held[i] == a[i].held, what, (long)i);
	for (size_t i = 0; i < prof.nintervals; i++) {
		free(prof.intervals[i].vm);
		free(prof.intervals[i].changes);
	}
	free(prof.intervals);
	free(agg_sample);
	free(held);
}

int main(void)
{
	timeline_set_max(3);
	/* 8 intervals: stacks that hold from the first, change later, or never again */
	for (unsigned t = 0; t < 8; t++) {
		for (uint32_t s = 1; s <= 6; s++) {
			struct sink_proc *p = &procs[s % 2];

			if (t == 0 || (s == 2 && t % 3 == 0) || (s == 5 && t == 6)) {
				aggregate_add(p, EV_MALLOC, s, 0, 100 * s, 0);
				aggregate_held(p, EV_MALLOC, s, 100 * s, 1);
			}
			if (s == 3 && t == 4)	/* given back in a kept interval */
				aggregate_held(p, EV_MALLOC, s, -300, -1);
		}
		timeline_interval_end((uint64_t)t * 1000000000u, 1);
		aggregate_mark();
	}
	check(timeline_count() == 3, "intervals kept", (long)timeline_count());
	check_window(3, "window");

	/* process 1 forgotten: what it held given back first */
	size_t nagg;
	const struct agg *a = aggregate_entries(&nagg);

	for (size_t i = 0; i < nagg; i++)
		if (a[i].proc == &procs[1] && a[i].held)
			aggregate_held(&procs[1], a[i].kind, a[i].stack, -(int64_t)a[i].held,
				       -(int)a[i].held_objects);
	timeline_forget(&procs[1]);
	aggregate_forget(&procs[1]);
	head = &procs[0];
	procs[0].next = NULL;
	a = aggregate_entries(&nagg);
	check(nagg == 3, "aggregates left", (long)nagg);
	for (size_t i = 0; i < nagg; i++)
		check(a[i].proc == &procs[0], "an aggregate of the process forgotten", (long)i);
	check_window(3, "forgotten");
	/* later intervals go on with the indexes moved */
	aggregate_add(&procs[0], EV_MALLOC, 9, 0, 50, 0);
	aggregate_held(&procs[0], EV_MALLOC, 9, 50, 1);
	timeline_interval_end(9000000000u, 1);
	aggregate_mark();
	check_window(3, "after");
	timeline_release();
	aggregate_clear();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * stats.c - the event sink: filters by --min-size, counts per process and
 * event kind, and passes each kept event to the trace printer.
 */
#include "config.h"

#include "memtap.h"

int recording = 1;

void event_emit(struct thread *tcp, struct event *ev, const arch_regs_t *regs)
{
	struct proc *p = tcp->proc;
	struct kind_stats *ks;
	uint64_t weight;

	if (!recording || !(opt.events & EV_BIT(ev->kind)))
		return;
	weight = ev->size < 0 ? (uint64_t)-ev->size : (uint64_t)ev->size;
	if (weight < opt.min_size) {
		p->filtered++;
		return;
	}
	ks = &p->stats[ev->kind];
	ks->calls++;
	if (ev->failed)
		ks->failed++;
	if (ev->size > 0) {
		ks->acquired += (uint64_t)ev->size;
		if (ev->map_kind == MAP_KIND_ANON)
			ks->anon += (uint64_t)ev->size;
		else if (ev->map_kind == MAP_KIND_FILE)
			ks->file += (uint64_t)ev->size;
	} else {
		ks->released += weight;
	}
	(void)regs;
	if (opt.trace)
		report_trace_event(ev);
}

void events_flush(void)
{
}

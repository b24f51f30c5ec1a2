/*
 * stats.c - the event sink.
 *
 * event_emit() runs at the stop where the event happened: it decides
 * whether the event is recorded (recording, -e, --min-size, --max-size)
 * and, when stacks are wanted, copies the top of the thread's stack with
 * one process_vm_readv (snapshot.c).  Events that are not recorded but
 * give memory back are kept too, for the held ranges and the live table.
 * The tracer then resumes the thread and calls events_flush(), which
 * unwinds the copies, interns the stacks (stacks.c), counts the events,
 * adds them to the byte-weighted aggregates (aggregate.c) and keeps the
 * held ranges (maptrack.c) and live blocks (live.c); --trace lines are
 * printed there, with their stacks.  So the target waits only for the
 * copy, never for unwinding.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "record/aggregate.h"
#include "trace/alloc.h"
#include "probe/breakpoint.h"
#include "util/error.h"
#include "record/live.h"
#include "record/maptrack.h"
#include "trace/memtap.h"
#include "stack/modules.h"
#include "stack/stacks.h"
#include "stack/symbolize.h"
#include "stack/unwind.h"
#include "util/xmalloc.h"

int recording = 1;

struct pending {
	struct event ev;
	char comm[16];
	struct proc *proc;
	int selected;		/* -e chose its kind */
	int record;		/* selected and within --min/--max-size */
	struct stack_snapshot snap;
	int has_snap;
};

static struct pending *pending;
static size_t npending, pending_cap;
static struct stack_table *stacks;
static uint64_t *pcs;

struct stack_table *stack_table(void)
{
	return stacks;
}

static struct proc_modules *proc_modules(struct proc *p)
{
	if (!p->modules)
		p->modules = proc_modules_new(p->pid);
	return p->modules;
}

/*
 * A fork child: its copy of the parent's held ranges and blocks, marked
 * inherited, so that --leaks counts them once, as the parent's, and
 * shows apart what the child still holds of them at its end.  A child
 * memtap does not follow gets none: nothing it frees would be seen.
 */
void stats_proc_fork(struct proc *child, const struct proc *parent)
{
	if (child->unfollowed)
		return;
	maptrack_copy(child, parent);
	live_copy(child, parent);
}

void stats_proc_exec(struct proc *p)
{
	maptrack_clear(p);
	live_clear(p);
	if (p->modules)
		modules_map_changed(p->modules);
	if (p->unwinder) {
		unwinder_free(p->unwinder);
		p->unwinder = NULL;
	}
}

/* Tell the module list of a mapping change that may concern code. */
static void note_mapping(struct proc *p, const struct event *ev)
{
	if (!p->modules || ev->failed)
		return;
	if (ev->kind == EV_MMAP && (ev->args[2] & PROT_EXEC))
		modules_note_mmap(p->modules, ev->addr, (uint64_t)ev->size, PROT_EXEC);
	else if (ev->kind == EV_MUNMAP)
		modules_note_unmap(p->modules, ev->addr, (uint64_t)-ev->size);
	else if (ev->kind == EV_MREMAP)
		modules_note_unmap(p->modules, ev->args[0], ev->args[1]);
}

/*
 * Does an event of this kind give memory back (brk, munmap, mremap, and
 * the allocator functions that free)?  Such events keep the held ranges
 * and the live table right even when -e or --min-size leaves them out.
 */
static int releases_memory(enum event_kind kind)
{
	return kind == EV_BRK || kind == EV_MUNMAP || kind == EV_MREMAP || kind == EV_FREE ||
	       kind == EV_REALLOC || kind == EV_REALLOCARRAY;
}

/* Is it an allocator call that hands out a block (realloc included)? */
static int allocates(enum event_kind kind)
{
	return ev_is_alloc(kind) && kind != EV_FREE;
}

unsigned events_to_trace(void)
{
	unsigned ev = opt.events;

	if (!opt.leaks)
		return ev;
	if (ev & (EV_BIT(EV_MMAP) | EV_BIT(EV_BRK) | EV_BIT(EV_MREMAP)))
		ev |= EV_BIT(EV_BRK) | EV_BIT(EV_MUNMAP) | EV_BIT(EV_MREMAP);
	if (ev & EV_ALLOC)
		ev |= EV_BIT(EV_FREE) | EV_BIT(EV_REALLOC) | EV_BIT(EV_REALLOCARRAY);
	return ev;
}

/*
 * The bytes an event moves, for --min-size and --max-size: a free weighs
 * the block it frees, known from the live table (every earlier event is
 * flushed by now).
 */
static uint64_t event_weight(struct proc *p, const struct event *ev)
{
	if (ev->kind == EV_FREE) {
		struct live_block b;

		if (live_find(p, ev->old_addr, &b) == 0)
			return b.size;
		return 0;
	}
	return ev->size < 0 ? (uint64_t)-ev->size : (uint64_t)ev->size;
}

static int size_selected(uint64_t weight)
{
	return weight >= opt.min_size && !(opt.max_size && weight > opt.max_size);
}

void event_emit(struct thread *tcp, struct event *ev, const arch_regs_t *regs)
{
	struct proc *p = tcp->proc;
	struct pending *pe;
	int selected = (opt.events & EV_BIT(ev->kind)) != 0;

	note_mapping(p, ev);
	if (!recording || (!selected && !releases_memory(ev->kind)))
		return;
	pending = xgrowarray(pending, &pending_cap, npending + 1, sizeof(*pending));
	pe = &pending[npending++];
	pe->ev = *ev;
	memcpy(pe->comm, tcp->comm, sizeof(pe->comm));
	pe->ev.comm = NULL;
	pe->proc = p;
	pe->selected = selected;
	pe->record = selected && size_selected(event_weight(p, ev));
	pe->has_snap = 0;
	if (!pe->record)
		return;		/* only its effect on held memory counts */
	if (opt.unwind != UNWIND_NONE && regs &&
	    stack_snapshot_take(&pe->snap, p->pid, tcp->tid, regs, opt.stack_size) == 0) {
		struct proc_modules *pm = proc_modules(p);
		struct bp_set *bps = alloc_bp_set(p);

		pe->has_snap = 1;
		/* return addresses replaced by memtap's trampoline: the real ones */
		if (bps)
			bp_fix_stack(bps, pe->snap.start, pe->snap.data, pe->snap.len);
		/*
		 * Mappings changed since they were last read, or the pc is in
		 * none of them: read them now, while the thread is stopped; by
		 * the time the stack is unwound the code may be unmapped
		 * already (dlclose).
		 */
		modules_event_begin(pm);
		modules_lookup(pm, arch_pc(regs));
		if (ev->leaf)
			modules_lookup(pm, ev->leaf);
	}
}

static void count_event(struct proc *p, const struct event *ev, uint64_t acquired,
			uint64_t released)
{
	struct kind_stats *ks = &p->stats[ev->kind];

	ks->calls++;
	if (ev->failed)
		ks->failed++;
	ks->acquired += acquired;
	ks->released += released;
	if (ev->map_kind == MAP_KIND_ANON)
		ks->anon += acquired;
	else if (ev->map_kind == MAP_KIND_FILE)
		ks->file += acquired;
}

/*
 * An allocator event against the live table: the block it frees (free,
 * a moved or shrunk-to-nothing realloc) goes out, the block it hands out
 * goes in.  Returns the bytes given back.
 */
static uint64_t track_blocks(struct proc *p, const struct event *ev, uint32_t stack)
{
	struct live_block b;
	uint64_t released = 0;

	if (ev->failed)
		return 0;
	if ((ev->kind == EV_FREE || ev->kind == EV_REALLOC || ev->kind == EV_REALLOCARRAY) &&
	    ev->old_addr) {
		if (live_remove(p, ev->old_addr, &b) == 0)
			released = b.size;
		else
			p->unknown_frees++;
	}
	if (allocates(ev->kind) && ev->addr && ev->size > 0)
		live_add(p, ev->addr, (uint64_t)ev->size, stack, ev->time_ns, ev->kind);
	return released;
}

/* Keep the held ranges (maptrack.c) in step with a successful event. */
static void track_memory(struct proc *p, const struct event *ev, uint32_t stack, int record)
{
	uint64_t t = ev->time_ns;

	if (ev->failed)
		return;
	switch (ev->kind) {
	case EV_BRK:
		if (ev->size > 0 && record)
			maptrack_add(p, ev->old_brk, ev->old_brk + (uint64_t)ev->size, stack, t, EV_BRK);
		else if (ev->size < 0)
			maptrack_remove(p, ev->addr, ev->addr + (uint64_t)-ev->size);
		break;
	case EV_MMAP:
		if (record)
			maptrack_add(p, ev->addr, ev->addr + (uint64_t)ev->size, stack, t, EV_MMAP);
		else
			maptrack_remove(p, ev->addr, ev->addr + (uint64_t)ev->size);
		break;
	case EV_MUNMAP:
		maptrack_remove(p, ev->addr, ev->addr + (uint64_t)-ev->size);
		break;
	case EV_MREMAP:
		maptrack_remove(p, ev->args[0], ev->args[0] + ev->args[1]);
		if (record)
			maptrack_add(p, ev->addr, ev->addr + ev->args[2], stack, t, EV_MREMAP);
		else
			maptrack_remove(p, ev->addr, ev->addr + ev->args[2]);
		break;
	default:
		break;
	}
}

static uint32_t unwind_pending(struct pending *pe)
{
	struct proc *p = pe->proc;
	int depth;

	if (!stacks)
		stacks = stack_table_new(STACK_TABLE_DEFAULT_MAX);
	if (!pcs)
		pcs = xcalloc((size_t)opt.max_depth, sizeof(*pcs));
	if (!p->unwinder) {
		p->unwinder = unwinder_new(opt.unwind, p->pid, proc_modules(p));
		if (!p->unwinder)
			return STACK_ID_LOST;
	}
	if (pe->ev.leaf && opt.max_depth > 1) {
		/* the function returned: it is the innermost frame, the rest
		 * are return addresses */
		pcs[0] = pe->ev.leaf;
		depth = unwinder_walk(p->unwinder, &pe->snap, pcs + 1, opt.max_depth - 1);
		depth = depth > 0 ? depth + 1 : 1;
	} else {
		depth = unwinder_walk(p->unwinder, &pe->snap, pcs, opt.max_depth);
	}
	if (depth <= 0)
		return STACK_ID_LOST;
	return stack_table_intern_pcs(stacks, p->modules, pcs, depth);
}

void events_flush(void)
{
	for (size_t i = 0; i < npending; i++) {
		struct pending *pe = &pending[i];
		struct event *ev = &pe->ev;
		struct proc *p = pe->proc;
		int record = pe->record;
		uint32_t stack = 0;
		uint64_t acquired, released;

		ev->comm = pe->comm;
		if (pe->selected && !record)
			p->filtered++;
		if (record && pe->has_snap)
			stack = unwind_pending(pe);
		if (ev_is_alloc(ev->kind)) {
			acquired = allocates(ev->kind) && ev->size > 0 ? (uint64_t)ev->size : 0;
			released = track_blocks(p, ev, stack);
			if (ev->kind == EV_FREE)
				ev->size = -(int64_t)released;
		} else {
			acquired = ev->size > 0 ? (uint64_t)ev->size : 0;
			released = ev->size < 0 ? (uint64_t)-ev->size : 0;
			track_memory(p, ev, stack, record);
		}
		if (record) {
			count_event(p, ev, acquired, released);
			aggregate_add(p, ev->kind, stack, ev->failed, acquired, released);
			if (opt.trace)
				report_trace_event(ev, stack);
		}
	}
	npending = 0;
}

/* -v: what the stack machinery cost, on stderr. */
void stats_print_costs(void)
{
	uint64_t walks = 0, frames = 0, failures = 0, reads = 0, miss_reads = 0;

	for (struct proc *p = proc_list(); p; p = p->next) {
		if (p->unwinder) {
			walks += p->unwinder->walks;
			frames += p->unwinder->frames;
			failures += p->unwinder->failures;
		}
		if (p->modules) {
			reads += p->modules->reads;
			miss_reads += p->modules->miss_reads;
		}
	}
	info_msg("modules: %" PRIu64 " maps reads (%" PRIu64 " for a pc in no known module), %"
		 PRIu64 " stops at code mappings that are no event", reads, miss_reads, stops.code);
	info_msg("stacks: %u distinct, %zu bytes in the stack table, %" PRIu64
		 " events without a stack (table full); unwinds: %" PRIu64 " (%" PRIu64
		 " frames, %" PRIu64 " failed), with %s", stacks ? stack_table_count(stacks) : 0,
		 stacks ? stack_table_memory(stacks) : 0, stacks ? stack_table_lost(stacks) : 0,
		 walks, frames, failures, opt.unwind == UNWIND_LIBDW ? "dwarf (libdw)" :
		 opt.unwind == UNWIND_DWARF ? "libunwind" : unwind_kind_name(opt.unwind));
	if (opt.events & EV_ALLOC) {
		size_t blocks = 0;

		for (struct proc *p = proc_list(); p; p = p->next)
			blocks += live_count(p);
		info_msg("live allocations: %zu blocks in %zu bytes of tables", blocks, live_memory());
	}
}

void stats_release(void)
{
	for (size_t i = 0; i < pending_cap; i++)
		stack_snapshot_release(&pending[i].snap);
	free(pending);
	pending = NULL;
	npending = pending_cap = 0;
	free(pcs);
	pcs = NULL;
	for (struct proc *p = proc_list(); p; p = p->next) {
		if (p->unwinder)
			unwinder_free(p->unwinder);
		if (p->modules)
			proc_modules_free(p->modules);
		p->unwinder = NULL;
		p->modules = NULL;
	}
	if (stacks)
		stack_table_free(stacks);
	stacks = NULL;
	modules_release_all();
	maptrack_release_all();
	live_release_all();
}

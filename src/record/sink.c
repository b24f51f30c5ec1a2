/*
 * sink.c - the event sink (sink.h).
 *
 * sink_emit() runs at the stop where the event happened: it decides
 * whether the event is recorded (recording, -e, --min-size, --max-size)
 * and queues it with the stack copy its source took.  Events that are
 * not recorded but give memory back are kept too, for the held ranges
 * and the live table.  The tracer then resumes the thread and calls
 * sink_flush(), which unwinds the copies, interns the stacks
 * (stacks.c), counts the events, adds them to the byte-weighted
 * aggregates (aggregate.c) and keeps the held ranges (maptrack.c) and
 * live blocks (live.c); --trace lines are printed there, with their
 * stacks.  So the target waits only for the copy, never for unwinding.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "linux/procfs.h"
#include "record/aggregate.h"
#include "record/freed.h"
#include "record/live.h"
#include "record/maptrack.h"
#include "record/sample.h"
#include "record/sink-int.h"
#include "record/sink.h"
#include "record/timeline.h"
#include "stack/symbols/debug-cache.h"
#include "stack/runtimes/jitnames.h"
#include "stack/modules.h"
#include "stack/stacks.h"
#include "stack/symbols/symbolize.h"
#include "stack/unwind/unwind.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/xmalloc.h"

static struct sink_config cfg;
static int recording = 1;
static sink_trace_fn trace_fn;

struct pending {
	struct event ev;
	char comm[16];		/* with --trace: ev.comm */
	struct sink_proc *proc;
	int selected;		/* -e chose its kind */
	int record;		/* selected and within --min/--max-size */
	int decide;		/* a free, selected: record set at the flush */
	uint64_t order;		/* among its process's events (event.h) */
	struct stack_snapshot snap;
	unsigned char *own;	/* snap borrowed: the buffer it replaced */
	size_t own_cap;
	int has_snap;
};

static struct pending *pending;
static size_t npending, pending_cap;
static struct sink_stacked *stacked;	/* for sink_take_stacked() */
static size_t nstacked, stacked_cap;
static struct stack_table *stacks;
static uint64_t *pcs;

void sink_init(const struct sink_config *c)
{
	cfg = *c;
	/* what each process holds first, then the timeline's changes of its
	   aggregates (sink_proc_forget()) */
	sink_proc_store_add(&live_store);
	sink_proc_store_add(&freed_store);
	sink_proc_store_add(&maptrack_store);
	sink_proc_store_add(&timeline_store);
}

const struct sink_config *sink_config(void)
{
	return &cfg;
}

void sink_set_trace(sink_trace_fn fn)
{
	trace_fn = fn;
}

struct stack_table *sink_stack_table(void)
{
	return stacks;
}

int sink_stacks_full(void)
{
	return stacks && stack_table_full(stacks);
}

void sink_set_recording(int on)
{
	recording = on;
}

int sink_recording(void)
{
	return recording && !output_gone();
}

int sink_stacks_wanted(void)
{
	return cfg.unwind != UNWIND_NONE;
}

size_t sink_stack_size(void)
{
	return cfg.stack_size;
}

/* Tell the module list of a mapping change that may concern code. */
static void note_mapping(struct sink_proc *p, const struct event *ev)
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

/* The events to stop at for -e events, with --leaks if leaks. */
static unsigned events_to_trace(unsigned ev, int leaks)
{
	if (!leaks)
		return ev;
	if (ev & (EV_BIT(EV_MMAP) | EV_BIT(EV_BRK) | EV_BIT(EV_MREMAP)))
		ev |= EV_BIT(EV_BRK) | EV_BIT(EV_MUNMAP) | EV_BIT(EV_MREMAP);
	if (ev & EV_ALLOC)
		ev |= EV_BIT(EV_FREE) | EV_BIT(EV_REALLOC) | EV_BIT(EV_REALLOCARRAY);
	return ev;
}

unsigned sink_events_to_trace(void)
{
	return events_to_trace(cfg.events, cfg.leaks);
}

int sink_held_known(void)
{
	/* sampled allocator calls: their frees are only counted, but with
	   --leaks, where the stubs follow each sampled block to its free */
	if (cfg.sample_mean && (cfg.events & EV_ALLOC))
		return cfg.leaks;
	return cfg.leaks || (events_to_trace(cfg.events, 1) & ~cfg.events) == 0;
}

/*
 * The bytes an event moves, for --min-size and --max-size: a free weighs
 * the block it frees, known from the live table (every earlier event is
 * flushed by now).
 */
static uint64_t event_weight(const struct sink_proc *p, const struct event *ev)
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
	return weight >= cfg.min_size && !(cfg.max_size && weight > cfg.max_size);
}

/* --min-size or --max-size: a block they leave out is not followed */
static int size_filtered(void)
{
	return cfg.min_size || cfg.max_size;
}

/*
 * Is every allocator call seen, each block handed out and each free,
 * so that a free of an address freed and not handed out since is the
 * allocator's own (freed.h)?  Not while calls are sampled (their frees
 * are only counted), nor with a size filter (the blocks it leaves out
 * are not followed), nor with an allocator function left out by -e.
 */
int sink_frees_followed(void)
{
	return !cfg.sample_mean && !size_filtered() &&
	       (events_to_trace(cfg.events, cfg.leaks) & EV_ALLOC) == EV_ALLOC;
}

/*
 * A free that the program did not make, of a block not in the live
 * table, when every allocator call is seen: one of an address freed
 * and not handed out since (freed.h), counted apart (p->refrees); or,
 * in a process seen from its start (sink_proc_from_start()), one of a
 * block that no probed call ever handed out, which the allocator
 * allocated itself (glibc's thread cache, freed at a thread's exit),
 * counted among the frees of unknown blocks.  Attached, such a block
 * is the program's, allocated before: its free is one of its calls.
 * Either is taken out of the stubs' count of the calls when they
 * counted it.
 */
static int allocator_free_dropped(struct sink_proc *p, const struct event *ev)
{
	struct live_block b;

	if (ev->kind != EV_FREE || ev->failed || !ev->old_addr || ev->release_only ||
	    ev->sample_mean || !sink_frees_followed() || live_find(p, ev->old_addr, &b) == 0)
		return 0;
	if (freed_has(p, ev->old_addr))
		p->refrees++;
	else if (p->from_start)
		p->unknown_frees++;
	else
		return 0;
	if (ev->counted)
		p->stats[EV_FREE].counted_refrees++;
	return 1;
}

int sink_wants(const struct sink_proc *sp, const struct event *ev)
{
	int selected = (cfg.events & EV_BIT(ev->kind)) != 0;

	if (!sink_recording() || (!selected && !releases_memory(ev->kind)))
		return 0;
	if (ev->kind == EV_FREE && !ev->old_addr)
		return 0;	/* free(NULL) frees nothing: no call */
	if (!selected)
		return SINK_HELD;
	/* no size filter: the weight (a free's, a live table lookup) is not asked */
	return !size_filtered() || size_selected(event_weight(sp, ev)) ? SINK_RECORD : SINK_HELD;
}

/* p's unwinder, made at its first use; NULL if none can be made */
static struct unwinder *proc_unwinder(struct sink_proc *p)
{
	if (!p->unwinder)
		p->unwinder = unwinder_new(cfg.unwind, p->pid, sink_proc_modules(p));
	return p->unwinder;
}

void sink_proc_code_written(struct sink_proc *p)
{
	if (p->unwinder)
		unwinder_code_changed(p->unwinder);
}

/* The most a stack's copy grows to at a stop: STACK_SNAPSHOT_GROW times --stack-size */
static size_t stack_copy_max(void)
{
	size_t max = cfg.stack_size * STACK_SNAPSHOT_GROW;

	/* --stack-size is at most STACK_SNAPSHOT_GROW_MAX */
	return max > STACK_SNAPSHOT_GROW_MAX ? STACK_SNAPSHOT_GROW_MAX : max;
}

void sink_stack_extend(struct sink_proc *p, struct stack_snapshot *snap)
{
	if (!snap->asked || snap->len != snap->asked)
		return;		/* the common case: the stack ended in the copy */
	modules_event_begin(sink_proc_modules(p));
	stack_snapshot_extend(proc_unwinder(p), snap, cfg.max_depth, stack_copy_max());
}

uint64_t sink_next_order(const struct sink_proc *p)
{
	return p->orders + 1;
}

void sink_emit(struct sink_proc *p, const struct event *ev, struct stack_snapshot *snap)
{
	uint64_t order = ++p->orders;
	struct pending *pe;
	int w, unsure = (ev->code & EV_CODE_UNSURE) != 0;

	if (ev->order)
		order = ev->order;	/* its source's: a ring's sequence number */

	note_mapping(p, ev);
	w = sink_wants(p, ev);
	if (!w)
		return;
	if (snap && p->unwinder) {
		/*
		 * The process's perf map or jitdump says code was rewritten
		 * where code was, by now: the stacks copied before are unwound
		 * with the rules of before, and the rules of run-time code made
		 * again for this one and the next; its frames, and the next
		 * ones, named by the files as they are now, those of before by
		 * the files as they were (jit_names_new_epoch()).
		 */
		uint64_t rw = p->jit_rewrites;

		if (!ev->code)
			rw = jit_names_rewrites(p->pid);
		else if (ev->code & EV_CODE_KNOWN)
			rw = ev->code & ~EV_CODE_KNOWN;	/* its source's (a ring's) */
		if (rw < p->jit_rewrites) {
			unsure = 1;	/* older than the rules made since */
		} else if (rw != p->jit_rewrites) {
			p->jit_rewrites = rw;
			sink_flush();
			sink_proc_code_written(p);
			jit_names_new_epoch(p->pid);
		}
	}
	if (npending == pending_cap)
		pending = xgrowarray(pending, &pending_cap, npending + 1, sizeof(*pending));
	pe = &pending[npending++];
	pe->ev = *ev;
	pe->ev.code = unsure ? EV_CODE_UNSURE : 0;
	pe->ev.comm = NULL;
	if (cfg.trace) {
		/* the only reader of the name, at the flush: as it is now */
		const char *comm = ev->comm ? ev->comm : "";
		size_t clen = strnlen(comm, sizeof(pe->comm) - 1);

		memcpy(pe->comm, comm, clen);
		pe->comm[clen] = '\0';
	}
	pe->proc = p;
	pe->order = order;
	p->queued++;
	pe->selected = (cfg.events & EV_BIT(ev->kind)) != 0;
	pe->record = w == SINK_RECORD;
	/*
	 * A free weighs the block it frees, which an event still pending
	 * may have handed out (a ring's batch): weighed again at the flush,
	 * against the live table as the events before it leave it.
	 */
	pe->decide = pe->selected && ev->kind == EV_FREE && size_filtered();
	pe->has_snap = 0;
	if (!(pe->record || pe->decide) || !snap)
		return;		/* only its effect on held memory counts */
	struct proc_modules *pm = sink_proc_modules(p);
	unsigned char *data = pe->snap.borrowed ? pe->own : pe->snap.data;
	size_t cap = pe->snap.borrowed ? pe->own_cap : pe->snap.cap;

	if (snap->borrowed) {
		/* the source's memory, until the flush: keep the buffer aside */
		pe->own = data;
		pe->own_cap = cap;
		pe->snap = *snap;
	} else {
		/* take the copy, leave the source the buffer it replaces */
		pe->own = NULL;
		pe->own_cap = 0;
		pe->snap = *snap;
		snap->data = data;
		snap->cap = cap;
	}
	pe->has_snap = 1;
	/*
	 * Mappings changed since they were last read, or the pc is in none
	 * of them: read them now, while the thread is stopped; by the time
	 * the stack is unwound the code may be unmapped already (dlclose).
	 */
	modules_event_begin(pm);
	modules_lookup(pm, arch_pc(&pe->snap.regs));
	if (ev->leaf)
		modules_lookup(pm, ev->leaf);
	/* a Go program on its g0 stack: the goroutine too, while it is stopped */
	if (pm->go && !pe->snap.borrowed)
		go_snapshot_take(&pe->snap, pm, stack_copy_max());
}

static void count_event(struct sink_proc *p, const struct event *ev, uint64_t calls,
			uint64_t acquired, uint64_t released)
{
	struct kind_stats *ks = &p->stats[ev->kind];

	ks->calls += calls;
	if (ev->failed)
		ks->failed++;
	ks->acquired += acquired;
	if (ev->counted) {
		ks->ring_calls += calls;
		if (ev->counted & EV_COUNTED_BYTES) {
			ks->ring_acquired += acquired;
			if (ev->failed)
				ks->ring_failed_asked += ev->asked;
		}
	}
	ks->released += released;
	ks->data += ev->data;
	ks->resident += ev->resident < 0 ? (uint64_t)-ev->resident : 0;
	if (ev->map_kind == MAP_KIND_ANON)
		ks->anon += acquired;
	else if (ev->map_kind == MAP_KIND_FILE)
		ks->file += acquired;
}

/*
 * An allocator event (of order `order`: event.h) against the
 * live table: the block it frees (free, a moved or shrunk-to-nothing
 * realloc: the block old_addr held at its entry, live.h) goes out; with
 * hold, the block it hands out goes in, held at `size` bytes (a sampled
 * call's weight, else its size).  A block of 0 bytes (malloc(0),
 * calloc(0, n)) is a block: held at 0 bytes, and its free a known one.
 * A failed realloc frees nothing.  Returns the bytes given back.
 */
static uint64_t track_weighed(struct sink_proc *p, const struct event *ev, uint64_t order,
			      uint32_t stack, uint64_t size, int hold)
{
	struct live_block b;
	uint64_t released = 0;

	if (ev->failed)
		return 0;
	if ((ev->kind == EV_FREE || ev->kind == EV_REALLOC || ev->kind == EV_REALLOCARRAY) &&
	    ev->old_addr) {
		if (live_release(p, ev->old_addr, ev->entered, &b) == 0)
			released = b.size;
		else if (!ev->sample_mean && !ev->release_only && !size_filtered())
			p->unknown_frees++;	/* else a block left out by its size, likely */
		if (sink_frees_followed() && !ev->sample_mean)
			freed_add(p, ev->old_addr);
	}
	if (allocates(ev->kind) && ev->addr && sink_frees_followed())
		freed_drop(p, ev->addr);
	if (hold && allocates(ev->kind) && ev->addr)
		live_add(p, ev->addr, size, stack, ev->time_ns, ev->kind, order);
	return released;
}

/* Keep the held ranges (maptrack.c) in step with a successful event. */
static void track_memory(struct sink_proc *p, const struct event *ev, uint32_t stack, int record)
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

/*
 * A sampled call: the calls and bytes it stands for (record/sample.h).
 * Bytes are rounded to the nearest; calls, mostly fractions of a few,
 * are rounded up or down at random in proportion, so that their sums
 * stay unbiased too.
 */
static uint64_t weigh_sampled(uint64_t mean, uint64_t *bytes)
{
	static struct sample_rng rng;
	static int seeded;
	double w = sample_weight_calls(*bytes, mean), whole = (double)(uint64_t)w;
	double u;

	if (!seeded) {
		sample_rng_init(&rng, 0x6d656d746170);
		seeded = 1;
	}
	u = (double)(sample_rng_next(&rng) >> 11) * 0x1p-53;
	*bytes = (uint64_t)(sample_weight_bytes(*bytes, mean) + 0.5);
	return (uint64_t)whole + (u < w - whole);
}

/*
 * The stack of snap, leaf innermost (0: none); *stable as the stack
 * table's (or NULL).  unsure: which run-time code the stack ran is not
 * known (event.h's EV_CODE_UNSURE): it ends at its first frame of
 * such code, named so (jit_names_unsure()), its callers cut.
 */
static uint32_t unwind_snapshot(struct sink_proc *p, uint64_t leaf,
				const struct stack_snapshot *snap, int *stable, int unsure)
{
	uint32_t id;
	int depth;

	if (!stacks) {
		stacks = stack_table_new(STACK_TABLE_DEFAULT_MAX);
		stack_table_set_max_stacks(stacks, cfg.max_stacks ? cfg.max_stacks :
						   STACK_TABLE_DEFAULT_STACKS);
	}
	if (!pcs)
		pcs = xcalloc((size_t)cfg.max_depth, sizeof(*pcs));
	if (!proc_unwinder(p))
		return STACK_ID_LOST;
	if (leaf && cfg.max_depth > 1) {
		/* the function returned: it is the innermost frame, the rest
		 * are return addresses */
		pcs[0] = leaf;
		depth = unwinder_walk(p->unwinder, snap, pcs + 1, cfg.max_depth - 1);
		depth = depth > 0 ? depth + 1 : 1;
	} else {
		depth = unwinder_walk(p->unwinder, snap, pcs, cfg.max_depth);
	}
	if (depth <= 0)
		return STACK_ID_LOST;
	if (snap->cut && depth < cfg.max_depth)
		pcs[depth++] = STACK_PC_CUT;	/* the root says the rest is missing */
	if (unsure && p->modules) {
		uint32_t m;
		uint64_t a;

		for (int i = 0; i < depth && (!i || pcs[i] != STACK_PC_CUT); i++)
			if (modules_resolve(p->modules, i ? pcs[i] - 1 : pcs[i], &m, &a) < 0) {
				depth = i + 1;
				if (depth < cfg.max_depth)
					pcs[depth++] = STACK_PC_CUT;
				p->code_unsure++;
				jit_names_unsure(p->pid, 1);
				id = stack_table_intern_pcs_stable(stacks, p->modules, pcs, depth,
								   stable);
				jit_names_unsure(p->pid, 0);
				return id;
			}
	}
	return stack_table_intern_pcs_stable(stacks, p->modules, pcs, depth, stable);
}

static uint64_t modules_stamp(const struct proc_modules *pm)
{
	return pm->serial << 32 | modules_version(pm);
}

uint32_t sink_walk_stack(struct sink_proc *p, uint64_t leaf, const uint64_t *ret, int n,
			 uint64_t *stamp)
{
	struct proc_modules *pm = sink_proc_modules(p);
	struct stack_snapshot snap = { .pid = p->pid, .pre = ret, .npre = n,
				       .walked = STACK_WALK_END, .borrowed = 1 };
	uint32_t id;
	int stable = 0;

	if (!sink_recording() || n < 1)
		return 0;
	arch_set_pc(&snap.regs, ret[0]);
	modules_event_begin(pm);
	modules_lookup(pm, ret[0]);
	if (leaf)
		modules_lookup(pm, leaf);
	id = unwind_snapshot(p, leaf, &snap, &stable, 0);
	if (id == STACK_ID_LOST || !stable)
		return 0;
	*stamp = modules_stamp(pm);
	return id;
}

int sink_stack_current(const struct sink_proc *p, uint64_t stamp)
{
	const struct proc_modules *pm = p->modules;

	return pm && pm->generation == pm->read_generation && modules_stamp(pm) == stamp;
}

void sink_flush(void)
{
	for (size_t i = 0; i < npending; i++) {
		struct pending *pe = &pending[i];
		struct event *ev = &pe->ev;
		struct sink_proc *p = pe->proc;
		int record = pe->record;
		uint32_t stack = 0;
		uint64_t acquired, released, calls = 1;

		p->queued--;
		if (cfg.trace)
			ev->comm = pe->comm;	/* the array may have grown since */
		aggregate_set_time(ev->time_ns);	/* a peak it makes is then */
		if (ev->release_only) {
			/* a sampled block's free: it is no longer held */
			track_weighed(p, ev, pe->order, stack, 0, 0);
			continue;
		}
		if (allocator_free_dropped(p, ev))
			continue;	/* the allocator's, not the program's */
		if (i + 1 < npending && pending[i + 1].has_snap && pending[i + 1].snap.borrowed)
			/* the next stack's top, where the first frames are: the
			 * target's CPU wrote it (an in-target ring) */
			for (size_t o = 0; o < pending[i + 1].snap.len && o < 512; o += 64)
				__builtin_prefetch(pending[i + 1].snap.data + o);
		if (pe->decide)
			record = size_selected(event_weight(p, ev));
		if (pe->selected && !record)
			p->filtered++;
		if (record && ev->stack)
			stack = ev->stack;
		else if (record && pe->has_snap)
			stack = unwind_snapshot(p, ev->leaf, &pe->snap, NULL,
						(ev->code & EV_CODE_UNSURE) != 0);
		if (ev_is_alloc(ev->kind) && ev->sample_mean) {
			/* frees are only counted */
			acquired = allocates(ev->kind) && ev->size > 0 ? (uint64_t)ev->size : 0;
			released = 0;
			if (acquired)
				calls = weigh_sampled(ev->sample_mean, &acquired);
			if (cfg.leaks)
				/* the stubs follow the block: held at its weight;
				   what a realloc gives back stays uncounted, as a
				   free's (only the sampled blocks' would be seen) */
				track_weighed(p, ev, pe->order, stack, acquired, 1);
		} else if (ev_is_alloc(ev->kind)) {
			acquired = allocates(ev->kind) && ev->size > 0 ? (uint64_t)ev->size : 0;
			/*
			 * Only the blocks that the size filter keeps are
			 * followed, whatever -e chose: the stubs record the
			 * frees of those only (stub-abi.h's set of kept
			 * blocks).
			 */
			released = track_weighed(p, ev, pe->order, stack, acquired,
						 size_selected(acquired));
			if (ev->kind == EV_FREE)
				ev->size = -(int64_t)released;
		} else {
			acquired = ev->size > 0 ? (uint64_t)ev->size : 0;
			released = (ev->size < 0 ? (uint64_t)-ev->size : 0) + ev->replaced;
			track_memory(p, ev, stack, record);
		}
		if (record) {
			count_event(p, ev, calls, acquired, released);
			if (calls == 1)
				aggregate_add(p, ev->kind, stack, ev->failed, acquired, released);
			else
				aggregate_add_calls(p, ev->kind, stack, calls, acquired);
			if (cfg.trace && trace_fn)
				trace_fn(ev, stack);
		}
		if (ev->stack_tag && record) {
			stacked = xgrowarray(stacked, &stacked_cap, nstacked + 1, sizeof(*stacked));
			stacked[nstacked].ev = *ev;
			stacked[nstacked].ev.comm = NULL;
			stacked[nstacked++].stack = stack;
		}
	}
	npending = 0;
}

const struct sink_stacked *sink_take_stacked(size_t *n)
{
	*n = nstacked;
	nstacked = 0;
	return stacked;
}

void sink_add_weight(struct sink_proc *p, enum event_kind kind, uint32_t stack,
		     uint64_t calls, uint64_t bytes)
{
	struct kind_stats *ks = &p->stats[kind];

	if (!sink_recording() || !(cfg.events & EV_BIT(kind)) || (!calls && !bytes))
		return;
	ks->calls += calls;
	ks->acquired += bytes;
	aggregate_add_calls(p, kind, stack, calls, bytes);
}

void sink_add_counted(struct sink_proc *p, enum event_kind kind, uint64_t calls,
		      uint64_t bytes, int bytes_counted)
{
	struct kind_stats *ks = &p->stats[kind];

	if (!recording || (!calls && !bytes))
		return;
	ks->counted_calls += calls;
	ks->counted_bytes += bytes;
	ks->counted |= EV_COUNTED_CALLS | (bytes_counted & EV_COUNTED_BYTES);
	if (!(bytes_counted & EV_COUNTED_BYTES) && calls)
		ks->bytes_uncounted = 1;
}

int sink_kind_totals(const struct kind_stats *ks, const struct kind_stats *base,
		     uint64_t *calls, uint64_t *acquired)
{
	static const struct kind_stats none;
	int counted = ks->counted;

	if (!base)
		base = &none;
	*calls = ks->calls - base->calls;
	*acquired = ks->acquired - base->acquired;
	/* --min-size, --max-size: the records' calls are those kept by the size */
	if (!counted || size_filtered())
		return 0;
	*calls = *calls - (ks->ring_calls - base->ring_calls) +
		 (ks->counted_calls - base->counted_calls) -
		 (ks->counted_refrees - base->counted_refrees);
	if (!(counted & EV_COUNTED_BYTES) || ks->bytes_uncounted)
		return EV_COUNTED_CALLS;
	/* the failed calls acquired nothing: the bytes they asked out */
	*acquired = *acquired - (ks->ring_acquired - base->ring_acquired) +
		    (ks->counted_bytes - base->counted_bytes) -
		    (ks->ring_failed_asked - base->ring_failed_asked);
	return EV_COUNTED_CALLS | EV_COUNTED_BYTES;
}

void sink_add_samples(struct sink_proc *p, enum event_kind kind, uint64_t samples,
		      uint64_t lost, uint64_t throttles)
{
	struct kind_stats *ks = &p->stats[kind];

	ks->samples += samples;
	ks->lost += lost;
	ks->throttles += throttles;
}

void sink_add_neighbour(struct sink_proc *p, enum event_kind kind, uint64_t faults,
			uint64_t bytes)
{
	struct kind_stats *ks = &p->stats[kind];

	if (!sink_recording() || !(cfg.events & EV_BIT(kind)))
		return;
	ks->neighbour += faults;
	ks->neighbour_bytes += bytes;
}

void sink_release(void)
{
	for (size_t i = 0; i < pending_cap; i++) {
		stack_snapshot_release(&pending[i].snap);
		free(pending[i].own);
	}
	free(pending);
	pending = NULL;
	npending = pending_cap = 0;
	free(stacked);
	stacked = NULL;
	nstacked = stacked_cap = 0;
	free(pcs);
	pcs = NULL;
	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		if (p->unwinder)
			unwinder_free(p->unwinder);
		if (p->modules)
			proc_modules_free(p->modules);
		p->unwinder = NULL;
		p->modules = NULL;
		p->queued = 0;	/* the queue is dropped */
	}
	if (stacks)
		stack_table_free(stacks);
	stacks = NULL;
	symbolize_release_all();
	jit_names_release_all();
	modules_release_all();
	sink_proc_stores_release();
}

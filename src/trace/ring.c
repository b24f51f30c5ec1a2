/*
 * ring.c - the in-target probes' rings (probe/detour.h, layout in
 * arch/stub-abi.h) as a source of events: no thread stops.
 *
 * A shared ring (probe/detour-ring.h: mapped in memtap too) is read
 * where it lies: the records from TAIL on whose commit (R_SEQ, stored
 * last) is in; TAIL, in the same mapping, is stored back after each
 * batch of up to RING_BATCH records, with no syscall (HEAD is read only
 * when no record was committed for a while).  A private ring is copied:
 * HEAD, then the R_SEQ words from TAIL on, then (a separate copy: one
 * big copy may read a record's body before its commit) the committed
 * prefix of records, their
 * fixed parts and the stack bytes each holds, then TAIL is written
 * back: five accesses per batch, by process_vm_readv/writev
 * (linux/memio.h).  Each record becomes the
 * event the int3 probe would have made at the function's return
 * (alloc-hits.c): the caller's registers (pc = the return address, sp
 * above it, the callee-saved ones as the stub found them, unchanged by
 * the function: arch_regs_from_record()) and the copy of the stack
 * from the function's entry.
 * The events' stacks are the records' own bytes (borrowed, struct
 * stack_snapshot): the sink is flushed, and the stacks unwound, before
 * TAIL gives the records back to the stubs (or the next batch of a
 * private ring is read over them): no copy of a stack in memtap.
 * Records made by a call nested in another probed call (realloc(NULL,
 * n) calling malloc; their return address is in a detoured function or
 * in a stub) are not events, as with int3 (the stubs make none while
 * their nest table holds every range: stub-abi.h); a syscall
 * wrapper's always is one (the hooks' wrapper(), ring.h), as the seccomp stop
 * would be.
 *
 * An event's order is its record's sequence number (event.h): a
 * realloc's record says how many were reserved since its call's entry.
 *
 * A record reserved but never committed (a signal handler that
 * longjmp'd out of the stub) would block the ring: one left
 * uncommitted for RING_STUCK_NS while HEAD is beyond it is skipped and
 * counted as lost.
 *
 * The source drains every ring every RING_IDLE_NS, or RING_BUSY_NS
 * for RING_IDLE_NS after a drain that found RING_BUSY_MIN records or
 * more, or at the loop's next round after one that found a batch or
 * more (the stubs make records faster than RING_BUSY_NS would take
 * them, and wait on a full ring).  A trickle (sampled calls: one
 * record in hundreds of microseconds) waits in the ring: woken every
 * RING_BUSY_NS for a record or two, memtap spent more of the CPU on
 * its wakeups than on the records.
 *
 * Sampled rings (record/sample.h): each record carries the mean its
 * call was kept at, for the sink's weights; each drain refills the
 * pool of intervals the stubs took.  With --overhead, every
 * BUDGET_PERIOD_NS the mean moves (sample_budget_update()) so that the
 * kept records cost about that share of the target's CPU time: the
 * cost of a record is the CPU time memtap spent on the drains that
 * found records (reading them, then unwinding and counting: with
 * --overhead the sink is flushed here, to be measured) divided by
 * their records, plus STUB_RECORD_NS, what a record costs in the stub
 * (bench/spike: 0.1 us with 8 KiB of stack copied).  Not all of
 * memtap's CPU time: what it costs without records (the timers, the
 * drains that find nothing) would make a record look dearer the fewer
 * there are, and push the mean up without end.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "probe/detour.h"
#include "linux/procfs.h"
#include "probe/probes.h"
#include "record/sample.h"
#include "record/sink.h"
#include "stack/unwind/unwind.h"
#include "trace/emit.h"
#include "trace/ring.h"
#include "trace/ring-code.h"
#include "trace/tracer.h"
#include "trace/source.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/xmalloc.h"

#define RING_BATCH 256
#define RING_IDLE_NS 2000000ULL
#define RING_BUSY_NS 50000ULL
#define RING_BUSY_MIN 16	/* records a drain finds to stay busy */
#define RING_STUCK_NS 1000000000ULL
/*
 * A shared ring found empty: HEAD (on the line the stubs reserve with
 * lock cmpxchg; a syscall to read) only once it stayed so this long.
 */
#define RING_HEAD_NS 1000000ULL
#define RING_HOLD_NS 100000000ULL	/* below the stubs' bounded wait (stub-abi.h) */
#define RING_VFORKS 4		/* vfork children at once, of one process */
#define BUDGET_PERIOD_NS 100000000ULL
#define STUB_RECORD_NS 100.0
#define BUDGET_MIN_MEAN 4096
#define BUDGET_MAX_MEAN (UINT64_C(1) << 30)

struct ring_src {
	struct proc *p;
	struct detour_set *ds;
	const struct ring_hooks *hooks;
	struct detour_ring r;
	uint64_t tail;
	uint64_t *commits;	/* RING_BATCH each */
	uint8_t *recs;
	struct memio_seg *segs;	/* RING_BATCH each */
	uint64_t stuck_tail, stuck_since;
	uint64_t records, skipped, nested;
	uint64_t copied;	/* bytes of stack the records carried */
	uint64_t compact;	/* records of one line (stub-abi.h, DC_COMPACT) */
	uint64_t empty_since;	/* a shared ring found empty since then; 0: not */
	/* by chain id: the stack of its last record, for the next (sink_walk_stack()) */
	struct chain_stack {
		uint32_t stack;
		uint32_t slot;
		uint64_t stamp;
	} *chain_stacks;
	size_t nchain_stacks;
	uint64_t dropped;	/* the stubs' count, as ring_lost() last read it */
	uint64_t pause_until;	/* MEMTAP_RING_PAUSE */
	enum { DL_NONE, DL_HOLD, DL_RELEASED } dl;	/* ring_dl_cookie's record */
	uint64_t dl_seq, dl_since;	/* its sequence number; when the hold began */
	struct {
		pid_t tid;		/* records of this tid are */
		struct proc *child;	/* this vfork child's */
	} vforks[RING_VFORKS];
	/* --overhead: the period's start */
	struct sample_budget budget;
	uint64_t period_ns, period_bytes, period_cpu, period_records;
	struct ring_code code;	/* what the records' run-time code was */
	struct ring_src *next;
};

char ring_sync_cookie, ring_dl_cookie;

static struct ring_src *rings;
static uint64_t next_ns, busy_ns;	/* busy_ns: the last drain that found records */
static int registered;
static double overhead;		/* --overhead, 0: a fixed mean */
static uint64_t busy_cpu;	/* CPU time of the drains that found records, ns */
static uint64_t mean_lo, mean_hi;	/* the means in force, 0: none sampled */

static void drain_all(void *self);
static uint64_t ring_next_ns(void *self);

static const struct source_ops ring_ops = {
	.name = "in-target rings",
	.next_drain_ns = ring_next_ns,
	.drain = drain_all,
};

void ring_set_overhead(double percent)
{
	overhead = percent;
}

static void note_mean(uint64_t mean)
{
	if (!mean)
		return;
	if (!mean_lo || mean < mean_lo)
		mean_lo = mean;
	if (mean > mean_hi)
		mean_hi = mean;
}

void ring_sample_means(uint64_t *lo, uint64_t *hi)
{
	*lo = mean_lo;
	*hi = mean_hi;
}

struct ring_src *ring_add(struct proc *p, struct detour_set *ds, const struct ring_hooks *hooks)
{
	struct ring_src *r = xcalloc(1, sizeof(*r));
	const char *pause = getenv("MEMTAP_RING_PAUSE");

	r->p = p;
	r->ds = ds;
	r->hooks = hooks;
	detour_get_ring(ds, &r->r);
	r->tail = r->r.head;
	r->commits = xcalloc(RING_BATCH, sizeof(*r->commits));
	r->recs = xcalloc(RING_BATCH, r->r.rec_size);
	r->segs = xcalloc(RING_BATCH, sizeof(*r->segs));
	if (pause && *pause)
		r->pause_until = now_ns() + strtoull(pause, NULL, 10) * 1000000ULL;
	note_mean(detour_sample_mean(ds));
	r->budget.percent = overhead;
	r->budget.min_mean = BUDGET_MIN_MEAN;
	r->budget.max_mean = BUDGET_MAX_MEAN;
	r->budget.mean = detour_sample_mean(ds);
	r->next = rings;
	rings = r;
	if (!registered) {
		source_register(&ring_ops, NULL);
		registered = 1;
	}
	next_ns = now_ns() + RING_BUSY_NS;
	return r;
}

/* of the rings removed: their records read and lost */
static uint64_t records_gone, lost_gone;

void ring_remove(struct ring_src *r)
{
	if (!r)
		return;
	records_gone += r->records;
	lost_gone += ring_lost(r);
	for (struct ring_src **pp = &rings; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	free(r->commits);
	free(r->recs);
	free(r->segs);
	free(r->chain_stacks);
	free(r);
}

void ring_totals(uint64_t *records, uint64_t *lost)
{
	*records = records_gone;
	*lost = lost_gone;
	for (struct ring_src *r = rings; r; r = r->next) {
		*records += r->records;
		*lost += ring_lost(r);
	}
}

uint64_t ring_lost(struct ring_src *r)
{
	uint64_t d;

	/* read here, not at each drain (a syscall) */
	if (detour_read_data(r->ds, D_DROPPED, &d) == 0)
		r->dropped = d - r->r.dropped;
	return r->dropped + r->skipped;
}

uint64_t ring_records(const struct ring_src *r, uint64_t *copied, uint64_t *compact)
{
	if (copied)
		*copied = r->copied;
	if (compact)
		*compact = r->compact;
	return r->records;
}

static uint64_t word(const uint8_t *rec, unsigned off)
{
	uint64_t v;

	memcpy(&v, rec + off, sizeof(v));
	return v;
}

/*
 * Records tail .. tail + k - 1 into r->recs: their fixed parts first,
 * then of each only the bytes of stack its stub copied (R_COPIED), most
 * often a small part of the room a record has for it.  Two reads for
 * the batch.
 */
static int read_records(struct ring_src *r, uint64_t k)
{
	uint64_t room = r->r.rec_size - R_STACK, n = 0;
	int err;

	for (uint64_t j = 0; j < k; j++) {
		uint64_t at = r->r.ring + ((r->tail + j) & (r->r.nrec - 1)) * r->r.rec_size;

		r->segs[j].addr = at;
		r->segs[j].buf = r->recs + j * r->r.rec_size;
		r->segs[j].len = R_STACK;
	}
	err = memio_read_many(r->r.pid, r->segs, k);
	if (err < 0 || !sink_stacks_wanted())
		return err;
	for (uint64_t j = 0; j < k; j++) {
		uint8_t *rec = r->recs + j * r->r.rec_size;
		int64_t copied = (int64_t)word(rec, R_COPIED);

		if (copied <= 8 && (copied <= 0 || word(rec, R_WALK) == ~(uint64_t)0))
			continue;
		r->segs[n].addr = r->segs[j].addr + R_STACK;
		r->segs[n].buf = rec + R_STACK;
		r->segs[n].len = (uint64_t)copied < room ? (size_t)copied : (size_t)room;
		n++;
	}
	return memio_read_many(r->r.pid, r->segs, n);
}

static const struct event zero_event;

/* A walk of n return addresses pcs that ended (no tail), borrowed by snap. */
static void walked_pcs(struct stack_snapshot *snap, pid_t pid, pid_t tid, const uint64_t *pcs,
		       uint64_t n, uint64_t pc)
{
	memset(&snap->regs, 0, sizeof(snap->regs));
	snap->pid = pid;
	snap->tid = tid;
	snap->pre = pcs;
	snap->npre = (int)n;
	snap->walked = STACK_WALK_END;
	arch_set_pc(&snap->regs, pc);
	snap->start = 0;
	snap->len = 0;
	snap->data = NULL;
	snap->cap = 0;
	snap->asked = 0;
	snap->cut = 0;
	snap->borrowed = 1;
}

/*
 * A record of the stub walk (stub-abi.h, R_WALK): its return addresses
 * into snap, then the tail, if any: the frame after them, its pc, sp
 * and fp, and the copy from that sp (unwind.h: walked).
 */
static void walked(struct ring_src *r, const uint8_t *rec, struct stack_snapshot *snap,
		   pid_t pid, pid_t tid)
{
	uint64_t room = r->r.rec_size - R_STACK, n = word(rec, R_WALK);
	uint64_t bytes = word(rec, R_COPIED), trsp = word(rec, R_TSP);
	const uint64_t *pcs = (const uint64_t *)(const void *)(rec + R_STACK);

	if (bytes > room)
		bytes = room;
	if (n > bytes / 8)
		n = bytes / 8;
	/* the next such calls: compact; a new chain once the stacks are
	   full would only be [other], its pcs kept for nothing */
	if (!trsp && n && detour_compact(r->ds) && !sink_stacks_full())
		detour_chain_learn(r->ds, pcs, n);
	walked_pcs(snap, pid, tid, pcs, n, trsp ? word(rec, R_TPC) : word(rec, R_RET));
	if (trsp) {
		snap->walked = STACK_WALK_TAIL;
		arch_set_sp(&snap->regs, trsp);
		arch_set_fp(&snap->regs, word(rec, R_TFP));
		snap->start = trsp;
		snap->len = (size_t)(bytes - n * 8);
		snap->data = (unsigned char *)(uintptr_t)(rec + R_STACK + n * 8);
		snap->cap = snap->len;
		snap->asked = (size_t)(room - n * 8);
	}
}

/*
 * The stack of compact records of chain id made by the function of slot,
 * in the process p of the ring: the last one's while its modules are
 * unchanged; 0: none to give.
 */
static uint32_t chain_stack(struct ring_src *r, struct proc *p, uint64_t id, uint32_t slot,
			    uint64_t leaf, const uint64_t *pcs, unsigned n)
{
	struct chain_stack *cs;

	if (id >= r->nchain_stacks)	/* the new ones zeroed */
		r->chain_stacks = xgrowarray(r->chain_stacks, &r->nchain_stacks, id + 1,
					     sizeof(*r->chain_stacks));
	cs = &r->chain_stacks[id];
	if (cs->stack && cs->slot == slot && sink_stack_current(p->rec, cs->stamp))
		return cs->stack;
	cs->slot = slot;
	cs->stack = sink_walk_stack(p->rec, leaf, pcs, (int)n, &cs->stamp);
	return cs->stack;
}

/* One record, number seq: the event at time_ns (its call's), with the stack copy it carries. */
static void emit(struct ring_src *r, const uint8_t *rec, uint64_t seq, uint64_t time_ns)
{
	static struct stack_snapshot snap;	/* borrowing the record's stack copy */
	const struct probe *pr = detour_slot_cookie(r->ds, word(rec, R_DESC));
	int compact = (word(rec, R_DESC) & DC_COMPACT) != 0;
	uint64_t args[6] = { word(rec, R_ARG0), word(rec, R_ARG1), word(rec, R_ARG2),
			     compact ? 0 : word(rec, R_ARG3), compact ? 0 : word(rec, R_ARG4), 0 };
	const uint64_t *chain = NULL;
	unsigned nchain = 0;
	uint64_t ret, sp, since;
	int64_t copied;
	struct stack_snapshot *s = NULL;
	struct event ev;
	struct proc *p = r->p;
	pid_t tid = (pid_t)word(rec, R_TID);

	if (compact) {
		/* its first line only (stub-abi.h): the rest is an older record's */
		chain = detour_chain(r->ds, word(rec, R_TID) >> RC_CHAIN_SHIFT, &nchain);
		ret = chain ? chain[0] : 0;
		sp = 0;
		copied = 0;
	} else {
		ret = word(rec, R_RET);
		sp = word(rec, R_SP);
		copied = (int64_t)word(rec, R_COPIED);
	}

	if (!pr || (const void *)pr == &ring_sync_cookie || (const void *)pr == &ring_dl_cookie)
		return;
	for (int i = 0; i < RING_VFORKS; i++)
		if (r->vforks[i].child && r->vforks[i].tid == tid) {
			p = r->vforks[i].child;	/* made by the vfork child */
			tid = p->pid;
		}
	if (pr->role >= PR_MMAP) {
		/* a syscall wrapper: an event wherever it was called from */
		if (!r->hooks->wrapper(p, tid, pr, args, word(rec, R_RESULT), &ev))
			return;
	} else {
		/* a compact record's call: the stubs' nest table had every range */
		if (!compact && detour_nested(r->ds, ret)) {
			r->nested++;
			return;
		}
		ev = zero_event;	/* not memset: a rep stos, slower at this size */
		ev.pid = p->pid;
		ev.tid = tid;
		ev.comm = p->rec->comm;
		ev.time_ns = time_ns;
		if (!probe_fill_event(pr, args, word(rec, compact ? RC_RESULT : R_RESULT),
				      compact ? 0 : word(rec, R_WORD), &ev))
			return;
		if (detour_nested_counted(r->ds))
			ev.counted = probe_counted(pr);
		/* realloc: HEAD at its entry, 1 + the records reserved since */
		since = word(rec, R_DESC) >> DC_ENTRY_SHIFT & DC_ENTRY_MAX;
		ev.order = EV_ORDER_SEQ | seq;
		if (since && since < DC_ENTRY_MAX && since - 1 <= seq)
			ev.entered = EV_ORDER_SEQ | (seq - (since - 1));
	}
	ev.time_ns = time_ns;	/* a wrapper's too */
	ev.code = ring_code_of(&r->code, seq);
	ev.caller = ret;
	ev.leaf = detour_slot_func(r->ds, word(rec, R_DESC));
	ev.sample_mean = word(rec, compact ? RC_MEAN : R_MEAN);
	ev.release_only = (word(rec, R_DESC) & (DF_RELEASE << 24)) != 0;
	if (compact) {
		if (chain && sink_stacks_wanted() && sink_wants(p->rec, &ev) == SINK_RECORD) {
			if (p == r->p)
				ev.stack = chain_stack(r, p, word(rec, R_TID) >> RC_CHAIN_SHIFT,
						       (uint32_t)(word(rec, R_DESC) & 0xffff), ev.leaf,
						       chain, nchain);
			if (!ev.stack) {
				walked_pcs(&snap, p->pid, ev.tid, chain, nchain, ret);
				s = &snap;
			}
		}
	} else if (word(rec, R_WALK) != ~(uint64_t)0 && copied >= 0 && sink_stacks_wanted() &&
		   sink_wants(p->rec, &ev) == SINK_RECORD) {
		walked(r, rec, &snap, p->pid, ev.tid);
		s = &snap;
	} else if (copied > 8 && sink_stacks_wanted() && sink_wants(p->rec, &ev) == SINK_RECORD) {
		size_t len = (uint64_t)copied < r->r.rec_size - R_STACK ? (size_t)copied
									 : (size_t)(r->r.rec_size - R_STACK);

		/* the registers not set here stay 0, as the static was made */
		snap.pid = p->pid;
		snap.tid = ev.tid;
		arch_regs_from_record(&snap.regs, rec);
		snap.start = sp;
		snap.len = len;
		/* the record's own bytes: the sink is flushed before TAIL moves */
		snap.data = (unsigned char *)(uintptr_t)(rec + R_STACK);
		snap.cap = len;
		/* the copy asked for: a full one may be cut (unwind.h) */
		snap.asked = r->r.rec_size - R_STACK;
		snap.borrowed = 1;
		snap.pre = NULL;
		snap.npre = 0;
		snap.walked = 0;
		s = &snap;
	}
	source_emit_proc(p, &ev, s);
}

void ring_vfork(struct ring_src *r, pid_t tid, struct proc *child)
{
	ring_drain(r);	/* what came before is the parent's */
	for (int i = 0; i < RING_VFORKS; i++)
		if (!r->vforks[i].child) {
			r->vforks[i].tid = tid;
			r->vforks[i].child = child;
			return;
		}
}

void ring_vfork_end(struct ring_src *r, struct proc *child)
{
	for (int i = 0; i < RING_VFORKS; i++)
		if (r->vforks[i].child == child) {
			ring_drain(r);
			r->vforks[i].child = NULL;
		}
}

/*
 * Committed records from TAIL on, at most RING_BATCH: how many (0: none
 * with *head = HEAD), or -errno.  A shared ring's commits are read
 * where they are, and HEAD only when none was committed for RING_HEAD_NS
 * (*head = TAIL until then).
 */
static const uint8_t *batch_record(const struct ring_src *r, uint64_t j);

static long count_committed(struct ring_src *r, uint64_t *head)
{
	uint64_t n = RING_BATCH, k;
	int err;

	if (r->r.local) {
		for (k = 0; k < RING_BATCH; k++)
			if (__atomic_load_n((const uint64_t *)(const void *)(batch_record(r, k) + R_SEQ),
					    __ATOMIC_ACQUIRE) != r->tail + k + 1)
				break;
		if (k) {
			r->empty_since = 0;
			return (long)k;
		}
		if (!r->empty_since)
			r->empty_since = now_ns();
		if (now_ns() - r->empty_since < RING_HEAD_NS) {
			*head = r->tail;
			return 0;
		}
	}
	err = memio_read_all(r->r.pid, 0, r->r.data + D_HEAD, head, sizeof(*head));
	if (err < 0)
		return err;
	if (r->r.local || *head == r->tail)
		return 0;
	if (*head - r->tail < n)
		n = *head - r->tail;
	/* the R_SEQ words of the records */
	for (k = 0; k < n; k++) {
		r->segs[k].addr = r->r.ring + ((r->tail + k) & (r->r.nrec - 1)) * r->r.rec_size + R_SEQ;
		r->segs[k].buf = &r->commits[k];
		r->segs[k].len = sizeof(r->commits[k]);
	}
	err = memio_read_many(r->r.pid, r->segs, n);
	if (err < 0)
		return err;
	for (k = 0; k < n; k++)
		if (r->commits[k] != r->tail + k + 1)
			break;	/* reserved, not yet committed */
	return (long)k;
}

/* Record j of the batch from TAIL: in the shared ring, or as read_records() copied it. */
static const uint8_t *batch_record(const struct ring_src *r, uint64_t j)
{
	if (r->r.local)
		return (const uint8_t *)r->r.local + r->r.nrec * 8 +
		       ((r->tail + j) & (r->r.nrec - 1)) * r->r.rec_size;
	return r->recs + j * r->r.rec_size;
}

/*
 * Is rec (sequence number seq) _dl_debug_state's, to hold the ring at
 * (see ring.h)?  Once released, the same record is passed over.
 */
static int dl_hold(struct ring_src *r, const uint8_t *rec, uint64_t seq)
{
	if (word(rec, R_SEQ) != seq + 1 ||
	    detour_slot_cookie(r->ds, word(rec, R_DESC)) != (void *)&ring_dl_cookie)
		return 0;
	if (r->dl == DL_RELEASED && r->dl_seq == seq) {
		r->dl = DL_NONE;
		return 0;
	}
	r->dl = DL_HOLD;
	r->dl_seq = seq;
	r->dl_since = now_ns();
	if (!r->hooks->dl(r->p, (pid_t)word(rec, R_TID)))
		r->dl = DL_RELEASED;	/* no stop to wait for */
	return 1;
}

int ring_release(struct ring_src *r)
{
	if (r->dl != DL_HOLD)
		return 0;
	r->dl = DL_RELEASED;
	return 1;
}

/* One batch: how many records, or -errno. */
static long drain_batch(struct ring_src *r)
{
	uint64_t head = 0, time_ns;
	long k;
	int err, synced;

	if (r->dl == DL_HOLD) {
		if (now_ns() - r->dl_since < RING_HOLD_NS)
			return 0;
		r->dl = DL_RELEASED;	/* no stop came */
	}
	ring_code_read(&r->code, r->r.pid, r->r.data + D_HEAD, 0);
	k = count_committed(r, &head);
	if (k < 0)
		return k;
	if (k == 0) {
		uint64_t now = now_ns();

		if (head == r->tail)
			return 0;
		if (r->stuck_tail != r->tail + 1) {
			r->stuck_tail = r->tail + 1;
			r->stuck_since = now;
			return 0;
		}
		if (now - r->stuck_since < RING_STUCK_NS)
			return 0;
		r->skipped++;	/* never committed: skip it */
		r->tail++;
		goto write_tail;
	}
	err = r->r.local ? 0 : read_records(r, (uint64_t)k);
	if (err < 0)
		return err;
	ring_code_read(&r->code, r->r.pid, r->r.data + D_HEAD, 1);
	synced = detour_clock_sync(&r->r);
	time_ns = now_ns() - start_ns;
	detour_nested_refresh(r->ds);
	for (uint64_t j = 0; j < (uint64_t)k; j++) {
		const uint8_t *rec = batch_record(r, j);

		if (dl_hold(r, rec, r->tail + j)) {
			k = (long)j;	/* TAIL stays below it */
			break;
		}

		if (r->r.local && j + 4 < (uint64_t)k) {
			/* written by another CPU a moment ago: ask for it early (4
			   ahead, not 2: memtap's CPU time 347 against 362 ms, medians
			   of 25 runs of --exact on the loop with 4 threads); a
			   record's first line 8 ahead, the rest of a full one 4
			   ahead, once its first line says it is one */
			const uint8_t *next = batch_record(r, j + 4);

			if (j + 8 < (uint64_t)k)
				__builtin_prefetch(batch_record(r, j + 8));
			if (!(word(next, R_DESC) & DC_COMPACT)) {
				__builtin_prefetch(next + 64);
				__builtin_prefetch(next + 128);
				/* a walk's first return addresses, or a copy's top */
				__builtin_prefetch(next + R_STACK);
			} else if (r->r.clock) {
				__builtin_prefetch(next + RC_TIME);	/* its second line */
			}
		} else if (r->r.local && j == 0) {
			for (uint64_t i = 1; i < 8 && i < (uint64_t)k; i++)
				__builtin_prefetch(batch_record(r, i));
		}

		if (word(rec, R_SEQ) != r->tail + j + 1) {
			r->skipped++;
			continue;
		}
		if (word(rec, R_DESC) & DC_COMPACT)
			r->compact++;
		else if ((int64_t)word(rec, R_COPIED) > 0)
			r->copied += word(rec, R_COPIED);
		emit(r, rec, r->tail + j, detour_record_time(&r->r, synced, rec, time_ns));
	}
	/* the stacks are unwound from the records themselves: before they go back */
	sink_flush();
	r->tail += (uint64_t)k;
	r->records += (uint64_t)k;
write_tail:
	if (r->r.local) {
		/* the stubs read it with plain loads: records before it are done with */
		__atomic_store_n((uint64_t *)((uint8_t *)r->r.local + (r->r.tail - r->r.commit)),
				 r->tail, __ATOMIC_RELEASE);
		return k + 1;
	}
	err = memio_write(r->r.pid, 0, r->r.tail, &r->tail, sizeof(r->tail));
	return err < 0 ? err : k + 1;
}

int ring_drain(struct ring_src *r)
{
	uint64_t start = r->tail;
	long got;

	/*
	 * One lap at most: a target as fast as the drain must not starve the
	 * loop; a batch when a stop is asked for: the loop detaches first.
	 */
	while ((got = drain_batch(r)) > 0 && r->tail - start < r->r.nrec && !tracer_stop_pending())
		detour_sample_refill(r->ds, 0);
	if (got >= 0)
		detour_sample_refill(r->ds, 0);
	return got < 0 ? (int)got : 0;
}

/*
 * --overhead: at the end of a period, the mean for the next one.
 * cost_ns: memtap's CPU time per record drained over the period, all
 * rings together.
 */
static void budget_step(struct ring_src *r, uint64_t now, double cost_ns)
{
	struct detour_counts c;
	uint64_t cpu, mean;

	if (detour_read_counts(r->ds, NULL, &c) < 0 || procfs_cpu_ns(r->p->pid, &cpu) < 0)
		return;
	if (r->period_ns) {
		mean = sample_budget_update(&r->budget, c.bytes - r->period_bytes,
					    (double)(cpu - r->period_cpu),
					    r->records - r->period_records, cost_ns);
		if (mean != detour_sample_mean(r->ds)) {
			debug_msg("process %d: sampling mean %" PRIu64 " bytes (%.0f ns a record)",
				  r->p->pid, mean, r->budget.cost_ns);
			detour_sample_refill(r->ds, mean);
			note_mean(mean);
		}
	}
	r->period_ns = now;
	r->period_bytes = c.bytes;
	r->period_cpu = cpu;
	r->period_records = r->records;
}

/* --overhead: every BUDGET_PERIOD_NS, each sampled ring's next mean. */
static void budget_all(void)
{
	static uint64_t last_ns, records0;
	uint64_t now = now_ns(), records = 0;
	double cost = 0;

	if (now - last_ns < BUDGET_PERIOD_NS)
		return;
	for (struct ring_src *r = rings; r; r = r->next)
		records += r->records;
	if (last_ns && records > records0)
		cost = (double)busy_cpu / (double)(records - records0) + STUB_RECORD_NS;
	for (struct ring_src *r = rings; r; r = r->next)
		if (detour_sample_mean(r->ds))
			budget_step(r, now, cost);
	last_ns = now;
	records0 = records;
	busy_cpu = 0;
}

static void drain_all(void *self)
{
	uint64_t cpu0 = overhead > 0 ? thread_cpu_ns() : 0;
	int found = 0, busy = 0, full = 0;

	(void)self;
	for (struct ring_src *r = rings; r; r = r->next) {
		uint64_t before = r->records;

		if (r->pause_until && now_ns() < r->pause_until)
			continue;
		r->pause_until = 0;
		if (ring_drain(r) < 0)
			continue;
		found |= r->records != before;
		busy |= r->records - before >= RING_BUSY_MIN;
		full |= r->records - before >= RING_BATCH;
	}
	if (overhead > 0) {
		if (found) {
			sink_flush();	/* the unwinding, measured with the rest */
			busy_cpu += thread_cpu_ns() - cpu0;
		}
		budget_all();
	}
	/*
	 * A full batch or more: the stubs outrun RING_BUSY_NS, come back at
	 * once.  Busy until RING_IDLE_NS without a record: a drain that
	 * finds none may come while the stubs sleep on a full ring.
	 */
	if (busy)
		busy_ns = now_ns();
	next_ns = now_ns() + (full ? 0 : now_ns() - busy_ns < RING_IDLE_NS ? RING_BUSY_NS
									 : RING_IDLE_NS);
}

static uint64_t ring_next_ns(void *self)
{
	(void)self;
	return rings ? next_ns : 0;
}

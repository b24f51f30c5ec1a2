/*
 * faults.c - the page-fault source: -e faults, minor-faults and
 * major-faults, per thread, through the perf events of linux/perf.h
 * (a counting event and a sampling one for each kind).
 *
 * Every thread memtap traces gets its events when it is first known: a
 * new thread before it runs (its clone or fork event, or its first
 * stop), a seized one at attach.  The sampling fds are in one epoll fd,
 * which is the source's fd (readable when a sixteenth of a ring is
 * full), and the loop also drains every DRAIN_NS, so that a thread that
 * faults slowly has its samples unwound while their code is still
 * mapped.  A round reads at most DRAIN_MAX samples of a ring.
 * Each sample becomes an event (its page's bytes, its address) with its
 * own copy of the stack, handed to the sink without a stop.
 *
 * Exact totals: the counting event is never throttled and loses
 * nothing, the samples may be (ring full: PERF_RECORD_LOST; the
 * kernel's rate limit: THROTTLE), and with --fault-period N only one
 * fault in N is sampled.  So before each report and when a thread goes,
 * its count is read, and the faults not yet credited to a stack are
 * credited (fault_spread() of faults-credit.c): lost samples to the
 * stack sampled before the loss, the unsampled faults of --fault-period or throttling to the
 * stacks its samples had, in proportion to their samples (as
 * perf_sample_scale(), per thread): each thread's total is its exact
 * count, and the samples, losses and throttles are reported.
 *
 * Pacing: unwinding a sample costs memtap more than the fault costs the
 * target, so a thread that faults in a loop fills its ring faster than
 * it is read.  When a drain finds more than PACE_SAMPLES samples of one
 * thread, the thread is interrupted (PTRACE_INTERRUPT): at its
 * PTRACE_EVENT_STOP it is held until its ring is read to the end and
 * the sink has unwound what was read, then resumed.  The target only waits, as at
 * any ptrace stop; detaching resumes held threads like any other.
 * --exact adds tripwires that stop a thread before its ring fills
 * however late memtap is (faults-exact.h; faults_stop()).
 *
 * Weights: the page size of the mapping the fault is in: the base page,
 * or the huge page size of a hugetlb mapping (statfs of the mapping's
 * file through /proc/PID/map_files: hugetlbfs's block size); in a
 * mapping of base pages, the transparent huge page or large folio that
 * maps the address when the sample is read (linux/thp.h).  A sample
 * can be read before its fault is served (clearing a huge page takes
 * a while): it weighs the base page, and its address is asked again at
 * the next rounds (pending_check()), for PENDING_NS at most, the
 * difference added to its stack once the page is there.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>

#include "linux/features.h"
#include "linux/hugepages.h"
#include "linux/perf.h"
#include "linux/thp.h"
#include "stack/unwind/snapshot-perf.h"
#include "stack/stacks.h"
#include "stack/unwind/unwind.h"
#include "trace/emit.h"
#include "trace/faults.h"
#include "trace/faults-exact.h"
#include "trace/faults-int.h"
#include "trace/source.h"
#include "trace/tracer.h"
#include "util/error.h"
#include "util/optparse.h"
#include "util/xmalloc.h"

#define DRAIN_NS (10 * 1000000ull)
/*
 * Rings: 16 MiB (about 3,800 samples with 4 KiB stack copies) for each
 * of the first 16 threads with events at a time, 4 MiB for the others;
 * smaller where the locked-memory limit says so (perf.c).
 */
#define RING_BIG (16u << 20)
#define RING_BIG_THREADS 16
/* The stack copied per sample without --stack-size: perf record's. */
#define FAULT_STACK_DEFAULT 8192
#define PACE_SAMPLES 32
/* A sample's bytes besides its stack copy (about: header, regs, sizes) */
#define SAMPLE_HEAD 256
#define DRAIN_MAX 512
#define NKINDS PERF_FAULTS_NKINDS
#define PENDING_NS (200 * 1000000ull)
#define PENDING_MAX 4096

/* A sample whose page was not there yet when it was read. */
struct pending {
	struct fault_kind *fk;
	pid_t pid;
	uint32_t stack;
	uint64_t addr, since_ns;
};

static struct {
	unsigned kinds;		/* EV_BIT() of the fault kinds of -e */
	struct perf_fault_config pc;
	int epfd;
	int refused;		/* said why once; no events from then on */
	int pace;		/* PTRACE_INTERRUPT is there */
	int exact;		/* --exact: tripwires (faults_stop()) */
	size_t nthreads;	/* threads with events */
	int discard;		/* samples of memtap's child before the command */
	size_t ring_pages;	/* MEMTAP_FAULT_RING (tests): pages per ring, 0: ours */
	uint64_t next_ns;
	struct fault_thread *head;
	struct stack_snapshot snap;	/* a buffer the sink swaps */
	struct pending *pending;
	size_t npending;
} fs = { .epfd = -1 };

static enum perf_fault_kind perf_kind(enum event_kind k)
{
	return k == EV_MINOR_FAULTS ? PERF_FAULTS_MINOR :
	       k == EV_MAJOR_FAULTS ? PERF_FAULTS_MAJOR : PERF_FAULTS_ALL;
}

/*
 * The stack a sample was recorded on (sink_take_stacked()), in the
 * ring's order.  The samples lost just before it (args[2]) weigh on the
 * stack of the sample before them: the ring filled up while the thread
 * was there, in a loop most likely, and the next sample that fitted may
 * be far from it.
 */
static void on_stacked(const struct event *ev, uint32_t stack, struct fault_kind *fk)
{
	struct fault_stack *s = fault_stack_slot(fk, stack);
	uint64_t lost = ev->args[2];

	s->samples++;
	s->units += (uint64_t)ev->size / UNIT;
	if (!fk->samples++) {
		fk->last_stack = stack;
		fk->last_page = (uint64_t)ev->size;
	}
	if (lost && fk->ft->tcp->proc)
		fault_neighbour_weight(fk->ft->tcp->proc->rec, fk, lost, lost * fk->last_page);
	fk->last_stack = stack;
	fk->last_page = (uint64_t)ev->size;
	if (ev->args[3] && fs.npending < PENDING_MAX) {
		if (!fs.pending)
			fs.pending = xcalloc(PENDING_MAX, sizeof(*fs.pending));
		fs.pending[fs.npending++] = (struct pending){
			.fk = fk, .pid = ev->pid, .stack = stack, .addr = ev->addr,
			.since_ns = now_ns(),
		};
	}
}

/*
 * The stacks of the samples the sink recorded so far: before anything
 * that reads a kind's stacks, its pending samples or its totals, and
 * before a thread's kinds are freed (the tags are struct fault_kind).
 */
static void take_stacked(void)
{
	size_t n;
	const struct sink_stacked *st = sink_take_stacked(&n);

	for (size_t i = 0; i < n; i++)
		on_stacked(&st[i].ev, st[i].stack, st[i].ev.stack_tag);
}

/*
 * The samples whose pages were not there yet: the bytes their faults
 * brought in beyond the base page, once their pages are there; given
 * up after PENDING_NS (the fault failed or the page went).  final:
 * now or never (a thread goes, an exec); only: those of one kind of
 * one thread, else all (of process pid, if not 0).
 */
static void pending_check(const struct fault_kind *only, pid_t pid, int final)
{
	uint64_t now = now_ns(), base = hugepages_base_size();
	size_t kept = 0;

	for (size_t i = 0; i < fs.npending; i++) {
		struct pending *p = &fs.pending[i];
		struct fault_kind *fk = p->fk;
		struct thread *tcp = fk->ft->tcp;
		uint64_t size;

		if ((only && fk != only) || (pid && p->pid != pid)) {
			fs.pending[kept++] = *p;
			continue;
		}
		size = tcp->proc && !tcp->proc->unfollowed && tcp->proc->pid == p->pid ?
		       hugepages_fault_size(p->pid, p->addr) : base;
		if (size == THP_NOT_PRESENT && !final && now - p->since_ns < PENDING_NS) {
			fs.pending[kept++] = *p;
			continue;
		}
		if (size > base) {
			struct fault_stack *s = fault_stack_slot(fk, p->stack);

			s->units += (size - base) / UNIT;
			sink_add_weight(tcp->proc->rec, fk->kind, p->stack, 0, size - base);
		}
	}
	fs.npending = kept;
}

/* ---- reading the rings ---- */

static void on_sample(const struct perf_sample *s, void *arg)
{
	struct fault_kind *fk = arg;
	struct thread *tcp = fk->ft->tcp;
	struct stack_snapshot *snap = NULL;
	struct event ev;

	uint64_t lost = fk->pt.lost - fk->lost_seen;

	/* the lost records come before the next sample that fits */
	fk->lost_seen = fk->pt.lost;
	fk->credited += 1 + lost;
	/* memtap's child before the command: drained in a round before its
	   exec as at the exec (faults_exec()) */
	if (!tcp->proc || tcp->proc->unfollowed || fs.discard ||
	    tracer_before_command_exec(tcp->proc->pid))
		return;
	source_event_init(&ev, tcp);
	ev.kind = fk->kind;
	ev.call = event_kind_names[fk->kind];
	ev.addr = s->addr;
	ev.size = (int64_t)hugepages_fault_size(tcp->proc->pid, s->addr);
	ev.args[0] = s->addr;
	ev.args[1] = s->ip;
	ev.args[2] = lost;
	if (ev.size == (int64_t)THP_NOT_PRESENT) {
		ev.size = (int64_t)hugepages_base_size();
		ev.args[3] = 1;	/* ask again: on_stacked() */
	}
	ev.stack_tag = fk;
	if (sink_stacks_wanted()) {
		stack_snapshot_from_perf(&fs.snap, tcp->proc->pid, s);
		snap = &fs.snap;
	}
	source_emit_snapshot(tcp, &ev, snap);
}

/*
 * Read the rings of ft, at most max samples of each (0: all); returns
 * the samples read, *left whether some were left.
 */
static uint64_t thread_drain(struct fault_thread *ft, uint64_t max, int *left)
{
	uint64_t n = 0;
	size_t slack = 2 * (fs.pc.stack_bytes + 1024);

	for (int i = 0; i < ft->nkinds; i++) {
		struct fault_kind *fk = &ft->k[i];

		n += perf_thread_drain(&fk->pt, max, on_sample, fk);
		if (fk->pt.fill + slack >= fk->pt.data_size)
			fk->full_seen = 1;
		if (left && fk->pt.left)
			*left = 1;
	}
	return n;
}

/* Bring ft's totals to its counts: samples, losses, the spread. */
static void thread_settle(struct fault_thread *ft, int final)
{
	struct thread *tcp = ft->tcp;

	for (int i = 0; i < ft->nkinds; i++) {
		struct fault_kind *fk = &ft->k[i];
		struct perf_thread *pt = &fk->pt;
		uint64_t count;

		if (!tcp->proc || tcp->proc->unfollowed || perf_thread_count(pt, &count) < 0)
			continue;
		/* samples lost after the last sample read: no stack to put them on */
		uint64_t lost = pt->lost - fk->lost_seen;

		fk->lost_seen = pt->lost;
		if (sink_recording())
			sink_add_samples(tcp->proc->rec, fk->kind, pt->samples - fk->said_samples,
					 pt->lost - fk->said_lost, pt->throttles - fk->said_throttles);
		fk->said_samples = pt->samples;
		fk->said_lost = pt->lost;
		fk->said_throttles = pt->throttles;
		fault_spread(fk, tcp->proc->rec, count, lost, final, fs.pc.period);
	}
}

/* Pacing: stop ft at its next PTRACE_EVENT_STOP (faults_hold()). */
static void interrupt(struct fault_thread *ft)
{
	const struct thread *tcp = ft->tcp;

	if (fs.pace && !tracer_detaching() &&
	    !(tcp->flags & (T_STOPPED | T_LISTENING | T_DETACHING | T_HELD)) &&
	    ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) == 0)
		ft->interrupted = 1;
}

/* The bytes in ft's rings not read yet. */
static uint64_t thread_unread(const struct fault_thread *ft)
{
	uint64_t n = 0;

	for (int i = 0; i < ft->nkinds; i++)
		n += perf_thread_unread(&ft->k[i].pt);
	return n;
}

/*
 * Each round reads at most DRAIN_MAX samples of a ring, so that the
 * round's unwinding stays short and the loop soon looks at every ring
 * again (a thread that starts faulting while memtap unwinds another's
 * samples would fill its ring unseen); what is left is read from the
 * next round on, at once.
 */
static void faults_drain(void *self)
{
	int left = 0;

	(void)self;
	/* first the threads that fault fast: they run on while memtap reads */
	for (struct fault_thread *ft = fs.head; ft; ft = ft->next)
		if (thread_unread(ft) > PACE_SAMPLES * (fs.pc.stack_bytes + SAMPLE_HEAD)) {
			interrupt(ft);
			if (fs.exact && !ft->trip_told &&
			    thread_unread(ft) > ft->k[0].pt.data_size / 2)
				ft->trip_told = fault_trip_blocked(ft->tcp->tid);
		}
	thp_new_round();
	take_stacked();
	pending_check(NULL, 0, 0);
	for (struct fault_thread *ft = fs.head; ft; ft = ft->next) {
		int ft_left = 0;
		uint64_t n;

		if (tracer_stop_pending()) {
			left = 1;	/* the loop detaches first: the rest later */
			break;
		}
		n = thread_drain(ft, DRAIN_MAX, &ft_left);

		if (n > PACE_SAMPLES || ft_left)
			interrupt(ft);
		left |= ft_left;
	}
	fs.next_ns = !fs.head ? 0 : left ? now_ns() : now_ns() + DRAIN_NS;
}

static int faults_fd(void *self)
{
	(void)self;
	return fs.head ? fs.epfd : -1;
}

static uint64_t faults_next_ns(void *self)
{
	(void)self;
	return fs.head ? fs.next_ns : 0;
}

/*
 * Before a report: the samples so far, and the counts.  At period 1 the
 * rings are read as in a round (the rest comes in the next report: a
 * long unwinding here would let the other threads' rings fill unseen);
 * with --fault-period, all of it, as the spread scales to the count.
 */
static void faults_settle(void *self)
{
	(void)self;
	for (struct fault_thread *ft = fs.head; ft; ft = ft->next)
		thread_drain(ft, fs.pc.period == 1 ? DRAIN_MAX : 0, NULL);
	sink_flush();
	take_stacked();
	pending_check(NULL, 0, 0);
	for (struct fault_thread *ft = fs.head; ft; ft = ft->next)
		thread_settle(ft, 0);
}

/* ---- the tracer's calls (source.h) ---- */

/* Say once why the kernel refused, and open no more events. */
static void refuse(const struct fault_thread *ft, int err)
{
	if (ft->tcp->proc && ft->tcp->proc->unfollowed)
		return;
	fs.refused = 1;
	if (fs.head)
		warn_msg("-e faults: %s: page faults of thread %d and of later threads are "
			 "not traced", perf_open_reason(err), ft->tcp->tid);
	else
		warn_msg("-e faults: %s: page faults are not traced", perf_open_reason(err));
}

static void faults_thread_new(void *self, struct thread *tcp)
{
	struct fault_thread *ft;
	struct epoll_event ee = { .events = EPOLLIN };

	(void)self;
	if (!fs.kinds || fs.refused || tcp->faults || (tcp->proc && tcp->proc->unfollowed))
		return;
	ft = xcalloc(1, sizeof(*ft));
	ft->tcp = tcp;
	for (int k = EV_FAULTS; k <= EV_MAJOR_FAULTS; k++) {
		struct fault_kind *fk = &ft->k[ft->nkinds];

		if (!(fs.kinds & EV_BIT(k)))
			continue;
		fk->ft = ft;
		fk->kind = (enum event_kind)k;
		fs.pc.kind = perf_kind(fk->kind);
		fs.pc.ring_bytes = fs.ring_pages ? fs.ring_pages * hugepages_base_size() :
				   fs.nthreads < RING_BIG_THREADS ? RING_BIG : PERF_RING_DEFAULT;
		/* early, so that memtap runs before the ring is full even when late */
		fs.pc.wakeup_bytes = fs.pc.ring_bytes / 16;
		if (perf_thread_open(&fk->pt, tcp->tid, &fs.pc) < 0 ||
		    epoll_ctl(fs.epfd, EPOLL_CTL_ADD, fk->pt.sample_fd, &ee) < 0) {
			int err = errno;

			if (fk->pt.sample_fd >= 0)
				perf_thread_close(&fk->pt);
			for (int i = 0; i < ft->nkinds; i++)
				perf_thread_close(&ft->k[i].pt);
			if (err != ESRCH)
				refuse(ft, err);
			free(ft);
			return;
		}
		ft->nkinds++;
	}
	for (int i = 0; fs.exact && i < ft->nkinds; i++)
		fault_trip_arm(&ft->k[i].pt, perf_kind(ft->k[i].kind),
			       fs.pc.stack_bytes + SAMPLE_HEAD, event_kind_names[ft->k[i].kind]);
	ft->next = fs.head;
	if (fs.head)
		fs.head->prevp = &ft->next;
	ft->prevp = &fs.head;
	fs.head = ft;
	tcp->faults = ft;
	fs.nthreads++;
	if (!fs.next_ns)
		fs.next_ns = now_ns() + DRAIN_NS;
}

static void faults_thread_exit(void *self, struct thread *tcp)
{
	struct fault_thread *ft = tcp->faults;

	(void)self;
	if (!ft)
		return;
	thread_drain(ft, 0, NULL);
	sink_flush();
	take_stacked();
	for (int i = 0; i < ft->nkinds; i++)
		pending_check(&ft->k[i], 0, 1);
}

static void faults_thread_gone(void *self, struct thread *tcp)
{
	struct fault_thread *ft = tcp->faults;

	if (!ft)
		return;
	faults_thread_exit(self, tcp);	/* its last samples */
	thread_settle(ft, 1);
	if (fs.exact)
		debug_msg("faults: thread %d: %" PRIu64 " tripwire stops", tcp->tid, ft->trip_stops);
	for (int i = 0; i < ft->nkinds; i++) {
		perf_thread_close(&ft->k[i].pt);
		free(ft->k[i].stacks);
	}
	*ft->prevp = ft->next;
	if (ft->next)
		ft->next->prevp = ft->prevp;
	tcp->faults = NULL;
	fs.nthreads--;
	free(ft);
}

/* Not at the launched command's first execve: what came before is memtap's child. */
static void faults_execve_entry(void *self, struct thread *tcp)
{
	pid_t pid = tcp->proc->pid;
	int any = 0;

	(void)self;
	if (tracer_before_command_exec(pid))
		return;
	for (struct fault_thread *ft = fs.head; ft; ft = ft->next)
		if (ft->tcp->proc && ft->tcp->proc->pid == pid) {
			thread_drain(ft, 0, NULL);
			any = 1;
		}
	if (!any)
		return;
	sink_flush();
	take_stacked();
	pending_check(NULL, pid, 1);
}

/* The launched command's first exec: what came before is memtap's child's. */
static void faults_exec(void *self, pid_t pid)
{
	int discard = tracer_before_command_exec(pid);

	(void)self;
	fs.discard = discard;
	for (struct fault_thread *ft = fs.head; ft; ft = ft->next)
		thread_drain(ft, 0, NULL);
	fs.discard = 0;
	sink_flush();
	take_stacked();
	pending_check(NULL, 0, 1);
	hugepages_release();
	for (struct fault_thread *ft = fs.head; discard && ft; ft = ft->next)
		for (int i = 0; i < ft->nkinds; i++) {
			struct fault_kind *fk = &ft->k[i];
			uint64_t count;

			if (perf_thread_count(&fk->pt, &count) == 0)
				fk->credited = count;
			fk->said_samples = fk->pt.samples;
			fk->said_lost = fk->lost_seen = fk->pt.lost;
			fk->said_throttles = fk->pt.throttles;
		}
}

static int faults_hold(void *self, struct thread *tcp)
{
	struct fault_thread *ft = tcp->faults;

	(void)self;
	if (!ft || !ft->interrupted || tracer_detaching())
		return 0;
	ft->interrupted = 0;
	ft->held = 1;
	tcp->flags |= T_PARKED | T_GOOD_STOP;
	return 1;
}

/* Are samples of ft left in a ring after the last drain? */
static int samples_left(const struct fault_thread *ft)
{
	for (int i = 0; i < ft->nkinds; i++)
		if (ft->k[i].pt.left)
			return 1;
	return 0;
}

static void faults_round_end(void *self)
{
	(void)self;
	for (struct fault_thread *ft = fs.head; ft; ft = ft->next) {
		/* held until memtap has caught up with its ring */
		if (!ft->held || (samples_left(ft) && !tracer_detaching()))
			continue;
		ft->held = 0;
		if (ft->tcp->flags & T_STOPPED)
			tracer_resume(ft->tcp, 0);
	}
}

/*
 * --exact: a signal-delivery-stop of one of ft's tripwires
 * (trace/faults-exact.h) is suppressed once its rings are read to the
 * end; any other stop with TRIP_SIG reads them too (the thread is
 * stopped: a TRIP_SIG of someone else's pending may have swallowed
 * ours, non-realtime signals being queued once) and is delivered.
 */
static enum stop_verdict faults_stop(void *self, struct thread *tcp, int status)
{
	struct fault_thread *ft = tcp->faults;
	siginfo_t si;
	int mine = 0;

	(void)self;
	if (!ft || !fs.exact || !fault_trip_signal(tcp->tid, status, &si))
		return STOP_NOT_MINE;
	for (int i = 0; i < ft->nkinds; i++)
		mine |= fault_trip_mine(&ft->k[i].pt, &si);
	thread_drain(ft, 0, NULL);
	if (!mine)
		return STOP_NOT_MINE;
	ft->trip_stops++;
	return STOP_RESUME;
}

/*
 * Detaching: ft's tripwires send no more, and one of their signals
 * still queued for tcp is taken out (faults_stop()) before it goes.
 */
static int faults_release(void *self, struct thread *tcp)
{
	struct fault_thread *ft = tcp->faults;
	int queued = 0;

	(void)self;
	for (int i = 0; ft && i < ft->nkinds; i++) {
		perf_thread_tripwire_end(&ft->k[i].pt);
		queued |= fault_trip_queued(tcp->tid, &ft->k[i].pt);
	}
	return queued;
}

static void faults_detach(void *self)
{
	while (fs.head)
		faults_thread_gone(self, fs.head->tcp);
	if (fs.epfd >= 0)
		close(fs.epfd);
	fs.epfd = -1;
	stack_snapshot_release(&fs.snap);
	free(fs.pending);
	fs.pending = NULL;
	fs.npending = 0;
	hugepages_release();
}

static const struct source_ops faults_ops = {
	.name = "faults",
	.fd = faults_fd,
	.next_drain_ns = faults_next_ns,
	.drain = faults_drain,
	.stop = faults_stop,
	.release = faults_release,
	.detach = faults_detach,
	.settle = faults_settle,
	.thread_new = faults_thread_new,
	.thread_exit = faults_thread_exit,
	.thread_gone = faults_thread_gone,
	.hold = faults_hold,
	.round_end = faults_round_end,
	.execve_entry = faults_execve_entry,
	.exec = faults_exec,
};

void faults_init(const struct trace_config *cfg)
{
	const char *env;

	fs.kinds = cfg->events & EV_FAULT_KINDS;
	if (!fs.kinds)
		return;
	fs.pc.period = cfg->fault_period ? cfg->fault_period : 1;
	fs.exact = cfg->fault_exact;
	fs.pc.stack_bytes = !sink_stacks_wanted() ? 0 : cfg->fault_stack ? cfg->fault_stack :
			    FAULT_STACK_DEFAULT;
	if (fs.pc.stack_bytes > PERF_STACK_MAX)
		fs.pc.stack_bytes = PERF_STACK_MAX;

	fs.pace = feature_has(F_SEIZE);
	/* for the tests: rings so small that samples are lost */
	if ((env = getenv("MEMTAP_FAULT_RING")) && *env) {
		long pages;

		if (parse_whole(env, 1, 1 << 16, &pages) < 0 || (pages & (pages - 1)))
			warn_msg("MEMTAP_FAULT_RING=%s: not a power of two of pages: ignored", env);
		else
			fs.ring_pages = (size_t)pages;
	}
	if (!feature_has(F_PERF)) {
		warn_msg("-e faults: perf events are off (MEMTAP_DISABLE=perf): page faults "
			 "are not traced");
		fs.refused = 1;
		return;
	}
	fs.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (fs.epfd < 0) {
		warn_msg("-e faults: epoll_create1: %s: page faults are not traced",
			 strerror(errno));
		fs.refused = 1;
		return;
	}
	source_register(&faults_ops, NULL);
}

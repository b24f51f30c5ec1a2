/*
 * perf.h - page faults of one thread through perf_event_open(2)
 * software events (perf.c): the events, their ring buffer, its records.
 *
 * For each traced thread two events are opened, per thread (pid = tid,
 * cpu = -1, no inherit: the tracer opens them for every new thread
 * while it is stopped at its creation, before it runs):
 *
 *   count   a counting event (no sampling).  read() gives the exact
 *           number of faults since it was opened: a counting event is
 *           never throttled, and it has no records to lose.
 *   sample  the same software event sampled every `period` faults with
 *           PERF_SAMPLE_TID | TIME | IP | ADDR | REGS_USER | STACK_USER
 *           (Linux >= 3.7): the user registers and a copy of the top of
 *           the user stack, which stack/unwind/snapshot-perf.c turns into a
 *           struct stack_snapshot for the unwinders.
 *
 * Two events, not one: a throttled software event stops counting
 * (pmu->stop) until it is unthrottled, and recent kernels throttle a
 * whole group at once, so the count comes from an event of its own.
 * Samples give the stacks; the count gives the total.  A reader that
 * lost samples (PERF_RECORD_LOST: the ring was full; THROTTLE: the
 * kernel's sample-rate limit, perf_event_max_sample_rate and the CPU
 * time limit) scales them to the count: each sample of the thread
 * weighs count / samples faults.  The losses are counted, never hidden.
 *
 * Pacing: none is possible.  A ring is a few MiB and a sample carries a
 * stack copy of several KiB, so a thread faulting in a loop can fill it
 * faster than a reader drains it, and perf has no way to hold the
 * thread.  Signals cannot do it: with O_ASYNC the kernel signals every
 * overflow, not the watermark; worse, a signal pending at a fault that
 * must be retried (VM_FAULT_RETRY, as with per-VMA locks) aborts it, the
 * retried fault is a new page-faults event with a new signal, and the
 * thread livelocks (seen on Linux 6.18 in the loader's first faults).
 * So the ring is sized to the work (PERF_RING_DEFAULT; larger rings for
 * root, whose locked memory is not limited), the reader drains it
 * often, and what is lost is counted and compensated by the scale.
 * A third event can (perf_thread_tripwire(), memtap --exact): sampled
 * every N faults with no ring, O_ASYNC to the thread, it signals one
 * fault in N, so the retried fault of one aborted brings no new signal.
 * Such a fault (VM_FAULT_RETRY with the signal pending: a file page
 * being read in, a first fault in an anonymous mapping under the
 * per-VMA lock) is counted, and sampled, twice.
 *
 * How the tracer plugs it in (trace/faults.c, with the source interface
 * of trace/source.h; what it does beyond this plan is said there):
 *   - one source "faults": its fd() is an epoll fd over the threads'
 *     sample fds (each is readable when its ring is half full: the
 *     watermark), and its drain() reads every thread's ring; the loop
 *     also calls it at next_drain_ns() (a few ms) so that a thread
 *     faulting slowly has its samples unwound soon, while the code they
 *     point to is still mapped.  Samples are copied out of the ring at
 *     once and unwound after, so the ring is freed first.
 *   - clone: at PTRACE_EVENT_CLONE (or the new thread's first stop,
 *     whichever comes first) open the events of the new tid; the
 *     thread has run no user instruction yet.  fork/vfork: the same
 *     for the child, with its own modules and unwinder.
 *   - exec: drain every ring of the process at the execve entry stop
 *     (the samples' code is the old image's), then mark the modules
 *     changed at PTRACE_EVENT_EXEC; the leader's events survive exec,
 *     the other threads' report their exit.
 *   - thread exit: drain, read the count (read() works after the exit:
 *     the event keeps its final count), close.
 *   - attach mode: open the events of every thread of the process at
 *     attach (while each is stopped); faults before attach are not
 *     counted.  Detach: drain, read, close, so no event outlives it.
 *   - weight: the faulted page's size is the mapping's page size: 4 KiB,
 *     the huge page size of a hugetlb mapping, 2 MiB for a fault that
 *     the kernel served with a transparent huge page (record/maptrack
 *     knows the mappings; phase 2).
 *
 * Kernel features, probed at open time (never by version):
 *   perf_event_open         ENOSYS/ENOENT: -e faults is unavailable
 *   PERF_COUNT_SW_PAGE_FAULTS_{MIN,MAJ}  Linux >= 2.6.33
 *   REGS_USER, STACK_USER   Linux >= 3.7: EINVAL before; the engine
 *                           retries with IP only (stacks of one frame)
 *   exclude_kernel = 0      faults taken in the kernel on user memory
 *                           (read() into a fresh buffer) are counted;
 *                           refused for unprivileged users when
 *                           perf_event_paranoid >= 2: retried with
 *                           exclude_kernel = 1 (such faults are then
 *                           missed, perf_thread.user_only says so)
 *   data_offset/data_size   Linux >= 4.1; before, the data area
 *                           follows the first page
 */
#ifndef MEMTAP_PERF_H
#define MEMTAP_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

enum perf_fault_kind {
	PERF_FAULTS_ALL,	/* -e faults: every fault taken */
	PERF_FAULTS_MINOR,	/* -e minor-faults */
	PERF_FAULTS_MAJOR,	/* -e major-faults */
	PERF_FAULTS_NKINDS
};

/* "faults", "minor-faults", "major-faults"; -1 for another name. */
int perf_fault_kind_from_name(const char *name);
const char *perf_fault_kind_name(enum perf_fault_kind kind);

/* Largest stack copy a sample may carry (the record's size is a u16). */
#define PERF_STACK_MAX 65000
#define PERF_STACK_DEFAULT (16 * 1024)
#define PERF_RING_DEFAULT (4u << 20)

struct perf_fault_config {
	enum perf_fault_kind kind;
	uint64_t period;	/* sample one fault in period (>= 1) */
	size_t stack_bytes;	/* user stack copied per sample, <= PERF_STACK_MAX */
	size_t ring_bytes;	/* data area: a power of two of pages */
	size_t wakeup_bytes;	/* poll() wakes when this much is in the ring;
				   0 = half of it */
};

/*
 * The user registers of a sample are the arch's (arch/arch.h): those of
 * ARCH_PERF_REGS_MASK, in perf's order for the CPU, ARCH_PERF_NREGS at
 * most; arch_regs_from_perf() reads them.
 */

/* One sample, valid during the perf_thread_drain() callback only. */
struct perf_sample {
	pid_t pid, tid;
	uint64_t time;		/* perf clock (local_clock) ns */
	uint64_t ip;		/* where the fault was taken (kernel ip if there) */
	uint64_t addr;		/* the faulting address */
	int have_regs;		/* 0: no user registers (abi NONE) */
	uint64_t regs[ARCH_PERF_NREGS];	/* by perf's number; those not asked for are 0 */
	const unsigned char *stack;	/* copy of [the sample's sp, + stack_len) */
	size_t stack_len;	/* bytes the kernel could copy (dyn_size) */
};

struct perf_thread {
	pid_t tid;
	int count_fd, sample_fd;	/* -1 when closed */
	int user_only;		/* exclude_kernel had to be set */
	int regs_stack;		/* samples carry registers and stack */
	uint64_t period;
	uint64_t sample_type, regs_mask;
	size_t stack_bytes;
	void *ring;		/* the mmapped control page + data */
	size_t ring_len;	/* bytes mapped */
	unsigned char *data;	/* data area */
	uint64_t data_size;	/* power of two */
	unsigned char *wrap;	/* a record that wraps the ring, copied */
	size_t wrap_cap;
	/* what the reader saw */
	uint64_t samples;	/* PERF_RECORD_SAMPLE */
	uint64_t lost;		/* samples lost (PERF_RECORD_LOST counts) */
	uint64_t lost_records;	/* PERF_RECORD_LOST records */
	uint64_t throttles, unthrottles;
	uint64_t bad;		/* records not understood (skipped) */
	uint64_t fill;		/* the most bytes in the ring during the last drain */
	uint64_t left;		/* and when it ended (its max reached) */
	/* the tripwire (perf_thread_tripwire()), -1 when none */
	int trip_fd;
	int trip_ended;		/* its fd number once perf_thread_tripwire_end() closed it, -1 */
	uint64_t trip_every;	/* faults between two of its signals */
};

/*
 * Open the events of thread tid with config c: 0, or -1 with errno set
 * (perf_open_reason() says why in one line).  pt is filled; on error
 * nothing stays open.
 */
int perf_thread_open(struct perf_thread *pt, pid_t tid, const struct perf_fault_config *c);

/*
 * Why perf_thread_open() failed with err, one line for the user:
 * perf_event_paranoid and the capability it needs (EACCES/EPERM), no
 * perf events in this kernel (ENOSYS/ENOENT), the ring's locked memory
 * (EPERM/ENOMEM at mmap), ...  Reads /proc/sys/kernel/perf_event_paranoid.
 */
const char *perf_open_reason(int err);

typedef void perf_sample_fn(const struct perf_sample *s, void *arg);

/*
 * Read the records in the ring: fn for each sample, the counters of pt
 * for the others; then free the space.  At most max samples (0: every
 * record); pt->left says how many bytes were left.  Returns the number
 * of samples read.  Never blocks.
 */
uint64_t perf_thread_drain(struct perf_thread *pt, uint64_t max, perf_sample_fn *fn, void *arg);

/* The bytes written to the ring and not read yet (no record is read). */
uint64_t perf_thread_unread(const struct perf_thread *pt);

/* The exact number of faults since the open: 0, or -1 (errno). */
int perf_thread_count(const struct perf_thread *pt, uint64_t *count);

/*
 * The weight of one sample in faults, to scale the samples to the
 * count: count / samples (1 when nothing was lost at period 1; period
 * when one fault in period was sampled and nothing lost).
 */
double perf_sample_scale(const struct perf_thread *pt, uint64_t count);

/*
 * The tripwire: a third event of the same kind on the same thread,
 * sampled every `every` faults, with no ring, in O_ASYNC mode owned by
 * the thread itself (F_SETOWN_EX F_OWNER_TID) with F_SETSIG sig: every
 * `every` faults the kernel queues sig to the faulting thread (si_code
 * POLL_IN, si_fd pt->trip_fd), which a tracer sees as a
 * signal-delivery-stop on the thread's way back to user mode, the
 * thread's ring then holding at most `every` samples more than at the
 * last stop.  Not O_ASYNC on the sampling fd: the kernel signals every
 * sample there, not its wakeup watermark.  sig should be one whose
 * default action is to ignore: a signal still queued when the tracer
 * dies is the target's.  0, or -1 with errno set (nothing stays open).
 */
int perf_thread_tripwire(struct perf_thread *pt, enum perf_fault_kind kind, uint64_t every,
			 int sig);

/*
 * Is the siginfo (si_signo, si_code, si_fd) one of pt's tripwire?  A
 * signal sent with kill(), tgkill() or sigqueue() never is: only the
 * kernel sends POLL_IN, and to another process only for a file it owns.
 */
int perf_thread_is_tripwire(const struct perf_thread *pt, int signo, int code, int fd,
			    int sig);

/* The tripwire sends no more signals (O_ASYNC off); its fd stays, to
   tell its signals already queued (perf_thread_is_tripwire()). */
void perf_thread_tripwire_quiet(struct perf_thread *pt);
/*
 * The tripwire ends (detaching): O_ASYNC off, then closed, which waits
 * for a signal the kernel was still sending (a perf event's signal goes
 * out after the overflow, from the kernel's deferred work): every
 * signal of it is queued by the time this returns, and is still told
 * as its own by the fd number it had.
 */
void perf_thread_tripwire_end(struct perf_thread *pt);

/* Close the tripwire alone (O_ASYNC off first: no signal after it). */
void perf_thread_tripwire_close(struct perf_thread *pt);

/* Unmap the ring and close the fds (drain and count first). */
void perf_thread_close(struct perf_thread *pt);

#endif /* MEMTAP_PERF_H */

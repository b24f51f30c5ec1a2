/*
 * faults-exact.c - --exact for -e faults: the tripwires that stop a
 * thread before its perf ring fills.  See faults-exact.h.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "linux/procfs.h"
#include "trace/faults-exact.h"
#include "util/error.h"

/* A quarter of the ring's samples between two stops: the rest is headroom. */
#define TRIP_SHARE 4

static int refused;	/* said once why a tripwire could not be set */

uint64_t fault_trip_every(const struct perf_thread *pt, size_t sample_bytes)
{
	uint64_t n = pt->data_size / TRIP_SHARE / (sample_bytes ? sample_bytes : 1);

	return n ? n : 1;
}

int fault_trip_arm(struct perf_thread *pt, enum perf_fault_kind kind, size_t sample_bytes,
		   const char *name)
{
	if (perf_thread_tripwire(pt, kind, fault_trip_every(pt, sample_bytes),
				 FAULT_TRIP_SIG) == 0)
		return 0;
	if (errno != ESRCH && !refused) {
		refused = 1;
		warn_msg("--exact: no tripwire on the %s of thread %d (%s): samples of it and of "
			 "later threads may be lost when memtap is slow", name, pt->tid,
			 strerror(errno));
	}
	return -1;
}

int fault_trip_signal(pid_t tid, int status, siginfo_t *si)
{
	if (((unsigned)status >> 16) || !WIFSTOPPED(status) || WSTOPSIG(status) != FAULT_TRIP_SIG)
		return 0;
	return ptrace(PTRACE_GETSIGINFO, tid, 0L, si) == 0;
}

int fault_trip_mine(const struct perf_thread *pt, const siginfo_t *si)
{
	return perf_thread_is_tripwire(pt, si->si_signo, si->si_code, si->si_fd, FAULT_TRIP_SIG);
}

/* PTRACE_PEEKSIGINFO's arguments (struct ptrace_peeksiginfo_args) */
struct peek_args {
	uint64_t off;
	uint32_t flags;	/* 0: the thread's own queue */
	int32_t nr;
};

#define PEEK_MAX 32

int fault_trip_queued(pid_t tid, const struct perf_thread *pt)
{
	siginfo_t si[PEEK_MAX];
	struct peek_args a = { .off = 0, .flags = 0, .nr = PEEK_MAX };
	uint64_t blocked;
	long n;

	if (pt->trip_fd < 0 && pt->trip_ended < 0)
		return 0;
	n = ptrace(PTRACE_PEEKSIGINFO, tid, &a, si);
	if (n <= 0 || procfs_status_hex(tid, "SigBlk", &blocked) < 0 ||
	    (blocked & (1ull << (FAULT_TRIP_SIG - 1))))
		return 0;
	for (long i = 0; i < n && i < PEEK_MAX; i++)
		if (fault_trip_mine(pt, &si[i]))
			return 1;
	return 0;
}

int fault_trip_blocked(pid_t tid)
{
	uint64_t blocked;

	if (procfs_status_hex(tid, "SigBlk", &blocked) < 0 ||
	    !(blocked & (1ull << (FAULT_TRIP_SIG - 1))))
		return 0;
	warn_msg("--exact: thread %d blocks SIGWINCH, the signal that stops it before its perf "
		 "ring fills: samples of it may be lost when memtap is slow (they are counted)",
		 tid);
	return 1;
}

/*
 * faults-exact.h - --exact for -e faults (faults-exact.c): the samples
 * of a thread are not lost when memtap is starved of CPU, the thread
 * being stopped before its perf ring fills.
 *
 * Each kind of each thread gets a tripwire (perf_thread_tripwire()), a
 * third event that queues FAULT_TRIP_SIG to the thread every so many
 * faults: a quarter of the samples its ring holds.  The thread takes
 * it on its way back to user mode, right after the fault, at a
 * signal-delivery-stop where faults.c reads its rings to the end and
 * resumes it with the signal suppressed.  The ring so never holds more
 * than a quarter of its room plus the faults taken between the
 * tripwire's and the stop: those the kernel takes within one syscall
 * (a read() into fresh pages) at most, which three quarters of the
 * room must hold (a 16 MiB ring with 8 KiB stack copies: 1,489
 * faults, 5.8 MiB read at once).  Idle, memtap has read the ring
 * before, and a stop costs a stop.  Not O_ASYNC on the sampling fd
 * itself: the kernel sends its signal at every sample there, not at
 * the ring's wakeup watermark.
 *
 * The signal, SIGWINCH, is ignored by default: one still queued when
 * memtap dies (its events close with it) harms no target that has no
 * handler for it.  Not SIGURG: Go's runtime sends it to its own threads
 * all the time, and a pending one swallows ours.  A SIGWINCH that
 * someone else sent is delivered untouched: ours alone have si_code
 * POLL_IN and si_fd a tripwire's fd.  A thread that blocks SIGWINCH
 * takes no stop: it is paced by the interrupts of the default mode
 * alone, which a starved memtap sends late; fault_trip_blocked() says
 * so, and what is lost is counted as without --exact.
 */
#ifndef MEMTAP_FAULTS_EXACT_H
#define MEMTAP_FAULTS_EXACT_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "linux/perf.h"

#define FAULT_TRIP_SIG SIGWINCH

/*
 * Set pt's tripwire for a ring of samples of about sample_bytes each.
 * A refusal is said once (name: the event kind's), and the thread is
 * paced as without --exact: -1.
 */
int fault_trip_arm(struct perf_thread *pt, enum perf_fault_kind kind, size_t sample_bytes,
		   const char *name);

/* Faults between two stops of a tripwire on pt's ring. */
uint64_t fault_trip_every(const struct perf_thread *pt, size_t sample_bytes);

/*
 * Is ptrace status (waitpid()'s) of stopped thread tid a
 * signal-delivery-stop of FAULT_TRIP_SIG?  Then 1 and *si its siginfo.
 */
int fault_trip_signal(pid_t tid, int status, siginfo_t *si);

/* Is si (fault_trip_signal()'s) from pt's tripwire? */
int fault_trip_mine(const struct perf_thread *pt, const siginfo_t *si);

/*
 * Is one of pt's tripwire signals queued for stopped thread tid, and
 * not blocked (PTRACE_PEEKSIGINFO, /proc/TID/status)?  Then the thread
 * takes it at its next stop once resumed.
 */
int fault_trip_queued(pid_t tid, const struct perf_thread *pt);

/*
 * The ring of thread tid is over half full in spite of its tripwire:
 * does it block FAULT_TRIP_SIG?  Then it is said, and 1.
 */
int fault_trip_blocked(pid_t tid);

#endif /* MEMTAP_FAULTS_EXACT_H */

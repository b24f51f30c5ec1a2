/*
 * detach.c - leaving every tracee as it was.
 *
 * Detaching (attach mode only: a seccomp filter cannot be removed) is
 * PTRACE_INTERRUPT of every running thread, then PTRACE_DETACH of each at
 * its next stop, passing on the signal of a signal-delivery-stop.  With
 * a source's things in an address space (source.h's space(): the
 * allocator probes' breakpoints and detours), its threads are parked
 * until all of them are stopped and out of memtap's code; the source's
 * things then come out, and the threads go.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "trace/loop.h"
#include "trace/source.h"
#include "util/error.h"
#include "util/xmalloc.h"

void detach_thread(struct thread *tcp, int sig)
{
	stop_ended(tcp);
	if (ptrace(PTRACE_DETACH, tcp->tid, 0L, (unsigned long)sig) < 0 &&
	    errno != ESRCH)
		perror_msg("ptrace(PTRACE_DETACH, %d)", tcp->tid);
	if (tcp->proc) {
		tcp->proc->rec->detached = 1;
		if (tcp->proc->nthreads == 1 && !tcp->proc->rec->vm_end.have)
			procfs_read_vmstat(tcp->proc->pid, &tcp->proc->rec->vm_end);
	}
	thread_free(tcp);
}

/*
 * Detaching with a source's things in the address space (see above): a
 * thread may only go once every thread of the space is stopped and out
 * of memtap's code, and the breakpoints are out.  Until then it is
 * parked: left stopped, with the signal to pass on remembered.  good:
 * 0 = a stop where neither the registers may be moved for good nor a
 * syscall injected (syscall and event stops): interrupt it and let it
 * come back at a PTRACE_EVENT_STOP; 1 = a signal-delivery-stop or
 * PTRACE_EVENT_STOP; 2 = a group-stop.
 */
void detach_or_park(struct thread *tcp, int sig, int good)
{
	int r;

	if (!sources_space(tcp->proc)) {
		detach_thread(tcp, sig);
		return;
	}
	if (!good) {
		if (ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) < 0 && errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tcp->tid);
		resume(tcp, sig);
		return;
	}
	if (sig)
		tcp->pending_sig = sig;
	r = sources_park(tcp);
	if (r == 1) {
		/* a SIGTRAP of ours is queued: its stop comes next */
		resume(tcp, 0);
		return;
	}
	if (r < 0 && r != -ESRCH)
		error_msg("thread %d: moving it out of memtap's code: %s", tcp->tid, strerror(-r));
	tcp->flags |= T_PARKED | T_STOPPED;
	if (good == 1)
		tcp->flags |= T_GOOD_STOP;
}

/* Can the threads of space s go: all parked (or blocked in vfork)? */
static int space_ready(const void *s)
{
	size_t it = 0;
	struct thread *t;

	while ((t = procs_next_thread(&tr.procs, &it))) {
		if (t->flags & T_HELD)
			return 0;	/* maybe one of ours */
		if (sources_space(t->proc) != s || (t->flags & (T_VFORK_WAIT | T_EXITED)))
			continue;
		if (!(t->flags & T_PARKED))
			return 0;
	}
	return 1;
}

/* Undo the breakpoints of s, then detach its parked threads. */
static void space_finish(const void *s)
{
	struct thread **parked = NULL, *good = NULL, *t;
	size_t n = 0, it = 0;

	while ((t = procs_next_thread(&tr.procs, &it))) {
		if (sources_space(t->proc) != s || !(t->flags & T_PARKED))
			continue;
		parked = xrealloc(parked, (n + 1) * sizeof(*parked));
		parked[n++] = t;
		if (!good || ((t->flags & T_GOOD_STOP) && !(good->flags & T_GOOD_STOP)))
			good = t;
	}
	debug_msg("detaching: %zu threads stopped after %.1f ms", n,
		  (double)(now_ns() - tr.detach_ns) / 1e6);
	if (good)
		sources_remove(s, good, parked, n);
	for (size_t i = 0; i < n; i++) {
		int sig = parked[i]->pending_sig;

		parked[i]->flags &= ~T_PARKED;
		detach_thread(parked[i], sig);
	}
	free(parked);
}

void detach_progress(void)
{
	size_t it;
	struct thread *t;
	int again = 1;

	while (again) {
		const void *not_ready = NULL;

		again = 0;
		it = 0;
		while ((t = procs_next_thread(&tr.procs, &it))) {
			const void *s = sources_space(t->proc);

			/* one look per space (mostly one): threads are many */
			if (!s || !(t->flags & T_PARKED) || s == not_ready)
				continue;
			if (!space_ready(s)) {
				not_ready = s;
				continue;
			}
			space_finish(s);
			again = 1;
			break;
		}
	}
}

void start_detach(void)
{
	struct thread *tcp;
	size_t it = 0;

	tr.detaching = 1;
	tr.detach_ns = now_ns();
	debug_msg("detaching from %zu threads", tr.procs.nthreads);
	while ((tcp = procs_next_thread(&tr.procs, &it))) {
		if ((tcp->flags & T_EXITED) && !(tcp->flags & T_STOPPED)) {
			/* a zombie leader: it stops no more; memtap's exit lets it go */
			detach_thread(tcp, 0);
			continue;
		}
		if ((tcp->flags & T_STOPPED) && !(tcp->flags & T_HELD)) {
			/*
			 * Parked to arm probes, or held by a source (faults'
			 * pacing), at a PTRACE_EVENT_STOP: a source's signal
			 * may be queued for it (a tripwire's, sent at the fault
			 * before the stop): its stop comes first, and goes
			 * through detaching_stop(), as every later stop.
			 */
			if (sources_release(tcp)) {
				debug_msg("detaching: thread %d, stopped, has a signal of "
					  "memtap's queued: it goes at its next stop", tcp->tid);
				tcp->flags |= T_DETACHING;
				resume(tcp, 0);
				continue;
			}
			detach_or_park(tcp, 0, (tcp->flags & T_PARKED) ? 1 : 0);
			continue;
		}
		tcp->flags |= T_DETACHING;
		if (ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) < 0 && errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tcp->tid);
	}
}

void tracer_detach_all(void)
{
	if (tr.launched_pid || !tr.procs.nthreads)
		return;
	if (!tr.detaching)
		start_detach();
	while (tr.procs.nthreads > 0) {
		int status;
		pid_t pid;

		detach_progress();
		if (!tr.procs.nthreads)
			break;
		pid = waitpid(-1, &status, __WALL);

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		struct thread *tcp = procs_find(&tr.procs, pid);

		if (!tcp)
			continue;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			on_death(tcp, status);
		} else if (WIFSTOPPED(status)) {
			stop_began(tcp, status, now_ns());
			handle_stop(tcp, pid, status);
		}
	}
}

/*
 * stops.c - what a ptrace-stop means for the threads and processes
 * traced: their life cycle, and signals.
 *
 *   clone/fork/vfork    a new thread or process: it is traced already;
 *                       its first stop may come before this event, and is
 *                       then held until the event names it
 *   exec                a new image: forget the break, re-read comm
 *   exit                the last chance to read /proc/PID/status
 *   group-stop          PTRACE_LISTEN, so SIGSTOP/SIGCONT work as usual
 *   signal              re-injected unchanged
 *
 * The other stops are offered to the sources of events (source.h):
 * seccomp and syscall stops (syscalls.c), breakpoint SIGTRAPs (alloc.c);
 * a SIGTRAP no source claims is a signal like the others.  The sources
 * are told of the life-cycle stops too, and say what becomes of the
 * thread (event_stop(), exec_stop()).  While detaching, every stop
 * goes to detach.c.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <linux/ptrace.h>

#include "stack/runtimes/jitnames.h"
#include "trace/loop.h"
#include "trace/sc-mech.h"
#include "trace/source.h"
#include "util/error.h"

#ifndef PTRACE_EVENT_STOP
# define PTRACE_EVENT_STOP 128
#endif

/* The first stop (PTRACE_EVENT_STOP) of a thread whose process is known. */
static void first_stop(struct thread *tcp)
{
	switch (sources_event_stop(tcp, 1, 0)) {
	case LIFE_KEEP:
		return;
	case LIFE_DETACH:
		detach_thread(tcp, 0);
		return;
	case LIFE_RESUME:
		break;
	}
	if (tr.detaching || (tcp->flags & T_DETACHING))
		detach_or_park(tcp, 0, 1);
	else if (!sources_hold(tcp))
		resume(tcp, 0);
}

static void release_held(struct thread *child, struct proc *p)
{
	procs_set_proc(child, p);
	child->flags &= ~T_HELD;
	if (child->flags & T_STOPPED) {
		child->flags |= T_STARTED;
		first_stop(child);
	}
}

static void on_new_task(struct thread *tcp, int event)
{
	unsigned long msg = 0;
	pid_t child_tid;
	struct proc *p = tcp->proc;
	struct thread *child;
	long tgid = -1;

	stops.event++;
	if (ptrace(PTRACE_GETEVENTMSG, tcp->tid, 0L, &msg) < 0 || !msg) {
		resume(tcp, 0);
		return;
	}
	child_tid = (pid_t)msg;
	if (event == PTRACE_EVENT_CLONE) {
		if (procfs_status_long(child_tid, "Tgid", &tgid) < 0)
			tgid = p->pid;	/* gone already; its exit will tell */
	}
	/* a thread starts on a stack of its own; a fork child goes on on its parent's */
	int thread = event == PTRACE_EVENT_CLONE && tgid == p->pid;

	if (!thread) {
		struct proc *np = procs_new_proc(&tr.procs, child_tid, p->pid);

		np->unfollowed = !tr.launched_pid && !tr.cfg->follow_forks;
		np->rec->unfollowed = np->unfollowed;
		np->ptrace_syscalls = p->ptrace_syscalls;	/* and its filters */
		np->sc_missed = p->sc_missed;
		np->own_filter_only = p->own_filter_only;
		/* the blocks (and the break) the in-target probes recorded are the child's too */
		if (event == PTRACE_EVENT_FORK && sources_flush_thread(tcp))
			sink_flush();
		np->brk = p->brk;	/* a copy of the parent's memory */
		if (event == PTRACE_EVENT_FORK)
			sink_proc_fork(np->rec, p->rec);
		sink_proc_copy_stubs(np->rec, p->rec);	/* stacks through them */
		memcpy(np->rec->comm, p->rec->comm, sizeof(np->rec->comm));
		procfs_read_vmstat(child_tid, &np->rec->vm_start);
		sources_new_task(tcp, np, event);
		p = np;
	}
	child = procs_find(&tr.procs, child_tid);
	if (child && (child->flags & T_HELD)) {
		memcpy(child->comm, tcp->comm, sizeof(child->comm));
		if (thread)
			child->flags |= T_NEW;
		release_held(child, p);
	} else if (!child) {
		child = procs_new_thread(&tr.procs, child_tid, p);
		if (thread)
			child->flags |= T_NEW;
		memcpy(child->comm, tcp->comm, sizeof(child->comm));
		if (tr.detaching)
			child->flags |= T_DETACHING;
	}
	if (event == PTRACE_EVENT_VFORK)
		tcp->flags |= T_VFORK_WAIT;	/* until its child execs or exits */
	if (tr.detaching)
		detach_or_park(tcp, 0, 0);
	else
		resume(tcp, 0);
}

void on_exec(struct thread *tcp, pid_t pid)
{
	unsigned long former = 0;

	stops.event++;
	if (ptrace(PTRACE_GETEVENTMSG, pid, 0L, &former) == 0 && (pid_t)former != pid) {
		/* A non-leader thread exec'd and took over the leader's tid. */
		struct thread *execer = procs_find(&tr.procs, (pid_t)former);

		if (execer && execer != tcp) {
			if (tcp) {
				/* the exec's stop is the execer's now */
				execer->stop_ns = tcp->stop_ns;
				execer->stop_kind = tcp->stop_kind;
				thread_free(tcp);
			}
			procs_rename_thread(&tr.procs, execer, pid);
			tcp = execer;
		}
	}
	if (!tcp)
		return;
	struct proc *p = tcp->proc;

	tcp->sc = SC_IDLE;
	tcp->sc_def = NULL;
	tcp->flags &= ~(T_SC_KNOWN | T_IN_SC);
	if (p) {
		p->rec->execs++;
		p->brk = 0;
		sink_proc_exec(p->rec);
		procfs_read_comm(pid, p->rec->comm, sizeof(p->rec->comm));
		memcpy(tcp->comm, p->rec->comm, sizeof(tcp->comm));
		if (p->pid == tr.launched_pid)
			tr.launched_exec_seen = 1;
		/* the dynamic linker's syscalls, until the wrappers are armed */
		if (tr.launched_pid)
			sc_mech_exec(tr.cfg, p);
		/* the old address space is gone: measure growth from here */
		procfs_read_vmstat(pid, &p->rec->vm_start);
	}
	if (sources_exec_stop(tcp) == LIFE_DETACH || tr.detaching)
		detach_thread(tcp, 0);
	else
		resume(tcp, 0);
}

static void on_exit_event(struct thread *tcp)
{
	struct proc *p = tcp->proc;

	stops.event++;
	tcp->sc = SC_IDLE;
	tcp->sc_def = NULL;
	/*
	 * The address space is still there: the figures of the thread that
	 * exits last are the process's last.
	 */
	if (p) {
		procfs_read_vmstat(tcp->tid, &p->rec->vm_end);
		/* what a runtime wrote of its code as it exits (a JVM's perf map) */
		jit_names_exiting(p->pid);
	}
	sources_thread_exit(tcp);
	tcp->flags |= T_EXITED;
	if (tr.detaching)
		detach_thread(tcp, 0);	/* it runs no code of the process again */
	else
		resume(tcp, 0);
}

void on_death(struct thread *tcp, int status)
{
	struct proc *p = tcp->proc;

	if (p && tcp->tid == p->pid) {
		p->rec->status = status;
		p->rec->exited = 1;
		if (p->pid == tr.launched_pid)
			tr.launched_status = status;
	}
	thread_free(tcp);
}

void launch_failed(void)
{
	int err = 0;

	if (tr.launched_exec_fd >= 0 &&
	    read(tr.launched_exec_fd, &err, sizeof(err)) == (ssize_t)sizeof(err)) {
		errno = err;
		error_msg_and_die_code(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC,
				       "cannot run '%s': %s", tr.launched_cmd, strerror(err));
	}
}

static int is_group_stop_sig(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* While detaching: every stop but a new task's parks or detaches the thread. */
static void detaching_stop(struct thread *tcp, int status)
{
	int sig = WSTOPSIG(status), event = (unsigned)status >> 16;
	int pass = 0, good = 0;

	if (sig != (SIGTRAP | 0x80) && !event) {
		/* a signal-delivery-stop: deliver it, unless a source's
		   (a breakpoint's SIGTRAP, a faults tripwire's signal) */
		pass = sig;
		good = 1;
		if (sources_stop(tcp, status) != STOP_NOT_MINE)
			pass = 0;
	} else if (event == PTRACE_EVENT_STOP) {
		good = is_group_stop_sig(sig) ? 2 : 1;
	}
	if (good == 1 && sources_release(tcp)) {
		/* a source's signal is queued: its stop comes first */
		resume(tcp, pass);
		return;
	}
	detach_or_park(tcp, pass, good);
}

static void on_event_stop(struct thread *tcp, int sig)
{
	if (is_group_stop_sig(sig)) {
		/* group-stop: stay stopped, yet report SIGCONT */
		stops.group++;
		sources_event_stop(tcp, 0, 1);
		tcp->flags &= ~T_STOPPED;
		tcp->flags |= T_LISTENING;
		tcp->stop_ns = 0;	/* its own stop, not memtap's */
		ptrace_or_warn(PTRACE_LISTEN, tcp->tid, 0, "PTRACE_LISTEN");
		return;
	}
	stops.event++;
	switch (sources_event_stop(tcp, 0, 0)) {
	case LIFE_KEEP:
		break;
	case LIFE_DETACH:
		detach_thread(tcp, 0);
		break;
	case LIFE_RESUME:
		if (!sources_hold(tcp))
			resume(tcp, 0);
		break;
	}
}

void handle_stop(struct thread *tcp, pid_t pid, int status)
{
	int sig = WSTOPSIG(status);
	int event = (unsigned)status >> 16;

	tcp->flags |= T_STOPPED;
	tcp->flags &= ~T_VFORK_WAIT;
	if (event == PTRACE_EVENT_EXEC) {
		on_exec(tcp, pid);
		return;
	}
	if (!(tcp->flags & T_STARTED) && event == PTRACE_EVENT_STOP && sig == SIGTRAP) {
		/* The first stop of a seized or auto-attached thread. */
		tcp->flags |= T_STARTED;
		stops.event++;
		if (!(tcp->flags & T_HELD))
			first_stop(tcp);
		return;
	}
	tcp->flags |= T_STARTED;

	if (tr.detaching && event != PTRACE_EVENT_FORK && event != PTRACE_EVENT_VFORK &&
	    event != PTRACE_EVENT_CLONE) {
		detaching_stop(tcp, status);
		return;
	}

	switch (event) {
	case PTRACE_EVENT_SECCOMP:
	case 0:
		break;		/* the sources' */
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_new_task(tcp, event);
		return;
	case PTRACE_EVENT_EXIT:
		on_exit_event(tcp);
		return;
	case PTRACE_EVENT_STOP:
		on_event_stop(tcp, sig);
		return;
	default:
		stops.event++;
		resume(tcp, 0);
		return;
	}
	switch (sources_stop(tcp, status)) {
	case STOP_RESUME:
		resume(tcp, 0);
		return;
	case STOP_KEPT:
		return;
	case STOP_NOT_MINE:
		break;
	}
	if (event || sig == (SIGTRAP | 0x80)) {
		/* a seccomp or syscall stop no source wants */
		stops.event++;
		resume(tcp, 0);
		return;
	}
	/* signal-delivery-stop: pass the signal on */
	stops.signal++;
	tcp->flags &= ~T_LISTENING;
	resume(tcp, sig);
}

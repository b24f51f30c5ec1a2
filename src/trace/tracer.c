/*
 * tracer.c - the ptrace event loop.
 *
 * One loop serves every stop of every tracee, in rounds: it collects
 * every pending stop (waitpid(-1, __WALL | WNOHANG) until none is left),
 * serves them in that order, resuming each, then unwinds the stacks
 * taken, serves the timers (-d, -i) and sleeps in poll() on a SIGCHLD
 * signalfd until the next stop or timer.  A thread is served at most
 * once per round, so a busy thread cannot keep the others waiting.
 * The stops:
 *
 *   seccomp stop        a memory syscall matched the filter (launch mode):
 *                       read its arguments, resume with PTRACE_SYSCALL to
 *                       catch its exit (Linux < 4.8 reports the entry
 *                       stop in between), then PTRACE_CONT
 *   syscall stop        ptrace mode (-p): every syscall's entry and exit;
 *                       seccomp mode: the exit of a matched syscall
 *   clone/fork/vfork    a new thread or process: it is traced already;
 *                       its first stop may come before this event, and is
 *                       then held until the event names it
 *   exec                a new image: forget the break, re-read comm
 *   exit                the last chance to read /proc/PID/status
 *   group-stop          PTRACE_LISTEN, so SIGSTOP/SIGCONT work as usual
 *   signal              re-injected unchanged
 *
 * Detaching (attach mode only: a seccomp filter cannot be removed) is
 * PTRACE_INTERRUPT of every running thread, then PTRACE_DETACH of each at
 * its next stop, passing on the signal of a signal-delivery-stop.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/ptrace.h>

#include "trace/alloc.h"
#include "util/error.h"
#include "trace/memtap.h"
#include "trace/tracer.h"
#include "util/xmalloc.h"

#ifndef PTRACE_GET_SYSCALL_INFO
# define PTRACE_GET_SYSCALL_INFO 0x420e
#endif
#ifndef PTRACE_SYSCALL_INFO_ENTRY
# define PTRACE_SYSCALL_INFO_ENTRY 1
# define PTRACE_SYSCALL_INFO_EXIT 2
#endif
#ifndef PTRACE_EVENT_STOP
# define PTRACE_EVENT_STOP 128
#endif

struct stop_counts stops;
const char *syscall_source = "seccomp";

static struct proc *procs, **procs_tail = &procs;

/* Thread table: open addressing on tid, tombstones are (void *)1. */
static struct thread **tab;
static size_t tab_size, tab_used, nthreads;
#define TOMB ((struct thread *)1)

static int use_seccomp;
static int ptrace_syscalls;		/* PTRACE_SYSCALL: every syscall stops */
static int seccomp_before_entry;	/* Linux < 4.8 */
static int have_syscall_info = -1;	/* PTRACE_GET_SYSCALL_INFO works */

static pid_t launched_pid;
static int launched_status = -1;
static int launched_exec_fd = -1;
static const char *launched_cmd;
static int launched_exec_seen;

static int detaching;
static volatile sig_atomic_t stop_signal;
static volatile pid_t wake_tid;
static uint64_t detach_ns;	/* when detaching started */

struct proc *proc_list(void)
{
	return procs;
}

unsigned long tracer_ptrace_options(void)
{
	return PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
	       PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
	       (use_seccomp ? PTRACE_O_TRACESECCOMP : 0);
}

static int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 1;
	return ma > major || (ma == major && mi >= minor);
}

void tracer_init(int seccomp, int ptrace_all, const char *source)
{
	use_seccomp = seccomp;
	ptrace_syscalls = ptrace_all;
	syscall_source = source;
	/*
	 * Since Linux 4.8 the seccomp stop stands for the syscall-entry
	 * stop; before, the entry stop followed it.
	 */
	seccomp_before_entry = !kernel_at_least(4, 8);
	clock_start();
}

/* ---- tables ---- */

static size_t slot_of(pid_t tid, size_t size)
{
	return ((size_t)tid * 2654435761u) & (size - 1);
}

static void tab_insert(struct thread *tcp)
{
	if ((tab_used + 1) * 2 > tab_size) {
		struct thread **old = tab;
		size_t old_size = tab_size;

		tab_size = tab_size ? tab_size * 2 : 64;
		while (nthreads * 4 > tab_size)
			tab_size *= 2;
		tab = xcalloc(tab_size, sizeof(*tab));
		tab_used = 0;
		for (size_t i = 0; i < old_size; i++)
			if (old[i] && old[i] != TOMB) {
				size_t j = slot_of(old[i]->tid, tab_size);
				while (tab[j])
					j = (j + 1) & (tab_size - 1);
				tab[j] = old[i];
				tab_used++;
			}
		free(old);
	}
	size_t j = slot_of(tcp->tid, tab_size);
	while (tab[j] && tab[j] != TOMB)
		j = (j + 1) & (tab_size - 1);
	if (!tab[j])
		tab_used++;
	tab[j] = tcp;
}

static struct thread **tab_slot(pid_t tid)
{
	if (!tab_size)
		return NULL;
	for (size_t j = slot_of(tid, tab_size), n = 0; tab[j] && n < tab_size;
	     j = (j + 1) & (tab_size - 1), n++)
		if (tab[j] != TOMB && tab[j]->tid == tid)
			return &tab[j];
	return NULL;
}

struct thread *tracer_find_thread(pid_t tid)
{
	struct thread **s = tab_slot(tid);

	return s ? *s : NULL;
}

struct proc *tracer_new_proc(pid_t pid, pid_t ppid)
{
	struct proc *p = xcalloc(1, sizeof(*p));

	p->pid = pid;
	p->rec = sink_proc_new(pid, ppid);
	*procs_tail = p;
	procs_tail = &p->next;
	return p;
}

static void thread_set_proc(struct thread *tcp, struct proc *p)
{
	tcp->proc = p;
	if (p)
		p->nthreads++;
}

struct thread *tracer_new_thread(pid_t tid, struct proc *p)
{
	struct thread *tcp = xcalloc(1, sizeof(*tcp));

	tcp->tid = tid;
	thread_set_proc(tcp, p);
	procfs_read_comm(tid, tcp->comm, sizeof(tcp->comm));
	tab_insert(tcp);
	nthreads++;
	if (!wake_tid)
		wake_tid = tid;
	return tcp;
}

static void thread_free(struct thread *tcp)
{
	struct thread **s = tab_slot(tcp->tid);

	alloc_thread_free(tcp);
	if (s)
		*s = TOMB;
	if (tcp->proc)
		tcp->proc->nthreads--;
	if (wake_tid == tcp->tid)
		wake_tid = 0;
	nthreads--;
	free(tcp);
}

static void thread_rename(struct thread *tcp, pid_t tid)
{
	struct thread **s = tab_slot(tcp->tid);

	if (s)
		*s = TOMB;
	tcp->tid = tid;
	tab_insert(tcp);
}

void tracer_set_launched(pid_t pid, int exec_err_fd, const char *cmd)
{
	launched_pid = pid;
	launched_exec_fd = exec_err_fd;
	launched_cmd = cmd;
}

/* ---- resuming ---- */

static void ptrace_or_warn(int req, pid_t tid, unsigned long data, const char *what)
{
	if (ptrace(req, tid, 0L, data) < 0 && errno != ESRCH)
		perror_msg("ptrace(%s, %d)", what, tid);
}

/*
 * Resume a stopped thread, delivering sig (0 for none): PTRACE_SYSCALL
 * where syscall stops are wanted, else PTRACE_CONT (always while
 * detaching).
 */
static void resume(struct thread *tcp, int sig)
{
	int syscall_stops = !detaching && (ptrace_syscalls || tcp->sc != SC_IDLE ||
					   (tcp->proc && tcp->proc->ptrace_syscalls));

	tcp->flags &= ~(T_STOPPED | T_PARKED | T_GOOD_STOP);
	ptrace_or_warn(syscall_stops ? PTRACE_SYSCALL : PTRACE_CONT, tcp->tid,
		       (unsigned long)sig, syscall_stops ? "PTRACE_SYSCALL" : "PTRACE_CONT");
}

/* Detach a stopped thread, passing on sig; the thread is freed. */
static void detach_thread(struct thread *tcp, int sig)
{
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

void tracer_resume(struct thread *tcp, int sig)
{
	resume(tcp, sig);
}

void tracer_detach_thread(struct thread *tcp, int sig)
{
	detach_thread(tcp, sig);
}

struct thread *tracer_next_thread(size_t *iter)
{
	while (*iter < tab_size) {
		struct thread *tcp = tab[(*iter)++];

		if (tcp && tcp != TOMB)
			return tcp;
	}
	return NULL;
}

int tracer_detaching(void)
{
	return detaching;
}

int tracer_launch_mode(void)
{
	return launched_pid != 0;
}

/*
 * Detaching with breakpoints in the address space (see alloc.h): a
 * thread may only go once every thread of the space is stopped and out
 * of memtap's code, and the breakpoints are out.  Until then it is
 * parked: left stopped, with the signal to pass on remembered.  good:
 * 0 = a stop where neither the registers may be moved for good nor a
 * syscall injected (syscall and event stops): interrupt it and let it
 * come back at a PTRACE_EVENT_STOP; 1 = a signal-delivery-stop or
 * PTRACE_EVENT_STOP; 2 = a group-stop.
 */
static void detach_or_park(struct thread *tcp, int sig, int good)
{
	int r;

	if (!alloc_active_space(tcp->proc)) {
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
	r = alloc_fixup_for_detach(tcp);
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
static int space_ready(struct alloc_space *s)
{
	size_t it = 0;
	struct thread *t;

	while ((t = tracer_next_thread(&it))) {
		if (t->flags & T_HELD)
			return 0;	/* maybe one of ours */
		if (alloc_active_space(t->proc) != s || (t->flags & T_VFORK_WAIT))
			continue;
		if (!(t->flags & T_PARKED))
			return 0;
	}
	return 1;
}

/* Undo the breakpoints of s, then detach its parked threads. */
static void space_finish(struct alloc_space *s)
{
	struct thread **parked = NULL, *good = NULL, *t;
	size_t n = 0, it = 0;

	while ((t = tracer_next_thread(&it))) {
		if (alloc_active_space(t->proc) != s || !(t->flags & T_PARKED))
			continue;
		parked = xrealloc(parked, (n + 1) * sizeof(*parked));
		parked[n++] = t;
		if (!good || ((t->flags & T_GOOD_STOP) && !(good->flags & T_GOOD_STOP)))
			good = t;
	}
	debug_msg("detaching: %zu threads stopped after %.1f ms", n,
		  (double)(now_ns() - detach_ns) / 1e6);
	if (good)
		alloc_space_remove(s, good, parked, n);
	for (size_t i = 0; i < n; i++) {
		int sig = parked[i]->pending_sig;

		parked[i]->flags &= ~T_PARKED;
		detach_thread(parked[i], sig);
	}
	free(parked);
}

/* While detaching: finish every space whose threads are all parked. */
static void detach_progress(void)
{
	size_t it;
	struct thread *t;
	int again = 1;

	while (again) {
		struct alloc_space *not_ready = NULL;

		again = 0;
		it = 0;
		while ((t = tracer_next_thread(&it))) {
			struct alloc_space *s = alloc_active_space(t->proc);

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

/* ---- stop handlers ---- */

static int get_regs(struct thread *tcp, arch_regs_t *regs)
{
	if (ptrace(PTRACE_GETREGS, tcp->tid, 0L, regs) < 0) {
		if (errno != ESRCH)
			perror_msg("ptrace(PTRACE_GETREGS, %d)", tcp->tid);
		return -1;
	}
	return 0;
}

static void on_seccomp_stop(struct thread *tcp)
{
	unsigned long data = 0;
	arch_regs_t regs;

	stops.seccomp++;
	if (ptrace(PTRACE_GETEVENTMSG, tcp->tid, 0L, &data) == 0 &&
	    data < syscall_ndefs && get_regs(tcp, &regs) == 0) {
		const struct syscall_def *def = &syscall_defs[data];

		syscall_enter(tcp, &regs, def->abi, def);
		tcp->sc = seccomp_before_entry ? SC_AWAIT_ENTRY : SC_AWAIT_EXIT;
	}
	resume(tcp, 0);
}

/*
 * Is this syscall stop an entry (1) or an exit (0)?  PTRACE_GET_SYSCALL_INFO
 * says so (Linux >= 5.3); before it, the thread's own parity, and for the
 * first stop after attaching, rax == -ENOSYS.
 */
static int syscall_stop_is_entry(struct thread *tcp, const arch_regs_t *regs)
{
	int entry;

	if (have_syscall_info != 0) {
		struct ptrace_syscall_info info;
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, tcp->tid, sizeof(info), &info);

		if (n > 0) {
			have_syscall_info = 1;
			if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
				return 1;
			if (info.op == PTRACE_SYSCALL_INFO_EXIT)
				return 0;
		} else if (errno == EIO || errno == EINVAL) {
			have_syscall_info = 0;
		}
	}
	if (tcp->flags & T_SC_KNOWN)
		entry = !(tcp->flags & T_IN_SC);
	else
		entry = arch_at_syscall_entry(regs);
	return entry;
}

static enum abi syscall_abi(struct thread *tcp, const arch_regs_t *regs)
{
	uint16_t insn = 0;

	if (regs->cs != 0x23) {
		/* int $0x80 from 64-bit code: look at the instruction */
		struct iovec local = { &insn, sizeof(insn) };
		struct iovec remote = { (void *)(uintptr_t)(regs->rip - 2), sizeof(insn) };

		if (process_vm_readv(tcp->tid, &local, 1, &remote, 1, 0) != sizeof(insn))
			insn = 0;
	}
	return arch_abi_from_regs(regs, insn);
}

static void on_syscall_stop(struct thread *tcp)
{
	arch_regs_t regs;

	stops.syscall++;
	if (use_seccomp) {
		if (tcp->sc == SC_AWAIT_ENTRY) {
			tcp->sc = SC_AWAIT_EXIT;
		} else if (tcp->sc == SC_AWAIT_EXIT) {
			if (get_regs(tcp, &regs) == 0)
				syscall_exit(tcp, &regs);
			tcp->sc = SC_IDLE;
		}
		resume(tcp, 0);
		return;
	}

	if (get_regs(tcp, &regs) < 0) {
		resume(tcp, 0);
		return;
	}
	if (syscall_stop_is_entry(tcp, &regs)) {
		tcp->flags |= T_SC_KNOWN | T_IN_SC;
		tcp->sc_def = NULL;
		long nr = arch_syscall_nr(&regs);
		const struct syscall_def *def = NULL;

		/* cheap test first: is nr a memory syscall in any ABI? */
		for (size_t i = 0; i < syscall_ndefs; i++)
			if (syscall_defs[i].nr == nr) {
				def = syscall_lookup(syscall_abi(tcp, &regs), nr);
				break;
			}
		if (def && syscall_wanted(def, &regs, def->abi))
			syscall_enter(tcp, &regs, def->abi, def);
	} else {
		tcp->flags |= T_SC_KNOWN;
		tcp->flags &= ~T_IN_SC;
		if (tcp->sc_def)
			syscall_exit(tcp, &regs);
	}
	alloc_on_syscall_stop(tcp);
	resume(tcp, 0);
}

/* The first stop (PTRACE_EVENT_STOP) of a thread whose process is known. */
static void first_stop(struct thread *tcp)
{
	switch (alloc_on_event_stop(tcp, 1, 0)) {
	case ALLOC_KEEP:
		return;
	case ALLOC_DETACH:
		detach_thread(tcp, 0);
		return;
	default:
		break;
	}
	if (detaching || (tcp->flags & T_DETACHING))
		detach_or_park(tcp, 0, 1);
	else
		resume(tcp, 0);
}

static void release_held(struct thread *child, struct proc *p)
{
	thread_set_proc(child, p);
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
	if (event != PTRACE_EVENT_CLONE || tgid != p->pid) {
		struct proc *np = tracer_new_proc(child_tid, p->pid);

		np->brk = p->brk;	/* a copy of the parent's memory */
		np->unfollowed = !launched_pid && !opt.follow_forks;
		np->rec->unfollowed = np->unfollowed;
		np->ptrace_syscalls = p->ptrace_syscalls;	/* and its filters */
		if (event == PTRACE_EVENT_FORK)
			sink_proc_fork(np->rec, p->rec);
		memcpy(np->rec->comm, p->rec->comm, sizeof(np->rec->comm));
		procfs_read_vmstat(child_tid, &np->rec->vm_start);
		alloc_on_new_task(tcp, np, child_tid, event);
		p = np;
	}
	child = tracer_find_thread(child_tid);
	if (child && (child->flags & T_HELD)) {
		memcpy(child->comm, tcp->comm, sizeof(child->comm));
		release_held(child, p);
	} else if (!child) {
		child = tracer_new_thread(child_tid, p);
		memcpy(child->comm, tcp->comm, sizeof(child->comm));
		if (detaching)
			child->flags |= T_DETACHING;
	}
	if (event == PTRACE_EVENT_VFORK)
		tcp->flags |= T_VFORK_WAIT;	/* until its child execs or exits */
	if (detaching)
		detach_or_park(tcp, 0, 0);
	else
		resume(tcp, 0);
}

static void on_exec(struct thread *tcp, pid_t pid)
{
	unsigned long former = 0;

	stops.event++;
	if (ptrace(PTRACE_GETEVENTMSG, pid, 0L, &former) == 0 && (pid_t)former != pid) {
		/* A non-leader thread exec'd and took over the leader's tid. */
		struct thread *execer = tracer_find_thread((pid_t)former);

		if (execer && execer != tcp) {
			if (tcp)
				thread_free(tcp);
			thread_rename(execer, pid);
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
		if (p->pid == launched_pid)
			launched_exec_seen = 1;
		/* the old address space is gone: measure growth from here */
		procfs_read_vmstat(pid, &p->rec->vm_start);
	}
	if (alloc_on_exec(tcp) == ALLOC_DETACH || detaching)
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
	if (p)
		procfs_read_vmstat(tcp->tid, &p->rec->vm_end);
	if (detaching)
		detach_or_park(tcp, 0, 0);
	else
		resume(tcp, 0);
}

/* A thread (or process) is gone: status is its wait status. */
static void on_death(struct thread *tcp, int status)
{
	struct proc *p = tcp->proc;

	if (p && tcp->tid == p->pid) {
		p->rec->status = status;
		p->rec->exited = 1;
		if (p->pid == launched_pid)
			launched_status = status;
	}
	thread_free(tcp);
}

/* The launched command died before exec: report why and exit. */
static void launch_failed(void)
{
	int err = 0;

	if (launched_exec_fd >= 0 &&
	    read(launched_exec_fd, &err, sizeof(err)) == (ssize_t)sizeof(err)) {
		errno = err;
		error_msg_and_die_code(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC,
				       "cannot run '%s': %s", launched_cmd, strerror(err));
	}
}

static void handle_stop(struct thread *tcp, pid_t pid, int status)
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

	if (detaching && event != PTRACE_EVENT_FORK && event != PTRACE_EVENT_VFORK &&
	    event != PTRACE_EVENT_CLONE) {
		int pass = 0, good = 0;

		if (sig != (SIGTRAP | 0x80) && !event) {
			/* a signal-delivery-stop: deliver it, unless a breakpoint's */
			pass = sig;
			good = 1;
			if (sig == SIGTRAP && alloc_on_sigtrap(tcp) != ALLOC_NOT_OURS)
				pass = 0;
		} else if (event == PTRACE_EVENT_STOP) {
			good = (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
				sig == SIGTTOU) ? 2 : 1;
		}
		detach_or_park(tcp, pass, good);
		return;
	}

	switch (event) {
	case PTRACE_EVENT_SECCOMP:
		on_seccomp_stop(tcp);
		return;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_new_task(tcp, event);
		return;
	case PTRACE_EVENT_EXIT:
		on_exit_event(tcp);
		return;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* group-stop: stay stopped, yet report SIGCONT */
			stops.group++;
			alloc_on_event_stop(tcp, 0, 1);
			tcp->flags &= ~T_STOPPED;
			tcp->flags |= T_LISTENING;
			ptrace_or_warn(PTRACE_LISTEN, tcp->tid, 0, "PTRACE_LISTEN");
		} else {
			stops.event++;
			switch (alloc_on_event_stop(tcp, 0, 0)) {
			case ALLOC_KEEP:
				break;
			case ALLOC_DETACH:
				detach_thread(tcp, 0);
				break;
			default:
				resume(tcp, 0);
				break;
			}
		}
		return;
	case 0:
		break;
	default:
		stops.event++;
		resume(tcp, 0);
		return;
	}
	if (sig == (SIGTRAP | 0x80)) {
		on_syscall_stop(tcp);
		return;
	}
	if (sig == SIGTRAP && alloc_on_sigtrap(tcp) != ALLOC_NOT_OURS) {
		resume(tcp, 0);
		return;
	}
	/* signal-delivery-stop: pass the signal on */
	stops.signal++;
	tcp->flags &= ~T_LISTENING;
	resume(tcp, sig);
}

static void start_detach(void)
{
	detaching = 1;
	detach_ns = now_ns();
	debug_msg("detaching from %zu threads", nthreads);
	for (size_t i = 0; i < tab_size; i++) {
		struct thread *tcp = tab[i];

		if (!tcp || tcp == TOMB)
			continue;
		if ((tcp->flags & T_STOPPED) && !(tcp->flags & T_HELD)) {
			/* parked to arm probes: at a PTRACE_EVENT_STOP */
			detach_or_park(tcp, 0, (tcp->flags & T_PARKED) ? 1 : 0);
			continue;
		}
		tcp->flags |= T_DETACHING;
		if (ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) < 0 && errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tcp->tid);
	}
}

void tracer_request_stop(int sig)
{
	if (launched_pid && sig != SIGALRM) {
		/* the command decides what the signal means */
		kill(launched_pid, sig);
		return;
	}
	stop_signal = sig;
	/* wake waitpid(): an interrupt stop of one thread will do */
	if (wake_tid && !launched_pid)
		ptrace(PTRACE_INTERRUPT, wake_tid, 0L, 0L);
}

/* Called when stop_signal is set. */
static void serve_stop_request(void)
{
	int sig = stop_signal;

	stop_signal = 0;
	if (!launched_pid) {
		if (!detaching)
			start_detach();
		return;
	}
	(void)sig;
	/* -d expired: report now; the command runs on, unrecorded */
	if (sink_recording()) {
		sink_flush();
		timers_final_report();
		sink_set_recording(0);
		fflush(out);
	}
}

/* ---- the loop ---- */

/* A wait status collected by collect_stops(), served by serve_wait(). */
struct wait_rec {
	pid_t pid;
	int status;
};

static struct wait_rec *batch;
static size_t batch_cap;
static int sigchld_fd = -1;
static int no_children;
static uint64_t clock_ns;		/* when every probe was in */

/*
 * Block SIGCHLD and read it through a signalfd: the loop sleeps in
 * poll() until a tracee changes state or a timer is due.  Without a
 * signalfd the loop polls every FALLBACK_MS.
 */
#define FALLBACK_MS 100

static int out_fd = -1;		/* out, when a pipe: POLLERR once its reader is gone */

static void loop_init(void)
{
	struct stat st;
	sigset_t set;

	if (fstat(fileno(out), &st) == 0 && S_ISFIFO(st.st_mode))
		out_fd = fileno(out);

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return;
	sigchld_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigchld_fd < 0)
		debug_msg("signalfd: %s; polling every %d ms", strerror(errno), FALLBACK_MS);
}

/*
 * Collect every stop and death pending now (waitpid with WNOHANG until
 * none is left), in the kernel's order; returns how many.  A thread has
 * at most one pending stop, so serving the batch serves each thread
 * with a stop once before any is served twice: waitpid(-1) alone
 * returns the same early threads again and again while later ones wait.
 */
static size_t collect_stops(void)
{
	struct signalfd_siginfo si;
	size_t n = 0;

	/* first, so that a stop after the last waitpid() wakes poll() */
	while (sigchld_fd >= 0 && read(sigchld_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);

		if (pid == 0)
			break;
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				no_children = 1;
			else
				perror_msg_and_die("waitpid");
			break;
		}
		batch = xgrowarray(batch, &batch_cap, n + 1, sizeof(*batch));
		batch[n].pid = pid;
		batch[n].status = status;
		n++;
	}
	return n;
}

/* Sleep until a tracee changes state, a signal comes, or a timer is due. */
static void wait_for_stops(void)
{
	struct pollfd pfd[2] = {
		{ .fd = sigchld_fd, .events = POLLIN },
		{ .fd = output_gone() ? -1 : out_fd, .events = 0 },
	};
	uint64_t next = timers_next_ns(), now = now_ns();
	int ms = FALLBACK_MS;

	if (next) {
		uint64_t left = next > now ? next - now : 0;

		if (left < (uint64_t)ms * 1000000u)
			ms = (int)((left + 999999u) / 1000000u);
	}
	if (stop_signal)
		return;
	if (poll(pfd, 2, ms) < 0) {
		if (errno != EINTR)
			perror_msg_and_die("poll");
		return;
	}
	/* the reader of the output pipe is gone: no need to wait for a write */
	if (pfd[1].revents & POLLERR)
		output_fail(out, NULL, EPIPE);
}

/* One wait status: a death, or a stop to handle. */
static void serve_wait(pid_t pid, int status)
{
	struct thread *tcp = tracer_find_thread(pid);

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (!tcp)
			return;
		if (pid == launched_pid && !launched_exec_seen)
			launch_failed();
		on_death(tcp, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	stops.total++;
	if (((unsigned)status >> 16) == PTRACE_EVENT_EXEC) {
		/* the image goes: unwind what was taken of the old one first */
		sink_flush();
		if (!tcp) {
			/* exec by a non-leader whose leader we did not know */
			on_exec(NULL, pid);
			return;
		}
	}
	if (!tcp) {
		/* A new task whose parent's event has not come yet. */
		tcp = tracer_new_thread(pid, NULL);
		tcp->flags |= T_HELD | T_STOPPED | T_STARTED;
		stops.event++;
		if (detaching && !alloc_any_active())
			detach_thread(tcp, 0);
		return;
	}
	handle_stop(tcp, pid, status);
}

/* Is the reader of the output pipe gone?  Then no report is worth making. */
static void check_out_pipe(void)
{
	struct pollfd pfd = { .fd = out_fd, .events = 0 };

	if (out_fd >= 0 && !output_gone() && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR))
		output_fail(out, NULL, EPIPE);
}

static int timer_due(void)
{
	uint64_t t = timers_next_ns();

	return t && now_ns() >= t;
}

/* Is every probe in: -d and -i count from then (see timers.c)? */
static int probes_armed(void)
{
	if (launched_pid && !launched_exec_seen)
		return 0;
	return !alloc_arming();
}

int tracer_run(void)
{
	loop_init();
	output_set_tracing(1);
	while (nthreads > 0) {
		size_t n = collect_stops();

		for (size_t i = 0; i < n; i++)
			serve_wait(batch[i].pid, batch[i].status);
		/* every thread of the batch runs again: now unwind */
		sink_flush();
		if (!clock_ns && probes_armed()) {
			clock_ns = now_ns();
			debug_msg("every probe in: -d and -i count from now");
			timers_armed();
		}
		if (timer_due())
			check_out_pipe();
		if (timer_due() && timers_serve() && !detaching) {
			debug_msg("-d time over after %.1f ms", (double)(now_ns() - clock_ns) / 1e6);
			stop_signal = SIGALRM;
		}
		if (output_gone() && !launched_pid && !detaching)
			start_detach();
		if (stop_signal)
			serve_stop_request();
		if (detaching)
			detach_progress();
		if (!nthreads || no_children)
			break;
		if (!n)
			wait_for_stops();
	}
	output_set_tracing(0);
	if (detach_ns)
		debug_msg("detached in %.1f ms, %.1f ms after the probes were in",
			  (double)(now_ns() - detach_ns) / 1e6, (double)(now_ns() - clock_ns) / 1e6);
	if (output_gone())
		return EXIT_RUNTIME;
	if (launched_pid) {
		if (launched_status < 0)
			return EXIT_RUNTIME;
		if (WIFSIGNALED(launched_status))
			return 128 + WTERMSIG(launched_status);
		return WEXITSTATUS(launched_status);
	}
	return 0;
}

void tracer_detach_all(void)
{
	if (launched_pid || !nthreads)
		return;
	if (!detaching)
		start_detach();
	while (nthreads > 0) {
		int status;
		pid_t pid;

		detach_progress();
		if (!nthreads)
			break;
		pid = waitpid(-1, &status, __WALL);

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		struct thread *tcp = tracer_find_thread(pid);

		if (!tcp)
			continue;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			on_death(tcp, status);
		else if (WIFSTOPPED(status))
			handle_stop(tcp, pid, status);
	}
}

/*
 * loop.c - the ptrace event loop.
 *
 * One loop serves every stop of every tracee, in rounds: it collects
 * every pending stop (waitpid(-1, __WALL | WNOHANG) until none is left),
 * serves them in that order, resuming each, then drains the sources
 * that are ready (source.h), unwinds the stacks taken, serves the timers
 * (-d, -i) and sleeps in poll() on a SIGCHLD signalfd and the sources'
 * fds until the next stop, source or timer; or, when nothing but a
 * stop can be due, in waitpid() itself (may_block()).  A thread is
 * served at most once per round, so a busy thread cannot keep the
 * others waiting.
 *
 * What each stop means is stops.c's (life-cycle events) and the
 * sources' (syscall stops: syscalls.c; breakpoints: alloc.c); detaching
 * is detach.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <linux/ptrace.h>

#include "probe/sandbox.h"
#include "trace/alloc.h"
#include "trace/attach.h"
#include "trace/faults.h"
#include "trace/loop.h"
#include "trace/ring.h"
#include "trace/source.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/xmalloc.h"

struct stop_counts stops;
struct tracer tr = { .launched_status = -1, .launched_exec_fd = -1 };

static volatile sig_atomic_t stop_signal;
static uint64_t clock_ns;		/* when every probe was in */
/* the first signal that asked to detach, and when (now_ns(): clock_gettime
   is async-signal-safe) */
static volatile sig_atomic_t asked_signal;
static volatile uint64_t asked_ns;

unsigned long tracer_ptrace_options(void)
{
	return PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
	       PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
	       (tr.use_seccomp ? PTRACE_O_TRACESECCOMP : 0);
}

void tracer_init(const struct trace_config *cfg)
{
	int wrappers = cfg->syscalls == SYSCALLS_BREAKPOINTS && (cfg->events & EV_SYSCALL_STOPS);

	tr.cfg = cfg;
	procs_init(&tr.procs);
	tr.use_seccomp = cfg->syscalls == SYSCALLS_SECCOMP;
	tr.ptrace_syscalls = cfg->syscalls == SYSCALLS_PTRACE;
	/* the sources, in the order stops are offered to them */
	syscalls_init(tr.use_seccomp, tr.use_seccomp ? "seccomp" :
		      tr.ptrace_syscalls ? "ptrace" : wrappers ? "breakpoints" : "none");
	alloc_init(&tr.procs, cfg, wrappers);
	clock_start();
	/* the origin of every event's time, to put them beside other clocks */
	verbose_msg("times count from %" PRIu64 ".%09" PRIu64 " s of CLOCK_MONOTONIC",
		    start_ns / 1000000000u, start_ns % 1000000000u);
	faults_init(cfg);
	ring_set_overhead(cfg->overhead);
}

void tracer_launch(char **argv)
{
	tr.launched_pid = launch_command(&tr.procs, argv, tr.use_seccomp, &tr.launched_exec_fd);
	tr.launched_cmd = argv[0];
}

void tracer_attach(pid_t pid)
{
	if (attach_pid(&tr.procs, pid) < 0)
		error_msg_and_die("%s", attach_error());
}

int tracer_attach_soft(pid_t pid, char *err, size_t size)
{
	if (attach_pid(&tr.procs, pid) == 0)
		return 0;
	snprintf(err, size, "%s", attach_error());
	return -1;
}

void tracer_forget_gone(void (*forget)(struct sink_proc *rec))
{
	struct proc **pp = &tr.procs.head;

	tr.procs.tail = &tr.procs.head;
	while (*pp) {
		struct proc *p = *pp;

		if (p->nthreads || sources_use_proc(p) || p->pid == tr.launched_pid) {
			pp = &p->next;
			tr.procs.tail = pp;
			continue;
		}
		*pp = p->next;
		forget(p->rec);
		free(p);
	}
}

int tracer_traces(pid_t pid)
{
	struct thread *tcp = procs_find(&tr.procs, pid);

	return tcp && tcp->proc && tcp->proc->pid == pid;
}

/* ---- resuming ---- */

void ptrace_or_warn(int req, pid_t tid, unsigned long data, const char *what)
{
	if (ptrace(req, tid, 0L, data) < 0 && errno != ESRCH)
		perror_msg("ptrace(%s, %d)", what, tid);
}

/* ---- how long threads stay stopped ---- */

enum stop_kind {
	SK_SECCOMP, SK_SYSCALL_ENTRY, SK_SYSCALL_EXIT, SK_INT3, SK_SIGNAL, SK_CLONE,
	SK_FORK, SK_VFORK, SK_EXEC, SK_EXIT, SK_INTERRUPT, SK_GROUP, SK_FIRST, SK_OTHER,
};

static const char *const stop_kind_names[] = {
	[SK_SECCOMP] = "seccomp", [SK_SYSCALL_ENTRY] = "syscall-entry",
	[SK_SYSCALL_EXIT] = "syscall-exit", [SK_INT3] = "int3 (SIGTRAP)",
	[SK_SIGNAL] = "signal", [SK_CLONE] = "clone event", [SK_FORK] = "fork event",
	[SK_VFORK] = "vfork event", [SK_EXEC] = "exec event", [SK_EXIT] = "exit event",
	[SK_INTERRUPT] = "interrupt", [SK_GROUP] = "group-stop", [SK_FIRST] = "first stop",
	[SK_OTHER] = "other",
};

/* What a wait status of tcp's says the stop is, before it is served. */
static enum stop_kind stop_kind_of(const struct thread *tcp, int status)
{
	int sig = WSTOPSIG(status);

	switch ((unsigned)status >> 16) {
	case 0:
		if (sig == (SIGTRAP | 0x80))
			return tcp->sc == SC_AWAIT_EXIT || (tcp->flags & T_IN_SC) ?
			       SK_SYSCALL_EXIT : SK_SYSCALL_ENTRY;
		return sig == SIGTRAP ? SK_INT3 : SK_SIGNAL;
	case PTRACE_EVENT_SECCOMP:
		return SK_SECCOMP;
	case PTRACE_EVENT_CLONE:
		return SK_CLONE;
	case PTRACE_EVENT_FORK:
		return SK_FORK;
	case PTRACE_EVENT_VFORK:
		return SK_VFORK;
	case PTRACE_EVENT_EXEC:
		return SK_EXEC;
	case PTRACE_EVENT_EXIT:
		return SK_EXIT;
	case PTRACE_EVENT_STOP:
		if (!(tcp->flags & T_STARTED))
			return SK_FIRST;
		return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU ?
		       SK_GROUP : SK_INTERRUPT;
	default:
		return SK_OTHER;
	}
}

void stop_began(struct thread *tcp, int status, uint64_t ns)
{
	tcp->stop_ns = ns;
	tcp->stop_kind = (int)stop_kind_of(tcp, status);
}

void stop_ended(struct thread *tcp)
{
	uint64_t d;

	if (!tcp->stop_ns)
		return;
	d = now_ns() - tcp->stop_ns;
	tcp->stop_ns = 0;
	for (int i = 0, ms = 1; i < 3; i++, ms *= 10)
		if (d > (uint64_t)ms * 1000000u)
			stops.over_ms[i]++;
	if (clock_ns && !tr.detaching && d > stops.longest_rec_ns) {
		stops.longest_rec_ns = d;
		stops.longest_rec_tid = tcp->tid;
		stops.longest_rec_kind = stop_kind_names[tcp->stop_kind];
	}
	if (d <= stops.longest_ns)
		return;
	stops.longest_ns = d;
	stops.longest_tid = tcp->tid;
	stops.longest_pid = tcp->proc ? tcp->proc->pid : 0;
	stops.longest_kind = stop_kind_names[tcp->stop_kind];
}

/* -v: the longest stop, at the end. */
static void print_longest_stop(void)
{
	char rec[96] = "; none while recording";

	if (!stops.longest_kind) {
		verbose_msg("longest stop: none timed");
		return;
	}
	if (!clock_ns)
		rec[0] = '\0';
	else if (stops.longest_rec_kind)
		snprintf(rec, sizeof(rec), "; while recording: %.3f ms (%s) of thread %d",
			 (double)stops.longest_rec_ns / 1e6, stops.longest_rec_kind,
			 stops.longest_rec_tid);
	verbose_msg("longest stop: %.3f ms (%s) of thread %d, process %d; stops over 1 ms: %"
		 PRIu64 ", over 10 ms: %" PRIu64 ", over 100 ms: %" PRIu64 "%s",
		 (double)stops.longest_ns / 1e6, stops.longest_kind, stops.longest_tid,
		 stops.longest_pid, stops.over_ms[0], stops.over_ms[1], stops.over_ms[2], rec);
}

void resume(struct thread *tcp, int sig)
{
	int syscall_stops = !tr.detaching && (tr.ptrace_syscalls || tcp->sc != SC_IDLE ||
					      (tcp->proc && tcp->proc->ptrace_syscalls));

	tcp->flags &= ~(T_STOPPED | T_PARKED | T_GOOD_STOP);
	stop_ended(tcp);
	ptrace_or_warn(syscall_stops ? PTRACE_SYSCALL : PTRACE_CONT, tcp->tid,
		       (unsigned long)sig, syscall_stops ? "PTRACE_SYSCALL" : "PTRACE_CONT");
}

void tracer_resume(struct thread *tcp, int sig)
{
	resume(tcp, sig);
}

int tracer_detaching(void)
{
	return tr.detaching;
}

int tracer_stop_pending(void)
{
	return stop_signal != 0;
}

int tracer_before_command_exec(pid_t pid)
{
	return pid == tr.launched_pid && !tr.launched_exec_seen;
}

void tracer_forget_thread(struct thread *tcp)
{
	thread_free(tcp);
}

void thread_free(struct thread *tcp)
{
	sources_thread_gone(tcp);
	sandbox_forget(tcp->tid);
	procs_free_thread(&tr.procs, tcp);
}

/* ---- stop requests ---- */

void tracer_request_stop(int sig)
{
	if (tr.launched_pid && sig != SIGALRM) {
		/* the command decides what the signal means */
		kill(tr.launched_pid, sig);
		return;
	}
	if (!asked_signal && sig != SIGALRM) {
		asked_ns = now_ns();
		asked_signal = sig;
	}
	stop_signal = sig;
	/* wake waitpid(): an interrupt stop of one thread will do */
	if (tr.procs.any_tid && !tr.launched_pid)
		ptrace(PTRACE_INTERRUPT, tr.procs.any_tid, 0L, 0L);
}

/* Called when stop_signal is set. */
static void serve_stop_request(void)
{
	stop_signal = 0;
	if (!tr.launched_pid) {
		if (!tr.detaching)
			start_detach();
		return;
	}
	/* -d expired: report now; the command runs on, unrecorded */
	if (sink_recording()) {
		sink_flush();
		timers_final_report();
		sink_set_recording(0);
		fflush(tr.cfg->out);
	}
}

/* ---- the loop ---- */

/* A wait status collected by collect_stops(), served by serve_wait(). */
struct wait_rec {
	pid_t pid;
	int status;
	uint64_t ns;		/* when waitpid() returned it */
};

static struct wait_rec *batch;
static size_t batch_cap;
static int sigchld_fd = -1;
static int no_children;

/*
 * Block SIGCHLD and read it through a signalfd: the loop sleeps in
 * poll() until a tracee changes state or a timer is due.  Without a
 * signalfd the loop polls every FALLBACK_MS.
 */
#define FALLBACK_MS 100

static int out_fd = -1;		/* the output, when a pipe: POLLERR once its reader is gone */

static void loop_init(void)
{
	int fd = outfile_fileno(tr.cfg->out);
	struct stat st;
	sigset_t set;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		out_fd = fd;

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
 * With block (may_block()), the first waitpid() sleeps until a stop
 * comes or a signal interrupts it; one thread alone has no other to
 * wait for after its stop.
 */
static size_t collect_stops(int block)
{
	size_t n = 0;

	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | (block && !stop_signal ? 0 : WNOHANG));

		if (pid == 0)
			break;
		if (pid < 0) {
			if (errno == EINTR && (!block || !stop_signal))
				continue;
			if (errno == ECHILD)
				no_children = 1;
			else if (errno != EINTR)
				perror_msg_and_die("waitpid");
			break;
		}
		batch = xgrowarray(batch, &batch_cap, n + 1, sizeof(*batch));
		batch[n].pid = pid;
		batch[n].status = status;
		batch[n].ns = now_ns();
		n++;
		if (block && tr.procs.nthreads <= 1)
			break;
		block = 0;
	}
	return n;
}

/* The earliest of the timers and the sources' drain times, 0 = none. */
static uint64_t next_due_ns(void)
{
	uint64_t t = timers_next_ns(), s = sources_next_ns();

	return !t || (s && s < t) ? s : t;
}

/*
 * Sleep until a tracee changes state, a signal comes, a source's fd is
 * readable, or a timer or a source is due.
 */
static void wait_for_stops(void)
{
	struct pollfd pfd[2 + SOURCES_MAX] = {
		{ .fd = sigchld_fd, .events = POLLIN },
		{ .fd = output_gone() ? -1 : out_fd, .events = 0 },
	};
	uint64_t next = next_due_ns(), now = now_ns();
	size_t n = 2 + sources_pollfds(pfd + 2);
	uint64_t left = (uint64_t)FALLBACK_MS * 1000000u;
	struct timespec ts;

	/* to the ns, not the ms of poll(): a source due in 200 us (a busy
	 * ring) is drained then, not 1 ms later */
	if (next && (next <= now || next - now < left))
		left = next > now ? next - now : 0;
	ts.tv_sec = (time_t)(left / 1000000000u);
	ts.tv_nsec = (long)(left % 1000000000u);
	if (stop_signal)
		return;
	if (ppoll(pfd, n, &ts, NULL) < 0) {
		if (errno != EINTR)
			perror_msg_and_die("poll");
		return;
	}
	/*
	 * A SIGCHLD came.  Taken now, before collect_stops()' waitpid()s:
	 * a stop after them sends another, which the next poll() sees.  Not
	 * taken while stops keep coming (the loop does not sleep then): one
	 * left pending only makes the next poll() return at once.  SIGCHLD
	 * is never queued twice: one read takes it.
	 */
	if (pfd[0].revents & POLLIN) {
		struct signalfd_siginfo si[4];

		if (read(sigchld_fd, si, sizeof(si)) < 0 && errno != EAGAIN && errno != EINTR)
			perror_msg_and_die("read of the SIGCHLD signalfd");
	}
	/* the reader of the output pipe is gone: no need to wait for a write */
	if (pfd[1].revents & POLLERR)
		output_fail(tr.cfg->out, NULL, EPIPE);
}

/*
 * May the loop sleep in a blocking waitpid() rather than in ppoll()?
 * Then only a stop or a signal wakes it, so only when nothing else can
 * be due: no timer, no source with an fd or a drain time, no output
 * pipe to watch, every probe in, not detaching.  A signal interrupts
 * the waitpid() (no SA_RESTART), and one that comes just before it
 * makes a stop that ends it (tracer_request_stop(): the command gets
 * the signal, or an attached thread a PTRACE_INTERRUPT).  One waitpid()
 * a stop (two with more threads, the second finding nothing) instead of
 * ppoll, the signalfd's read and three waitpid()s: what PTRACE_SYSCALL
 * mode pays per stop.
 */
static int may_block(void)
{
	struct pollfd pfd[SOURCES_MAX];

	return clock_ns && !stop_signal && !tr.detaching && out_fd < 0 &&
	       (tr.launched_pid || tr.procs.any_tid) && !timers_next_ns() &&
	       !sources_next_ns() && !sources_pollfds(pfd);
}

/* One wait status, returned by waitpid() at ns: a death, or a stop to handle. */
static void serve_wait(pid_t pid, int status, uint64_t ns)
{
	struct thread *tcp = procs_find(&tr.procs, pid);

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (!tcp)
			return;
		if (tracer_before_command_exec(pid))
			launch_failed();
		on_death(tcp, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	stops.total++;
	if (((unsigned)status >> 16) == PTRACE_EVENT_EXEC) {
		/* the image goes: unwind what was taken of the old one first */
		sources_exec(pid);
		sink_flush();
		if (!tcp) {
			/* exec by a non-leader whose leader we did not know */
			on_exec(NULL, pid);
			return;
		}
	}
	if (!tcp) {
		/* A new task whose parent's event has not come yet. */
		tcp = procs_new_thread(&tr.procs, pid, NULL);
		stop_began(tcp, status, ns);
		tcp->flags |= T_HELD | T_STOPPED | T_STARTED;
		stops.event++;
		if (tr.detaching && !sources_in_target())
			detach_thread(tcp, 0);
		return;
	}
	stop_began(tcp, status, ns);
	handle_stop(tcp, pid, status);
}

/* Is the reader of the output pipe gone?  Then no report is worth making. */
static void check_out_pipe(void)
{
	struct pollfd pfd = { .fd = out_fd, .events = 0 };

	if (out_fd >= 0 && !output_gone() && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR))
		output_fail(tr.cfg->out, NULL, EPIPE);
}

/* memtap agent: the loop waits for processes to come, until a signal. */
static int keep_running(void)
{
	return tr.cfg->agent && !tr.detaching && !stop_signal;
}

static int timer_due(void)
{
	uint64_t t = timers_next_ns();

	return t && now_ns() >= t;
}

/* Is every probe in: -d and -i count from then (see timers.c)? */
static int probes_armed(void)
{
	if (tr.launched_pid && !tr.launched_exec_seen)
		return 0;
	return !sources_arming();
}

int tracer_run(void)
{
	uint64_t left_ns;

	/*
	 * memtap's own sleeps to the microsecond, not the default 50 us
	 * late: a busy ring is drained when due (the command, forked
	 * already, keeps its own slack).
	 */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	timers_start(tr.cfg);
	loop_init();
	output_set_tracing(1);
	while (tr.procs.nthreads > 0 || keep_running()) {
		size_t n = collect_stops(may_block());

		for (size_t i = 0; i < n; i++)
			serve_wait(batch[i].pid, batch[i].status, batch[i].ns);
		/* detach before any long work of the round (drains, reports) */
		if (stop_signal && !tr.launched_pid)
			serve_stop_request();
		sources_drain(now_ns());
		/* every thread of the batch runs again: now unwind */
		sink_flush();
		sources_round_end();
		if (!clock_ns && probes_armed()) {
			clock_ns = now_ns();
			debug_msg("every probe in: -d and -i count from now");
			timers_armed();
		}
		if (timer_due())
			check_out_pipe();
		if (timer_due() && timers_serve() && !tr.detaching) {
			debug_msg("-d time over after %.1f ms", (double)(now_ns() - clock_ns) / 1e6);
			stop_signal = SIGALRM;
		}
		if (output_gone() && !tr.launched_pid && !tr.detaching)
			start_detach();
		if (stop_signal)
			serve_stop_request();
		if (tr.detaching)
			detach_progress();
		if ((!tr.procs.nthreads || no_children) && !keep_running())
			break;
		no_children = 0;	/* memtap agent: processes come later */
		if (!n)
			wait_for_stops();
	}
	left_ns = now_ns();	/* every thread left (attach mode) */
	sources_detach();
	sink_flush();
	output_set_tracing(0);
	timers_stop();
	if (tr.detach_ns)
		debug_msg("detached in %.1f ms, %.1f ms after the probes were in",
			  (double)(now_ns() - tr.detach_ns) / 1e6, (double)(now_ns() - clock_ns) / 1e6);
	if (verbose && asked_signal && !tr.launched_pid)
		verbose_msg("%s: every thread detached %.1f ms after it", strsignal(asked_signal),
			 (double)(left_ns - asked_ns) / 1e6);
	if (verbose)
		print_longest_stop();
	if (output_gone())
		return EXIT_RUNTIME;
	if (tr.launched_pid) {
		if (tr.launched_status < 0)
			return EXIT_RUNTIME;
		if (WIFSIGNALED(tr.launched_status))
			return 128 + WTERMSIG(tr.launched_status);
		return WEXITSTATUS(tr.launched_status);
	}
	return 0;
}

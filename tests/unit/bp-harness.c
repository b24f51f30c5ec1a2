/*
 * bp-harness.c - drive the breakpoint engine (breakpoint.c, remote.c,
 * elfsym.c) on a real process, outside memtap's tracer, and print exact
 * counts.
 *
 *   bp-harness [OPTIONS] -- CMD [ARGS]     launch CMD, probe, follow it
 *   bp-harness [OPTIONS] -p PID            attach, probe, detach after -d
 *   bp-harness [OPTIONS] -A -- CMD [ARGS]  start CMD untraced, then attach
 *                                          to it (-c cycles), wait for it
 *
 * Options:
 *   -a          probe malloc, calloc, realloc (with returns) and free
 *               (the default when no -s/-S is given)
 *   -s SPEC     probe SPEC (NAME or NAME@OBJECT) at entry only
 *   -S SPEC     probe SPEC with its return
 *   -P PREFIX   symbol prefix for -a (je_, _rjem_)
 *   -F F1,F2..  EXE counts calls made from these functions (by symbol
 *               address and size) instead of from the executable: for
 *               static binaries, where libc is in the executable too
 *   -d SECS     attach mode: detach after SECS (default 1)
 *   -c N        attach mode: N attach/probe/detach cycles
 *   -i SECS     -A: wait SECS before each attach (default 0.02)
 *   -K          -A: after the cycles, send CMD SIGUSR2 (alloc-loop then
 *               stops and reports) instead of waiting for its own end
 *   -V          attach mode: after each detach, check that the text of
 *               the executable and libc equals the files, that no
 *               scratch page is mapped and that no thread is stopped
 *   -o FILE     the report (default stdout)
 *   -v          debug messages
 *
 * Report lines:
 *   RESOLVED <spec> <address> <object>
 *   HIT <spec> <calls> <bytes> <returns>     every call
 *   EXE <spec> <calls> <bytes>               calls made from the executable
 *   LIVE <bytes>                             bytes the executable allocated
 *                                            and did not free
 *   STATS entries= returns= stale= lost= suppressed= unknown_frees=
 *   VERIFY ok|<what failed>                  (-V, per cycle)
 *
 * The launched command's exit status is the harness's; attach mode exits
 * 0, or 1 when a check failed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <linux/ptrace.h>

#include "arch/arch.h"
#include "probe/breakpoint.h"
#include "detach-check.h"
#include "probe/elfsym.h"
#include "util/error.h"
#include "linux/procfs.h"
#include "probe/remote.h"
#include "util/xmalloc.h"

#ifndef PTRACE_EVENT_STOP
# define PTRACE_EVENT_STOP 128
#endif

#define MAX_PROBES 32

enum probe_role { ROLE_NONE, ROLE_MALLOC, ROLE_CALLOC, ROLE_REALLOC, ROLE_FREE, ROLE_ENTRY };

struct probe {
	char *spec;
	int want_return;
	enum probe_role role;
	uint64_t addr;
	int inserted;
	uint64_t calls, bytes, returns;
	uint64_t exe_calls, exe_bytes;
};

/* One traced thread. */
struct tt {
	pid_t tid;
	int stopped;		/* in a ptrace-stop we have not resumed */
	int stop_ok;		/* that stop allows remote syscalls */
	int pass_sig;		/* signal to deliver when resumed or detached */
	int fixed;		/* detach: fixup done */
	int is_vfork;		/* a vfork child sharing our memory */
	int is_fork;		/* a fork child, to clean and detach */
	int held;		/* stopped before its parent's event */
	struct tt *next;
};

static struct probe probes[MAX_PROBES];
static int nprobes;
static struct tt *threads;
static pid_t target;		/* the process whose memory the set covers */
static struct bp_set *set;
static uint64_t entry_bp;	/* AT_ENTRY breakpoint after exec */
static int probes_armed;
static uint64_t exe_lo, exe_hi;
static FILE *rep;
static volatile sig_atomic_t stop_req;
static int launched;
static int exit_status = 99;
static uint64_t unknown_frees;
static char *caller_funcs;	/* -F */
static uint64_t caller_lo[32], caller_hi[32];
static int ncallers;

/* ---- live table: pointer -> size, open addressing ---- */

struct live { uint64_t ptr, size; };
static struct live *live_tab;
static size_t live_cap, live_n;
static uint64_t live_bytes;

static size_t live_slot(uint64_t p)
{
	return (size_t)((p * 0x9e3779b97f4a7c15ULL) >> 20) & (live_cap - 1);
}

static void live_add(uint64_t p, uint64_t size);

static void live_grow(void)
{
	struct live *old = live_tab;
	size_t oc = live_cap;

	live_cap = live_cap ? live_cap * 2 : 1024;
	live_tab = xcalloc(live_cap, sizeof(*live_tab));
	live_n = 0;
	live_bytes = 0;
	for (size_t i = 0; i < oc; i++)
		if (old[i].ptr)
			live_add(old[i].ptr, old[i].size);
	free(old);
}

static void live_add(uint64_t p, uint64_t size)
{
	size_t i;

	if (!p)
		return;
	if ((live_n + 1) * 2 > live_cap)
		live_grow();
	for (i = live_slot(p); live_tab[i].ptr; i = (i + 1) & (live_cap - 1))
		if (live_tab[i].ptr == p) {
			live_bytes -= live_tab[i].size;
			live_tab[i].size = size;
			live_bytes += size;
			return;
		}
	live_tab[i].ptr = p;
	live_tab[i].size = size;
	live_n++;
	live_bytes += size;
}

static int live_del(uint64_t p)
{
	size_t i, j;

	if (!live_cap || !p)
		return 0;
	for (i = live_slot(p); live_tab[i].ptr; i = (i + 1) & (live_cap - 1))
		if (live_tab[i].ptr == p)
			break;
	if (!live_tab[i].ptr)
		return 0;
	live_bytes -= live_tab[i].size;
	live_tab[i].ptr = 0;
	live_n--;
	/* re-insert the rest of the cluster */
	for (j = (i + 1) & (live_cap - 1); live_tab[j].ptr; j = (j + 1) & (live_cap - 1)) {
		struct live e = live_tab[j];

		live_tab[j].ptr = 0;
		live_n--;
		live_bytes -= e.size;
		live_add(e.ptr, e.size);
	}
	return 1;
}

/* ---- threads ---- */

static struct tt *tt_find(pid_t tid)
{
	for (struct tt *t = threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct tt *tt_add(pid_t tid)
{
	struct tt *t = xcalloc(1, sizeof(*t));

	t->tid = tid;
	t->next = threads;
	threads = t;
	return t;
}

static void tt_del(pid_t tid)
{
	for (struct tt **pp = &threads; *pp; pp = &(*pp)->next)
		if ((*pp)->tid == tid) {
			struct tt *t = *pp;

			*pp = t->next;
			free(t);
			return;
		}
}

static void resume(struct tt *t, int sig)
{
	t->stopped = 0;
	t->stop_ok = 0;
	if (ptrace(PTRACE_CONT, t->tid, 0L, (long)sig) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_CONT, %d)", t->tid);
}

static void detach_one(struct tt *t, int sig)
{
	if (ptrace(PTRACE_DETACH, t->tid, 0L, (long)sig) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_DETACH, %d)", t->tid);
	tt_del(t->tid);
}

/* ---- probes ---- */

static void add_probe(const char *spec, int want_return, enum probe_role role)
{
	if (nprobes == MAX_PROBES)
		error_msg_and_die("too many probes");
	probes[nprobes].spec = xstrdup(spec);
	probes[nprobes].want_return = want_return;
	probes[nprobes].role = role;
	nprobes++;
}

static void arm_probes(pid_t tid)
{
	struct elfsym_proc *ep = elfsym_proc_load(target);

	if (!ep) {
		perror_msg("cannot read the objects of pid %d", target);
		return;
	}
	const struct elfsym_module *exe = elfsym_proc_module(ep, 0);

	if (exe) {
		exe_lo = exe->lo;
		exe_hi = exe->hi;
	}
	if (caller_funcs) {
		char *list = xstrdup(caller_funcs), *save = NULL;

		ncallers = 0;
		for (char *f = strtok_r(list, ",", &save); f && ncallers < 32;
		     f = strtok_r(NULL, ",", &save)) {
			struct elfsym_result r;

			if (elfsym_lookup(ep, f, NULL, &r) < 0 || !r.size) {
				fprintf(rep, "CALLER %s none\n", f);
				continue;
			}
			caller_lo[ncallers] = r.addr;
			caller_hi[ncallers++] = r.addr + r.size;
		}
		free(list);
	}
	for (int i = 0; i < nprobes; i++) {
		struct probe *pr = &probes[i];
		struct elfsym_result r;
		int err;

		pr->inserted = 0;
		if (elfsym_lookup(ep, pr->spec, NULL, &r) < 0) {
			fprintf(rep, "RESOLVED %s none\n", pr->spec);
			continue;
		}
		pr->addr = r.addr;
		fprintf(rep, "RESOLVED %s %#" PRIx64 " %s %s\n", pr->spec, r.addr,
			r.module->path, r.name);
		err = bp_insert(set, tid, r.addr, pr->want_return, pr);
		if (err == -EEXIST) {
			fprintf(rep, "ALIAS %s\n", pr->spec);
			continue;
		}
		if (err < 0) {
			error_msg("bp_insert %s at %#" PRIx64 ": %s", pr->spec, r.addr,
				  strerror(-err));
			continue;
		}
		pr->inserted = 1;
	}
	elfsym_proc_free(ep);
	probes_armed = 1;
	fflush(rep);
}

static int from_exe(uint64_t caller)
{
	if (!caller_funcs)
		return caller >= exe_lo && caller < exe_hi;
	for (int i = 0; i < ncallers; i++)
		if (caller > caller_lo[i] && caller <= caller_hi[i])
			return 1;
	return 0;
}

static void account(const struct bp_hit *h)
{
	struct probe *pr = h->cookie;
	uint64_t bytes = 0;
	int exe = from_exe(h->caller);

	if (!pr)
		return;
	if (h->kind == BP_HIT_ENTRY) {
		switch (pr->role) {
		case ROLE_MALLOC: bytes = h->args[0]; break;
		case ROLE_CALLOC: bytes = h->args[0] * h->args[1]; break;
		case ROLE_REALLOC: bytes = h->args[1]; break;
		case ROLE_FREE:
			if (exe && h->args[0] && !live_del(h->args[0]))
				unknown_frees++;
			break;
		default: break;
		}
		pr->calls++;
		pr->bytes += bytes;
		if (exe) {
			pr->exe_calls++;
			pr->exe_bytes += bytes;
		}
		return;
	}
	pr->returns++;
	if (!exe)
		return;
	switch (pr->role) {
	case ROLE_MALLOC:
		live_add(h->retval, h->args[0]);
		break;
	case ROLE_CALLOC:
		live_add(h->retval, h->args[0] * h->args[1]);
		break;
	case ROLE_REALLOC:
		if (h->args[0] && (h->retval || h->args[1] == 0))
			live_del(h->args[0]);
		live_add(h->retval, h->args[1]);
		break;
	default:
		break;
	}
}

/* ---- verification after detach ---- */

/* Compare the executable PT_LOADs of path (mapped with bias) with memory. */
static int compare_text(pid_t pid, const char *path, uint64_t bias)
{
	struct text_diff d;
	int r = text_compare(pid, path, bias, &d);

	if (r == 1)
		fprintf(rep, "DIFF %s +%#zx file %02x mem %02x\n", path, d.addr, d.file, d.mem);
	return r == -2 ? -1 : r;
}

static int verify(pid_t pid, const uint64_t *pages, size_t npages)
{
	struct elfsym_proc *ep = elfsym_proc_load(pid);
	struct procfs_map *maps;
	size_t nmaps;
	int ok = 1, checked = 0;

	for (size_t i = 0; ep && i < elfsym_proc_nmodules(ep); i++) {
		const struct elfsym_module *m = elfsym_proc_module(ep, i);
		const char *base = strrchr(m->path, '/');

		if (m->scope != 0 && !(base && strncmp(base, "/libc.so", 8) == 0))
			continue;
		int r = compare_text(pid, m->path, m->bias);

		checked++;
		if (r != 0) {
			fprintf(rep, "VERIFY text differs in %s (%d)\n", m->path, r);
			ok = 0;
		}
	}
	elfsym_proc_free(ep);
	if (checked == 0) {
		fprintf(rep, "VERIFY no text checked\n");
		ok = 0;
	}
	if (procfs_read_maps(pid, &maps, &nmaps) == 0) {
		for (size_t k = 0; k < nmaps; k++)
			for (size_t i = 0; i < npages; i++)
				if (maps[k].start <= pages[i] && pages[i] < maps[k].end) {
					fprintf(rep, "VERIFY scratch page %#" PRIx64 " still mapped\n",
						pages[i]);
					ok = 0;
				}
		procfs_maps_free(maps);
	}
	for (int i = 0; i < 100; i++) {
		if (traced_threads(pid) <= 0)
			break;
		if (i == 99) {
			fprintf(rep, "VERIFY a thread is still stopped or traced\n");
			ok = 0;
		}
		usleep(10000);
	}
	fprintf(rep, "VERIFY %s\n", ok ? "ok" : "failed");
	fflush(rep);
	return ok;
}

/* The STATS line of the breakpoint set. */
static void report_stats(void)
{
	struct bp_stats st;

	bp_get_stats(set, &st);
	fprintf(rep, "STATS entries=%" PRIu64 " returns=%" PRIu64 " stale=%" PRIu64
		" lost=%" PRIu64 " suppressed=%" PRIu64 " unknown_frees=%" PRIu64 "\n",
		st.entries, st.returns, st.stale, st.lost, st.suppressed, unknown_frees);
}

/* ---- the event loop ---- */

static void on_signal(int sig)
{
	(void)sig;
	stop_req = 1;
	if (target)
		ptrace(PTRACE_INTERRUPT, target, 0L, 0L);
}

static int detaching;

/* A fork child in its first stop, already cleaned: unmap, let it go. */
static void release_fork_child(struct tt *t)
{
	int err = set ? bp_unmap_fork_child(set, t->tid) : 0;

	if (err < 0)
		error_msg("unmapping in fork child %d: %s", t->tid, strerror(-err));
	detach_one(t, 0);
}

static void on_new_task(struct tt *t, int event)
{
	unsigned long msg = 0;
	struct tt *c;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0L, &msg) < 0 || !msg)
		return;
	c = tt_find((pid_t)msg);
	if (!c)
		c = tt_add((pid_t)msg);
	c->is_fork = event == PTRACE_EVENT_FORK;
	c->is_vfork = event == PTRACE_EVENT_VFORK;
	if (c->is_fork && set) {
		/* now, while the parent's return entries are those at fork */
		int err = bp_clean_fork_child(set, c->tid);

		if (err < 0)
			error_msg("cleaning fork child %d: %s", c->tid, strerror(-err));
	}
	if (c->held) {
		c->held = 0;
		if (c->is_fork)
			release_fork_child(c);
		else if (detaching)
			c->stop_ok = 1;	/* its first stop: PTRACE_EVENT_STOP */
		else
			resume(c, 0);
	}
}

/* After exec the address space is new: forget the set, break at AT_ENTRY. */
static void on_exec(struct tt *t)
{
	if (t->is_vfork) {
		/* the vfork child left our memory: let it go */
		if (set)
			bp_thread_gone(set, t->tid);
		detach_one(t, 0);
		return;
	}
	bp_set_free(set);
	set = bp_set_new(t->tid);
	target = t->tid;
	probes_armed = 0;
	entry_bp = 0;
	/* an injected syscall needs a stop outside the syscall: interrupt */
	ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L);
	resume(t, 0);
}

static void handle_stop(struct tt *t, int status)
{
	int sig = WSTOPSIG(status), event = (unsigned)status >> 16;
	arch_regs_t regs;
	struct bp_hit h;

	t->stopped = 1;
	t->stop_ok = 0;
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		on_new_task(t, event);
		if (!detaching)
			resume(t, 0);
		return;
	case PTRACE_EVENT_EXEC:
		if (detaching) {
			return;
		}
		on_exec(t);
		return;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			if (!detaching) {
				t->stopped = 0;
				ptrace(PTRACE_LISTEN, t->tid, 0L, 0L);
			}
			return;
		}
		t->stop_ok = 1;
		if (detaching)
			return;
		if (set && !probes_armed && !entry_bp && t->tid == target) {
			uint64_t e = procfs_auxv_entry(target);
			int err = e ? bp_insert(set, t->tid, e, 0, NULL) : -ENOENT;

			if (err < 0)
				error_msg("cannot break at the entry point: %s", strerror(-err));
			else
				entry_bp = e;
		}
		resume(t, 0);
		return;
	case 0:
		break;
	default:
		if (!detaching)
			resume(t, 0);
		return;
	}
	/* a signal-delivery-stop */
	if (sig == SIGTRAP && set && ptrace(PTRACE_GETREGS, t->tid, 0L, &regs) == 0) {
		int r = bp_hit(set, t->tid, &regs, &h);

		if (r > 0) {
			t->stop_ok = 1;
			if (r == BP_HIT_ENTRY && h.addr == entry_bp && !h.cookie) {
				if (!probes_armed)
					arm_probes(t->tid);
			} else if (r != BP_HIT_SUPPRESS) {
				account(&h);
			}
			if (!detaching)
				resume(t, 0);
			return;
		}
		if (r < 0)
			error_msg("bp_hit tid %d: %s", t->tid, strerror(-r));
	}
	t->stop_ok = 1;
	if (detaching) {
		t->pass_sig = sig;
		return;
	}
	resume(t, sig);
}

/* One waitpid and its handling.  0, or -1 when nothing is left. */
static int wait_one(void)
{
	int status;
	pid_t pid = waitpid(-1, &status, __WALL);
	struct tt *t;

	if (pid < 0)
		return errno == EINTR ? 0 : -1;
	t = tt_find(pid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (set)
			bp_thread_gone(set, pid);
		if (pid == target) {
			exit_status = WIFEXITED(status) ? WEXITSTATUS(status) :
				      128 + WTERMSIG(status);
			if (launched)
				fprintf(rep, "EXIT %d\n", exit_status);
		}
		tt_del(pid);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	if (!t) {
		/* a new task before its parent's event */
		t = tt_add(pid);
		t->stopped = 1;
		t->held = 1;
		return 0;
	}
	if (t->held)
		return 0;
	if ((t->is_fork) && ((unsigned)status >> 16) == PTRACE_EVENT_STOP) {
		release_fork_child(t);
		return 0;
	}
	handle_stop(t, status);
	return 0;
}

/* Stop every thread, move them out of memtap's code, undo, detach. */
static int detach_all(int check)
{
	uint64_t pages[16];
	size_t npages = 0;
	pid_t pid = target;
	int ok = 1;

	detaching = 1;
	for (struct tt *t = threads; t; t = t->next)
		if (!t->stopped)
			ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L);
	for (;;) {
		int all = 1;

		for (struct tt *t = threads; t; t = t->next) {
			if (!t->stopped || t->held) {
				all = 0;
				continue;
			}
			if (t->is_fork)
				continue;
			if (!t->fixed && set) {
				int r = bp_thread_fixup_for_detach(set, t->tid);

				if (r == 1) {
					resume(t, 0);	/* its queued SIGTRAP comes next */
					all = 0;
					continue;
				}
				t->fixed = 1;
			}
		}
		if (all)
			break;
		if (wait_one() < 0)
			break;
	}
	if (set) {
		pid_t good = threads ? threads->tid : target;
		int err;

		npages = bp_scratch_pages(set, pages, 16);
		/* the pages are unmapped by a syscall: a thread at a good stop */
		for (struct tt *t = threads; t; t = t->next)
			if (t->stop_ok && !t->is_fork) {
				good = t->tid;
				break;
			}
		err = bp_remove_all(set, good);
		for (struct tt *t = threads; t && err == -EBUSY; t = t->next)
			err = bp_unmap_scratch(set, t->tid);
		if (err < 0) {
			error_msg("bp_remove_all: %s", strerror(-err));
			ok = 0;
		}
		report_stats();
		bp_set_free(set);
		set = NULL;
	}
	while (threads) {
		struct tt *t = threads;
		int sig = t->pass_sig == SIGTRAP ? 0 : t->pass_sig;

		detach_one(t, sig);
	}
	detaching = 0;
	if (check && pid)
		ok &= verify(pid, pages, npages < 16 ? npages : 16);
	return ok;
}

static void report(void)
{
	for (int i = 0; i < nprobes; i++) {
		struct probe *pr = &probes[i];

		fprintf(rep, "HIT %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", pr->spec, pr->calls,
			pr->bytes, pr->returns);
		fprintf(rep, "EXE %s %" PRIu64 " %" PRIu64 "\n", pr->spec, pr->exe_calls,
			pr->exe_bytes);
	}
	fprintf(rep, "LIVE %" PRIu64 "\n", live_bytes);
	if (set)
		report_stats();
	fflush(rep);
}

static int attach(pid_t pid)
{
	int found;

	target = pid;
	do {
		char path[64];
		DIR *d;
		struct dirent *de;

		found = 0;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		d = opendir(path);
		if (!d)
			return -1;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);

			if (tid <= 0 || tt_find(tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0L,
				   PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
				   PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC) < 0) {
				char state;
				unsigned long flags;

				if (errno == ESRCH)
					continue;
				/* an exiting thread refuses with EPERM */
				if (errno == EPERM && (procfs_stat_state(tid, &state, &flags) < 0 ||
						       state == 'Z' || state == 'X'))
					continue;
				perror_msg("ptrace(PTRACE_SEIZE, %d)", tid);
				closedir(d);
				return -1;
			}
			ptrace(PTRACE_INTERRUPT, tid, 0L, 0L);
			tt_add(tid);
			found = 1;
		}
		closedir(d);
	} while (found);
	/* wait for every first stop */
	for (;;) {
		int all = 1;

		for (struct tt *t = threads; t; t = t->next)
			if (!t->stopped)
				all = 0;
		if (all)
			break;
		int status;
		pid_t w = waitpid(-1, &status, __WALL);
		struct tt *t = w > 0 ? tt_find(w) : NULL;

		if (w < 0 && errno != EINTR)
			return -1;
		if (!t)
			continue;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			tt_del(w);
			continue;
		}
		t->stopped = 1;
		t->stop_ok = ((unsigned)status >> 16) == PTRACE_EVENT_STOP;
		if (!((unsigned)status >> 16) && WSTOPSIG(status) != SIGTRAP)
			t->pass_sig = WSTOPSIG(status);
	}
	if (!threads) {
		error_msg("pid %d has no thread left to attach to", pid);
		return -1;
	}
	set = bp_set_new(pid);
	struct tt *leader = tt_find(pid);

	arm_probes(leader ? pid : threads->tid);
	for (struct tt *t = threads; t; t = t->next) {
		int sig = t->pass_sig;

		t->pass_sig = 0;
		resume(t, sig);
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pid_t launch(char **argv)
{
	int go[2];
	char c = 0;
	pid_t pid;

	if (pipe(go) < 0)
		perror_msg_and_die("pipe");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	if (ptrace(PTRACE_SEIZE, pid, 0L, PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
		   PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL) < 0)
		perror_msg_and_die("ptrace(PTRACE_SEIZE, %d)", pid);
	tt_add(pid);
	target = pid;
	if (write(go[1], &c, 1) != 1)
		perror_msg_and_die("write");
	close(go[1]);
	return pid;
}

int main(int argc, char **argv)
{
	double secs = 1, pause = 0.02;
	int start_untraced = 0, stop_target = 0;
	int cycles = 1, check = 0, opt, alloc = 0, ok = 1;
	const char *prefix = "", *outfile = NULL;
	pid_t pid = 0;

	program_name = "bp-harness";
	while ((opt = getopt(argc, argv, "+aAs:S:P:F:d:c:i:KVo:vp:")) != -1) {
		switch (opt) {
		case 'a': alloc = 1; break;
		case 's': add_probe(optarg, 0, ROLE_ENTRY); break;
		case 'S': add_probe(optarg, 1, ROLE_ENTRY); break;
		case 'P': prefix = optarg; break;
		case 'F': caller_funcs = optarg; break;
		case 'A': start_untraced = 1; break;
		case 'K': stop_target = 1; break;
		case 'i': pause = atof(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 'c': cycles = atoi(optarg); break;
		case 'V': check = 1; break;
		case 'o': outfile = optarg; break;
		case 'v': verbose++; break;
		case 'p': pid = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bp-harness [-a] [-s SPEC] [-S SPEC] [-P PREFIX] "
				"[-d SECS] [-c N] [-V] [-o FILE] (-p PID | -- CMD...)\n");
			return 64;
		}
	}
	if (alloc || nprobes == 0) {
		static const struct {
			const char *name;
			enum probe_role role;
		} fns[] = {
			{ "malloc", ROLE_MALLOC },
			{ "calloc", ROLE_CALLOC },
			{ "realloc", ROLE_REALLOC },
			{ "free", ROLE_FREE },
		};

		for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
			char *n = xasprintf("%s%s", prefix, fns[i].name);

			add_probe(n, fns[i].role != ROLE_FREE, fns[i].role);
			free(n);
		}
	}
	rep = outfile ? fopen(outfile, "w") : stdout;
	if (!rep)
		perror_msg_and_die("%s", outfile);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGALRM, on_signal);

	if (start_untraced) {
		if (optind >= argc)
			usage_error("-A needs a command");
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			perror_msg_and_die("fork");
		if (pid == 0) {
			execvp(argv[optind], argv + optind);
			_exit(127);
		}
	}
	if (!pid) {
		if (optind >= argc)
			usage_error("no command and no -p");
		launch(argv + optind);
		launched = 1;
		while (threads && wait_one() == 0)
			;
		report();
		return exit_status;
	}
	for (int c = 0; c < cycles; c++) {
		double end;

		if (start_untraced && pause > 0)
			usleep((useconds_t)(pause * 1e6));
		if (attach(pid) < 0) {
			ok = 0;
			break;
		}
		struct itimerval it = { { 0, 0 }, { (time_t)secs,
				(suseconds_t)((secs - (time_t)secs) * 1e6) + 1 } };

		end = now() + secs;
		setitimer(ITIMER_REAL, &it, NULL);
		while (!stop_req && now() < end && threads)
			if (wait_one() < 0)
				break;
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		stop_req = 0;
		if (!threads)
			break;
		ok &= detach_all(check);
		fprintf(rep, "CYCLE %d\n", c + 1);
	}
	report();
	if (start_untraced) {
		int status;

		/* unless it exited while traced (then wait_one reaped it) */
		if (exit_status == 99 && stop_target)
			kill(pid, SIGUSR2);
		if (exit_status == 99) {
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			exit_status = WIFEXITED(status) ? WEXITSTATUS(status) :
				      128 + WTERMSIG(status);
		}
		fprintf(rep, "EXIT %d\n", exit_status);
		fflush(rep);
		return ok ? exit_status : 1;
	}
	return ok ? 0 : 1;
}

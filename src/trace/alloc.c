/*
 * alloc.c - breakpoint probes in the tracer: when they go in, which
 * hits are theirs, and how they come out.
 *
 * When probes go in:
 *   - attach: once every thread of the process has stopped (parked at
 *     its first PTRACE_EVENT_STOP, or in a group-stop), through one of
 *     them; then the parked threads run on;
 *   - exec (launch mode's first exec included): the old breakpoints went
 *     with the old image.  No syscall can be injected at the exec stop
 *     itself: interrupt the thread, and at that PTRACE_EVENT_STOP (before
 *     the first instruction of the new image) put a breakpoint at the
 *     entry point (AT_ENTRY).  When it is hit, ld.so has mapped every
 *     DT_NEEDED library and LD_PRELOAD: resolve and insert the probes;
 *   - dlopen and dlclose: a breakpoint on ld.so's _dl_debug_state, which
 *     ld.so calls before and after each change of the library list:
 *     probes not yet found are looked up again, breakpoints whose code
 *     is no longer mapped are forgotten, and the module list is marked
 *     changed (this is how attach mode learns of ld.so's own mmaps);
 *   - code mapped (launch mode: the seccomp filter stops at mmap and
 *     mprotect with PROT_EXEC, see syscalls.c): while a probe is not
 *     found, the thread is interrupted and at that stop the probes are
 *     looked up again, which also covers code mapped without ld.so;
 *   - fork: the child's copy of the memory is cleaned at the parent's
 *     fork event (bp_clean_fork_child()) and its copies of the scratch
 *     pages unmapped at its first stop; a followed child (launch mode,
 *     or -f) then gets probes of its own, else it is detached;
 *   - vfork (and posix_spawn): the child runs in its parent's memory,
 *     int3 bytes included: its hits go to the parent's set, and it
 *     leaves that set at exec or exit.
 *
 * What a hit means: alloc-hits.c.  This file is the breakpoint source
 * (source.h): the loop offers it the SIGTRAP stops.
 *
 * How they come out: see detach.c and alloc_space_remove().
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <linux/ptrace.h>

#include <sys/wait.h>

#include "trace/alloc.h"
#include "trace/alloc-detour.h"
#include "trace/attach.h"
#include "trace/source.h"
#include "probe/breakpoint.h"
#include "probe/elfsym.h"
#include "util/error.h"
#include "trace/memtap.h"
#include "stack/modules.h"
#include "probe/probes.h"
#include "probe/remote.h"
#include "util/xmalloc.h"

enum space_state {
	SP_NEW,			/* exec'd: entry breakpoint at the next interrupt stop */
	SP_AT_ENTRY,		/* entry breakpoint in, not hit yet */
	SP_WAIT_ARM,		/* attached: waiting for every thread to stop */
	SP_ARMED,		/* probes in */
	SP_WAIT_REARM,		/* armed, new code mapped: waiting for every thread to stop */
};

struct site {
	uint64_t addr;
	const struct probe *probe;
};

struct alloc_space {
	int refs;		/* processes using it, fork children to clean */
	pid_t pid;		/* the process that owns the memory */
	struct bp_set *set;	/* NULL once removed (detach) */
	enum space_state state;
	uint64_t entry;		/* entry point breakpoint, 0 = none */
	uint64_t dl_state;	/* _dl_debug_state breakpoint, 0 = none */
	struct site *sites;	/* probes inserted */
	size_t nsites;
	int refused;		/* its seccomp filters forbid a scratch page */
	size_t pending;		/* probes (not optional) not found yet */
	int rearm;		/* code was mapped: look again at the next interrupt stop */
	struct alloc_detours *dt;	/* in-target probes, or NULL */
	struct alloc_space *next;
};

/* Cookies of memtap's own breakpoints. */
static char entry_cookie, dl_cookie;

static int enabled;
static int armed_once;
static struct alloc_space *spaces;
static struct procs *procs;		/* every traced thread */
static const struct trace_config *cfg;

static enum stop_verdict alloc_stop(void *self, struct thread *tcp, int status);

static const struct source_ops breakpoints_ops = {
	.name = "breakpoints",
	.stop = alloc_stop,
};

int alloc_init(struct procs *pt, const struct trace_config *config, int syscall_wrappers)
{
	procs = pt;
	cfg = config;
	probes_init(events_to_trace(), cfg->symbol_prefix, syscall_wrappers);
	enabled = probes_any();
	source_register(&breakpoints_ops, NULL);
	return enabled;
}

int alloc_enabled(void)
{
	return enabled;
}

/* ---- spaces ---- */

static struct alloc_space *space_new(pid_t pid, enum space_state state)
{
	struct alloc_space *s = xcalloc(1, sizeof(*s));

	s->refs = 1;
	s->pid = pid;
	s->set = bp_set_new(pid);
	s->state = state;
	s->next = spaces;
	spaces = s;
	return s;
}

/* Drop a reference; the last one frees it (never touching the target). */
static void space_put(struct alloc_space *s)
{
	if (!s || --s->refs > 0)
		return;
	for (struct alloc_space **pp = &spaces; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	bp_set_free(s->set);
	alloc_detours_free(s->dt);
	free(s->sites);
	free(s);
}

struct alloc_space *alloc_active_space(const struct proc *p)
{
	return p && p->alloc && p->alloc->set ? p->alloc : NULL;
}

struct bp_set *alloc_bp_set(const struct proc *p)
{
	struct alloc_space *s = alloc_active_space(p);

	return s ? s->set : NULL;
}

int alloc_any_active(void)
{
	for (struct alloc_space *s = spaces; s; s = s->next)
		if (s->set)
			return 1;
	return 0;
}

/* ---- inserting ---- */

/*
 * bp_insert() said -EPERM and remote_refusal() why: the process's
 * seccomp filters forbid the syscalls of a scratch page (remote.h).  No
 * probe goes in.
 */
static void refuse(struct alloc_space *s, struct proc *p)
{
	if (!s->refused)
		attach_refuse_probes(cfg, procs, p, remote_refusal(), 0);
	s->refused = 1;
	s->state = SP_ARMED;
}

static void site_add(struct alloc_space *s, uint64_t addr, const struct probe *pr)
{
	s->sites = xrealloc(s->sites, (s->nsites + 1) * sizeof(*s->sites));
	s->sites[s->nsites].addr = addr;
	s->sites[s->nsites].probe = pr;
	s->nsites++;
}

/*
 * Look up and insert every probe not in yet, through tcp.  silent: no
 * message for missing symbols (a re-resolution after dlopen).  Returns
 * how many probes are in (aliases included).
 */
static size_t insert_probes(struct alloc_space *s, struct thread *tcp,
			    struct elfsym_proc *ep, int silent)
{
	size_t in = 0;

	s->pending = 0;
	for (size_t i = 0; i < probes_count(); i++) {
		struct probe *pr = probes_get(i);
		struct elfsym_result r;
		int err;

		if (elfsym_lookup(ep, pr->spec, NULL, &r) < 0) {
			if (!pr->optional)
				s->pending++;
			if (!silent && !pr->optional && !pr->reported) {
				warn_msg("cannot probe '%s' in process %d (%s): no such function "
					 "in the executable or its libraries (libraries it loads "
					 "later are searched too)", pr->spec, s->pid, tcp->proc->rec->comm);
				pr->reported = 1;
			}
			continue;
		}
		pr->found = 1;
		if (bp_at(s->set, r.addr) || alloc_detours_at(s->dt, r.addr)) {
			in++;	/* in already, or an alias of one that is */
			continue;
		}
		if (r.ifunc) {
			if (!pr->reported)
				warn_msg("cannot probe '%s' in process %d: %s is an IFUNC resolver",
					 pr->spec, s->pid, r.name);
			pr->reported = 1;
			continue;
		}
		if (alloc_detours_insert(s->dt, procs, tcp, pr, &r)) {
			site_add(s, r.addr, pr);
			in++;
			continue;
		}
		err = bp_insert(s->set, tcp->tid, r.addr, pr->want_return, pr);
		if (err == -EEXIST) {
			in++;
			continue;
		}
		if (err == -EPERM && remote_refusal()) {
			refuse(s, tcp->proc);
			break;
		}
		if (err < 0) {
			if (!pr->reported)
				warn_msg("cannot probe '%s' at %#" PRIx64 " in %s (process %d): %s",
					 pr->spec, r.addr, r.module->path, s->pid, strerror(-err));
			pr->reported = 1;
			continue;
		}
		debug_msg("process %d: probe %s at %#" PRIx64 " (%s in %s)", s->pid, pr->spec,
			  r.addr, r.name, r.module->path);
		site_add(s, r.addr, pr);
		in++;
	}
	return in;
}

/*
 * Attach mode, every probe an allocator function or a syscall wrapper
 * found and detoured:
 * a library loaded later cannot bind these names anew, and an int3 on
 * _dl_debug_state would kill the process at its next dlopen if memtap
 * died (the detours do not): leave it out.  Attach mode learns of new
 * libraries when a pc is in none it knows.
 */
static int dl_state_needless(const struct alloc_space *s)
{
	if (!cfg->npids || !s->dt || s->pending)
		return 0;
	for (size_t i = 0; i < s->nsites; i++)
		if (!alloc_detours_at(s->dt, s->sites[i].addr))
			return 0;
	for (size_t i = 0; i < probes_count(); i++)
		if (probes_get(i)->role == PR_USER)
			return 0;
	return 1;
}

/* Put the probes in through tcp (at a stop where syscalls can be injected). */
static void arm(struct alloc_space *s, struct thread *tcp)
{
	struct elfsym_proc *ep = elfsym_proc_load(s->pid);
	struct elfsym_result r;
	size_t in = 0;

	s->state = SP_ARMED;
	if (!ep) {
		error_msg("cannot read the objects of process %d: %s", s->pid, strerror(errno));
	} else {
		if (!s->dt && !s->refused)
			s->dt = alloc_detours_arm(cfg, procs, tcp, ep);
		in = insert_probes(s, tcp, ep, 0);
		alloc_detours_sync_points(s->dt, procs, tcp, ep);
		/* attached, a sync point if it can be: an int3 outlives memtap */
		if (!s->refused && !s->dl_state && !dl_state_needless(s) &&
		    elfsym_lookup(ep, "_dl_debug_state", NULL, &r) == 0 &&
		    ((cfg->npids && alloc_detours_dl_point(s->dt, procs, tcp, &r)) ||
		     bp_insert(s->set, tcp->tid, r.addr, 0, &dl_cookie) == 0))
			s->dl_state = r.addr;
		elfsym_proc_free(ep);
	}
	if (tcp->proc->rec->modules)
		modules_map_changed(tcp->proc->rec->modules);
	if (!armed_once) {
		armed_once = 1;
		/* a --probe may be in a library loaded later: run, and tell at the end */
		if (!in && !s->refused && !probes_user_pending())
			error_msg_and_die("nothing to probe in process %d (%s): none of the "
					  "functions asked for was found", s->pid, tcp->proc->rec->comm);
	}
}

/* After _dl_debug_state: new libraries, or libraries gone. */
static void rearm(struct alloc_space *s, struct thread *tcp)
{
	struct elfsym_proc *ep = elfsym_proc_load(s->pid);
	size_t kept = 0;

	s->rearm = 0;
	if (!ep)
		return;
	/* dlclose: forget breakpoints whose code is gone */
	for (size_t i = 0; i < s->nsites; i++) {
		if (elfsym_module_at(ep, s->sites[i].addr)) {
			s->sites[kept++] = s->sites[i];
			continue;
		}
		debug_msg("process %d: %s at %#" PRIx64 " unmapped", s->pid,
			  s->sites[i].probe->spec, s->sites[i].addr);
		bp_forget(s->set, s->sites[i].addr);
		alloc_detours_forget(s->dt, s->sites[i].addr);
	}
	s->nsites = kept;
	insert_probes(s, tcp, ep, 1);
	elfsym_proc_free(ep);
}

/* ---- attach, and new code mapped: arm once every thread has stopped ---- */

/* gone: a thread that exits, still in the list */
static void try_arm(struct alloc_space *s, struct thread *cur, int cur_listening,
		    const struct thread *gone)
{
	struct thread *t, *use = NULL;
	size_t it = 0;
	int n = 0;

	while ((t = procs_next_thread(procs, &it))) {
		if (!t->proc || t->proc->alloc != s || t == gone)
			continue;
		n++;
		if (t->flags & T_PARKED) {
			if (!use || t->tid == s->pid)
				use = t;
			continue;
		}
		if ((t->flags & T_LISTENING) || (t == cur && cur_listening))
			continue;
		return;		/* not stopped yet */
	}
	if (!use) {
		/* all in a group-stop: the probes go in when it continues */
		info_msg("attached to process %d (%s), %d thread%s; it is stopped: probes "
			 "go in when it continues", cur->proc->pid, cur->proc->rec->comm, n, n == 1 ? "" : "s");
		return;
	}
	if (s->state == SP_WAIT_REARM) {
		s->state = SP_ARMED;
		rearm(s, use);
		/* a dlopen or dlclose waits in _dl_debug_state's stub */
		alloc_detours_release(s->dt);
		debug_msg("process %d: %d threads stopped for the probes of new code", s->pid, n);
	} else {
		arm(s, use);
		info_msg("attached to process %d (%s), %d thread%s", use->proc->pid,
			 use->proc->rec->comm, n, n == 1 ? "" : "s");
		debug_msg("process %d: %zu probes in", s->pid, s->nsites);
	}
	it = 0;
	while ((t = procs_next_thread(procs, &it)))
		if (t->proc && t->proc->alloc == s && (t->flags & T_PARKED)) {
			t->flags &= ~T_PARKED;
			tracer_resume(t, 0);
		}
}

/*
 * New code is mapped (a dlopen): its probes become detours only while
 * every thread is stopped.  With others running (none group-stopped,
 * whose stop memtap would have to take and give back), they are
 * interrupted and tcp waits parked with them: try_arm() puts the
 * probes in once all are.  Returns 1 then, 0 when tcp may go on (the
 * probes are in).
 */
static int rearm_stopped(struct alloc_space *s, struct thread *tcp)
{
	struct thread *t;
	size_t it = 0;
	int running = 0;

	while (s->dt && (t = procs_next_thread(procs, &it))) {
		if (!t->proc || t->proc->alloc != s || t == tcp)
			continue;
		if (t->flags & (T_LISTENING | T_HELD | T_VFORK_WAIT)) {
			running = 0;	/* a detour waits for nothing: int3 for now */
			break;
		}
		if (!(t->flags & T_STOPPED))
			running = 1;
	}
	if (!running) {
		rearm(s, tcp);
		return 0;
	}
	/* the stopped ones too: a stop of this round, resumed later, stops again */
	it = 0;
	while ((t = procs_next_thread(procs, &it)))
		if (t->proc && t->proc->alloc == s && t != tcp && !(t->flags & T_PARKED) &&
		    ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L) < 0 && errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", t->tid);
	s->state = SP_WAIT_REARM;
	s->rearm = 0;
	tcp->flags |= T_PARKED;
	try_arm(s, tcp, 0, NULL);
	return 1;
}

/*
 * Is a space still waiting to put its probes in (attach, or an exec
 * whose entry point was not reached yet)?  Not one whose threads are all
 * group-stopped: nothing runs before they continue, and then the probes
 * go in first.
 */
int alloc_arming(void)
{
	for (struct alloc_space *s = spaces; s; s = s->next) {
		struct thread *t;
		size_t it = 0;

		if (!s->set || s->state == SP_ARMED)
			continue;
		if (s->state != SP_WAIT_ARM)
			return 1;
		while ((t = procs_next_thread(procs, &it)))
			if (t->proc && t->proc->alloc == s && !(t->flags & T_LISTENING))
				return 1;
	}
	return 0;
}

void alloc_attach(struct proc *p)
{
	if (!enabled)
		return;
	/* a process whose leader exited shows its memory through its threads */
	p->alloc = space_new(procfs_live_task(p->pid), SP_WAIT_ARM);
}

/* ---- tracer hooks ---- */

enum alloc_action alloc_on_exec(struct thread *tcp)
{
	struct proc *p = tcp->proc;
	int was_vfork;

	if (!p)
		return ALLOC_RESUME;
	was_vfork = p->vfork_child;
	p->vfork_child = 0;
	if (was_vfork && p->alloc)
		alloc_detours_vfork_end(p->alloc->dt, p);
	if (p->alloc) {
		if (p->alloc->set)
			bp_thread_gone(p->alloc->set, tcp->tid);
		space_put(p->alloc);
		p->alloc = NULL;
	}
	free(tcp->alloc);
	tcp->alloc = NULL;
	if (tracer_detaching())
		return ALLOC_DETACH;
	if (p->unfollowed && was_vfork)
		return ALLOC_DETACH;	/* it left its parent's memory */
	if (!enabled)
		return ALLOC_RESUME;
	p->alloc = space_new(p->pid, SP_NEW);
	/* its next stop, before the new image runs, allows syscalls */
	if (ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tcp->tid);
	return ALLOC_RESUME;
}

/*
 * A fork child at its first stop, before it ran: the original bytes
 * back at its copies of the detoured entries (its stub mapping stays,
 * unused), its copies of the scratch pages unmapped.
 */
static void clean_fork_child(struct thread *tcp)
{
	struct proc *p = tcp->proc;

	/* its copy of the detoured entries: through the stopped child */
	alloc_detours_clean_fork(p->fork_src->dt, tcp->tid);
	if (p->fork_src->set) {
		int err = bp_unmap_fork_child(p->fork_src->set, tcp->tid);

		if (err < 0)
			error_msg("cannot unmap memtap's scratch pages in fork child %d: %s",
				  tcp->tid, strerror(-err));
	}
	space_put(p->fork_src);
	p->fork_src = NULL;
}

enum alloc_action alloc_on_event_stop(struct thread *tcp, int first, int group)
{
	struct proc *p = tcp->proc;
	struct alloc_space *s;

	if (!p)
		return ALLOC_RESUME;
	if (first && p->fork_src)
		clean_fork_child(tcp);
	if (first && p->alloc && p->alloc->dt && !p->vfork_child)
		alloc_detours_thread(p->alloc->dt, tcp, !!(tcp->flags & T_NEW));
	if (first && p->unfollowed && !(p->vfork_child && alloc_active_space(p)) &&
	    tcp->tid == p->pid)
		return ALLOC_DETACH;
	if (tracer_detaching())
		return ALLOC_RESUME;
	if (first && p->unfollowed)
		return ALLOC_RESUME;	/* a vfork child in its parent's memory */
	if (first && !p->alloc && enabled && p->rec->ppid && !p->vfork_child &&
	    tcp->tid == p->pid) {
		/* a followed fork child: probes of its own */
		p->alloc = space_new(p->pid, SP_ARMED);
		arm(p->alloc, tcp);
		return ALLOC_RESUME;
	}
	s = p->alloc;
	if (!s || !s->set)
		return ALLOC_RESUME;
	if (group) {
		if (s->state == SP_WAIT_ARM || s->state == SP_WAIT_REARM)
			try_arm(s, tcp, 1, NULL);
		return ALLOC_RESUME;
	}
	switch (s->state) {
	case SP_NEW: {
		uint64_t e = procfs_auxv_entry(p->pid);
		int err = e ? bp_insert(s->set, tcp->tid, e, 0, &entry_cookie) : -ENOENT;

		if (err == -EPERM && remote_refusal()) {
			refuse(s, p);
		} else if (err < 0) {
			error_msg("cannot break at the entry point of process %d (%s): %s; "
				  "probing now, without the libraries loaded later", p->pid,
				  p->rec->comm, strerror(-err));
			arm(s, tcp);
		} else {
			s->entry = e;
			s->state = SP_AT_ENTRY;
		}
		return ALLOC_RESUME;
	}
	case SP_WAIT_ARM:
	case SP_WAIT_REARM:
		tcp->flags |= T_PARKED;
		try_arm(s, tcp, 0, NULL);
		return ALLOC_KEEP;	/* parked, or resumed by try_arm() */
	case SP_ARMED:
		if (s->rearm && !first) {
			if (rearm_stopped(s, tcp))
				return ALLOC_KEEP;
			/* a dlopen or dlclose waits in _dl_debug_state's stub */
			alloc_detours_release(s->dt);
		}
		return ALLOC_RESUME;
	default:
		return ALLOC_RESUME;
	}
}

void alloc_on_syscall_stop(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	/*
	 * Under PTRACE_SYSCALL the exit stop of execve comes before the
	 * interrupt stop asked for at the exec event, and takes its place:
	 * ask again, the thread stops before its first instruction.
	 */
	if (s && s->state == SP_NEW && !tracer_detaching() &&
	    ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tcp->tid);
}

int alloc_dl_record(struct proc *p, pid_t tid)
{
	struct alloc_space *s = alloc_active_space(p);

	if (p->rec->modules)
		modules_map_changed(p->rec->modules);
	/* while the threads stop for another one: parked too, then released */
	if (!s || (s->state != SP_ARMED && s->state != SP_WAIT_REARM) || tracer_detaching() ||
	    !procs_find(procs, tid))
		return 0;
	if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0) {
		if (errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tid);
		return 0;
	}
	s->rearm = 1;
	return 1;
}

void alloc_on_code_mapped(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	if (!s || s->state != SP_ARMED || !s->pending || s->rearm || tracer_detaching())
		return;
	/* no syscall can be injected at a syscall stop: at the next stop */
	if (ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) < 0) {
		if (errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tcp->tid);
		return;
	}
	s->rearm = 1;
}

const char *alloc_unfound_probe(size_t *iter)
{
	for (size_t i = *iter; armed_once && i < probes_count(); i++) {
		const struct probe *pr = probes_get(i);

		if (pr->role == PR_USER && !pr->found) {
			*iter = i + 1;
			return pr->spec;
		}
	}
	*iter = probes_count();
	return NULL;
}

void alloc_warn_unfound(void)
{
	static int warned;
	const char *spec;

	for (size_t it = 0; !warned && (spec = alloc_unfound_probe(&it));)
		warn_msg("probe '%s' was never found in the traced processes", spec);
	warned = 1;
}

void alloc_on_new_task(struct thread *tcp, struct proc *child, pid_t child_tid, int event)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	(void)child_tid;
	if (!child)
		return;
	if (event == PTRACE_EVENT_VFORK) {
		/* it runs in our memory, breakpoints and all */
		child->vfork_child = 1;
		if (s) {
			child->alloc = s;
			s->refs++;
			/* its stubs' records carry tcp's tid: they are the child's */
			alloc_detours_vfork(s->dt, tcp->tid, child);
		}
		return;
	}
	if (!s || event != PTRACE_EVENT_FORK)
		return;
	/* a copy of our memory: put the original bytes back in it now */
	int err = bp_clean_fork_child(s->set, child->pid);

	if (err < 0)
		error_msg("cannot remove breakpoints from fork child %d: %s", child->pid,
			  strerror(-err));
	child->fork_src = s;
	s->refs++;
}

int alloc_drain(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	if (!s || !s->dt)
		return 0;
	alloc_detours_drain(s->dt);
	return 1;
}

void alloc_thread_free(struct thread *tcp)
{
	struct proc *p = tcp->proc;

	free(tcp->alloc);
	tcp->alloc = NULL;
	if (!p)
		return;
	if (p->alloc && p->alloc->set)
		bp_thread_gone(p->alloc->set, tcp->tid);
	if (p->alloc)
		alloc_detours_thread_gone(p->alloc->dt, tcp->tid);
	/* the others wait for it to stop: it will not */
	if (p->alloc && p->alloc->state == SP_WAIT_REARM && p->nthreads > 1 && !tracer_detaching())
		try_arm(p->alloc, tcp, 0, tcp);
	if (p->nthreads <= 1) {
		/* the last thread: the process leaves its space */
		if (p->vfork_child && p->alloc)
			alloc_detours_vfork_end(p->alloc->dt, p);
		space_put(p->alloc);
		p->alloc = NULL;
		space_put(p->fork_src);
		p->fork_src = NULL;
	}
}

static enum alloc_action on_sigtrap(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);
	arch_regs_t regs;
	struct bp_hit h;
	int r;

	if (!s)
		return ALLOC_NOT_OURS;
	if (ptrace(PTRACE_GETREGS, tcp->tid, 0L, &regs) < 0)
		return errno == ESRCH ? ALLOC_RESUME : ALLOC_NOT_OURS;
	r = bp_hit(s->set, tcp->tid, &regs, &h);
	if (r < 0) {
		error_msg("process %d thread %d: breakpoint hit: %s", s->pid, tcp->tid,
			  strerror(-r));
		return ALLOC_NOT_OURS;
	}
	switch (r) {
	case BP_HIT_NONE:
		return ALLOC_NOT_OURS;
	case BP_HIT_SUPPRESS:
		return ALLOC_RESUME;
	case BP_HIT_ENTRY:
		stops.breakpoint++;
		if (h.cookie == &entry_cookie) {
			if (s->state == SP_AT_ENTRY && !tracer_detaching())
				arm(s, tcp);
		} else if (h.cookie == &dl_cookie) {
			/*
			 * The library list changes (before) or changed (after).
			 * Before a dlclose unmaps a library, what the stubs
			 * recorded in it is read and unwound: its code is needed.
			 */
			if (alloc_drain(tcp))
				sink_flush();
			if (tcp->proc->rec->modules)
				modules_map_changed(tcp->proc->rec->modules);
			if (s->state == SP_ARMED && !tracer_detaching())
				rearm(s, tcp);
		} else if (h.cookie) {
			alloc_hit_entry(tcp, h.cookie, &regs, &h);
		}
		return ALLOC_RESUME;
	case BP_HIT_RETURN:
		stops.breakpoint++;
		if (h.cookie && h.cookie != &entry_cookie && h.cookie != &dl_cookie) {
			/* the detoured wrappers' records first: held ranges in order */
			if (((const struct probe *)h.cookie)->role >= PR_MMAP &&
			    alloc_detours_wrappers(s->dt))
				alloc_detours_drain(s->dt);
			alloc_hit_return(tcp, h.cookie, &regs, &h);
		}
		return ALLOC_RESUME;
	}
	return ALLOC_NOT_OURS;
}

/* The source's stop(): SIGTRAP signal-delivery-stops, a breakpoint's maybe. */
static enum stop_verdict alloc_stop(void *self, struct thread *tcp, int status)
{
	(void)self;
	if ((unsigned)status >> 16 || WSTOPSIG(status) != SIGTRAP)
		return STOP_NOT_MINE;
	return on_sigtrap(tcp) == ALLOC_NOT_OURS ? STOP_NOT_MINE : STOP_RESUME;
}

/* ---- detach ---- */

int alloc_fixup_for_detach(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	if (!s)
		return 0;
	return bp_thread_fixup_for_detach(s->set, tcp->tid);
}

int alloc_space_remove(struct alloc_space *s, struct thread *good,
		       struct thread *const *others, size_t nothers)
{
	int err = s->dt ? alloc_detours_remove(s->dt, good->tid) : 0;

	if (err < 0)
		error_msg("process %d: restoring the detoured entries: %s", s->pid, strerror(-err));
	alloc_detours_free(s->dt);
	s->dt = NULL;
	err = bp_remove_all(s->set, good->tid);

	for (size_t i = 0; err == -EBUSY && i < nothers; i++)
		if (others[i] != good)
			err = bp_unmap_scratch(s->set, others[i]->tid);
	if (err < 0)
		error_msg("process %d: undoing the breakpoints: %s", s->pid, strerror(-err));
	bp_set_free(s->set);
	s->set = NULL;
	s->nsites = 0;
	return err;
}

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
 *     entry point (AT_ENTRY), and one on the interpreter's
 *     _dl_debug_state (alloc_loader_point()).  When ld.so says there
 *     that every DT_NEEDED library and LD_PRELOAD is mapped and
 *     relocated, before it runs their constructors, or else at the entry
 *     point, resolve and insert the probes;
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
 * Putting them in, and waiting for every thread to stop for it:
 * alloc-arm.c.  What a hit means: alloc-hits.c.  This file is the
 * breakpoint source (source.h): the loop offers it the SIGTRAP stops,
 * and tells it of the threads' and processes' lives through the same
 * table (struct source_ops below), never by name.
 *
 * How they come out: see detach.c and space_remove().
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
#include "trace/alloc-int.h"
#include "trace/alloc-detour.h"
#include "trace/attach.h"
#include "trace/source.h"
#include "stack/unwind/unwind.h"
#include "probe/breakpoint.h"
#include "probe/elfsym.h"
#include "util/error.h"
#include "trace/memtap.h"
#include "stack/modules.h"
#include "probe/probes.h"
#include "probe/remote.h"
#include "util/xmalloc.h"

static int enabled;
int alloc_armed_once;
char alloc_entry_cookie, alloc_dl_cookie;
static struct alloc_space *spaces;
struct procs *alloc_procs;
const struct trace_config *alloc_cfg;

static enum stop_verdict alloc_stop(void *self, struct thread *tcp, int status);
static void alloc_settle(void *self);
static void thread_exit(void *self, struct thread *tcp);
static void thread_gone(void *self, struct thread *tcp);
static void execve_entry(void *self, struct thread *tcp);
static int attach(void *self, struct proc *p);
static void new_task(void *self, struct thread *tcp, struct proc *child, int event);
static enum life_verdict event_stop(void *self, struct thread *tcp, int first, int group);
static enum life_verdict exec_stop(void *self, struct thread *tcp);
static int flush_thread(void *self, struct thread *tcp);
static void syscall_stop(void *self, struct thread *tcp);
static void code_mapped(void *self, struct thread *tcp);
static void fix_stack(void *self, struct thread *tcp, struct stack_snapshot *snap);
static int arming(void *self);
static int in_target(void *self);
static int uses_proc(void *self, const struct proc *p);
static void run_info(void *self, struct run_info *ri);
static void final(void *self);
static const void *detach_space(void *self, const struct proc *p);
static int park(void *self, struct thread *tcp);
static void space_remove(void *self, const void *space, struct thread *good,
			 struct thread *const *others, size_t nothers);

static const struct source_ops breakpoints_ops = {
	.name = "breakpoints",
	.stop = alloc_stop,
	.settle = alloc_settle,
	.thread_exit = thread_exit,
	.thread_gone = thread_gone,
	.execve_entry = execve_entry,
	.attach = attach,
	.new_task = new_task,
	.event_stop = event_stop,
	.exec_stop = exec_stop,
	.flush_thread = flush_thread,
	.syscall_stop = syscall_stop,
	.code_mapped = code_mapped,
	.fix_stack = fix_stack,
	.arming = arming,
	.in_target = in_target,
	.uses_proc = uses_proc,
	.run_info = run_info,
	.final = final,
	.space = detach_space,
	.park = park,
	.remove = space_remove,
};

/* What alloc-detour.c and its rings need of the probes' hits. */
static const struct alloc_detours_hooks detours_hooks = {
	.wrapper_detourable = alloc_wrapper_detourable,
	.ring = { .wrapper = alloc_wrapper_record, .dl = alloc_dl_record },
};

int alloc_init(struct procs *pt, const struct trace_config *config, int syscall_wrappers)
{
	alloc_detours_init(&detours_hooks);
	alloc_procs = pt;
	alloc_cfg = config;
	probes_init(events_to_trace(), alloc_cfg->symbol_prefix, syscall_wrappers);
	enabled = probes_any();
	source_register(&breakpoints_ops, NULL);
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

/* Before a report: every space's records, and its stubs' counts. */
static void alloc_settle(void *self)
{
	(void)self;
	for (struct alloc_space *s = spaces; s; s = s->next)
		if (s->set && s->dt)
			alloc_detours_drain(s->dt);
}

/* The space of p when it has breakpoints to undo, else NULL. */
static struct alloc_space *alloc_active_space(const struct proc *p)
{
	return p && p->alloc && p->alloc->set ? p->alloc : NULL;
}

/* The source's fix_stack(): return addresses of open probed calls. */
static void fix_stack(void *self, struct thread *tcp, struct stack_snapshot *snap)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	(void)self;
	if (s)
		bp_fix_stack(s->set, snap->start, snap->data, snap->len);
}

static int alloc_any_active(void)
{
	for (struct alloc_space *s = spaces; s; s = s->next)
		if (s->set)
			return 1;
	return 0;
}

/*
 * Is a space still waiting to put its probes in (attach, or an exec
 * whose entry point was not reached yet)?  Not one whose threads are all
 * group-stopped: nothing runs before they continue, and then the probes
 * go in first.
 */
static int arming(void *self)
{
	(void)self;
	for (struct alloc_space *s = spaces; s; s = s->next) {
		struct thread *t;
		size_t it = 0;

		if (!s->set || s->state == SP_ARMED)
			continue;
		if (s->state != SP_WAIT_ARM)
			return 1;
		while ((t = procs_next_thread(alloc_procs, &it)))
			if (t->proc && t->proc->alloc == s && !(t->flags & (T_LISTENING | T_EXITED)))
				return 1;
	}
	return 0;
}

static int in_target(void *self)
{
	(void)self;
	return alloc_any_active();
}

/* Its space, or a fork child's to clean: p stays. */
static int uses_proc(void *self, const struct proc *p)
{
	(void)self;
	return p->alloc || p->fork_src;
}

/*
 * The source's attach(): the probes go in only where the target's
 * seccomp state lets memtap map a scratch page (attach_refuse_probes()
 * else), once every thread has stopped.
 */
static int attach(void *self, struct proc *p)
{
	char why[256];

	(void)self;
	if (!enabled)
		return 0;
	if (!attach_scratch_allowed(p, why, sizeof(why))) {
		attach_refuse_probes(alloc_cfg, alloc_procs, p, why, 1);
		return 0;
	}
	/* a process whose leader exited shows its memory through its threads */
	p->alloc = space_new(procfs_live_task(p->pid), SP_WAIT_ARM);
	return 1;
}

/* ---- tracer hooks ---- */

/* The source's exec_stop(): the old space is left, a new one begins. */
static enum life_verdict exec_stop(void *self, struct thread *tcp)
{
	struct proc *p = tcp->proc;
	int was_vfork, attaching;

	(void)self;
	if (!p)
		return LIFE_RESUME;
	/* attached in its execve: the probes were still to go in */
	attaching = p->alloc && p->alloc->state == SP_WAIT_ARM;
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
		return LIFE_DETACH;
	if (p->unfollowed && was_vfork)
		return LIFE_DETACH;	/* it left its parent's memory */
	if (!enabled)
		return LIFE_RESUME;
	p->alloc = space_new(p->pid, SP_NEW);
	if (attaching)
		info_msg("attached to process %d (%s) in its execve: probes go in at its entry "
			 "point, as for a command memtap runs", p->pid, p->rec->comm);
	/* its next stop, before the new image runs, allows syscalls */
	if (ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tcp->tid);
	return LIFE_RESUME;
}

/*
 * The library list changed under tcp, at _dl_debug_state's breakpoint:
 * the probes of new code go in.  With other threads, they go in as
 * detours once every thread is stopped: at tcp's interrupt stop, asked
 * for here, as alloc_dl_record() does (alloc_rearm_stopped()); put in
 * at once with the others running, they would be int3.
 */
static void dl_rearm(struct alloc_space *s, struct thread *tcp)
{
	if (s->dt && tcp->proc->nthreads > 1 && ptrace(PTRACE_INTERRUPT, tcp->tid, 0L, 0L) == 0)
		s->rearm = 1;
	else
		alloc_rearm(s, tcp);
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

static enum life_verdict event_stop(void *self, struct thread *tcp, int first, int group)
{
	struct proc *p = tcp->proc;
	struct alloc_space *s;

	(void)self;
	if (!p)
		return LIFE_RESUME;
	if (first && p->fork_src)
		clean_fork_child(tcp);
	if (first && p->alloc && p->alloc->dt && !p->vfork_child)
		alloc_detours_thread(p->alloc->dt, tcp, !!(tcp->flags & T_NEW));
	if (first && p->unfollowed && !(p->vfork_child && alloc_active_space(p)) &&
	    tcp->tid == p->pid)
		return LIFE_DETACH;
	if (tracer_detaching())
		return LIFE_RESUME;
	if (first && p->unfollowed)
		return LIFE_RESUME;	/* a vfork child in its parent's memory */
	if (first && !p->alloc && enabled && p->rec->ppid && !p->vfork_child &&
	    tcp->tid == p->pid) {
		/* a followed fork child: probes of its own */
		p->alloc = space_new(p->pid, SP_ARMED);
		alloc_arm(p->alloc, tcp);
		return LIFE_RESUME;
	}
	s = p->alloc;
	if (!s || !s->set)
		return LIFE_RESUME;
	if (group) {
		if (s->state == SP_WAIT_ARM || s->state == SP_WAIT_REARM)
			alloc_try_arm(s, tcp, 1, NULL);
		return LIFE_RESUME;
	}
	switch (s->state) {
	case SP_NEW:
		alloc_entry_point(s, tcp);
		return LIFE_RESUME;
	case SP_WAIT_ARM:
	case SP_WAIT_REARM:
		tcp->flags |= T_PARKED;
		alloc_try_arm(s, tcp, 0, NULL);
		return LIFE_KEEP;	/* parked, or resumed by alloc_try_arm() */
	case SP_ARMED:
		if (s->rearm && !first && alloc_rearm_stopped(s, tcp))
			return LIFE_KEEP;
		return LIFE_RESUME;
	default:
		return LIFE_RESUME;
	}
}

static void syscall_stop(void *self, struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	(void)self;
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
	    !procs_find(alloc_procs, tid))
		return 0;
	if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0) {
		if (errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tid);
		return 0;
	}
	s->rearm = 1;
	return 1;
}

static void code_mapped(void *self, struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	(void)self;
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

/* The --probe specs never found: the next one from *iter (from 0), or NULL. */
static const char *unfound_probe(size_t *iter)
{
	for (size_t i = *iter; alloc_armed_once && i < probes_count(); i++) {
		const struct probe *pr = probes_get(i);

		if (pr->role == PR_USER && !pr->found) {
			*iter = i + 1;
			return pr->spec;
		}
	}
	*iter = probes_count();
	return NULL;
}

/* The source's run_info(): the probes never found, what they could not see. */
static void run_info(void *self, struct run_info *ri)
{
	static const char **unfound;
	static size_t cap;
	const char *spec;

	(void)self;
	ri->nunfound = 0;
	for (size_t it = 0; (spec = unfound_probe(&it));) {
		unfound = xgrowarray(unfound, &cap, ri->nunfound + 1, sizeof(*unfound));
		unfound[ri->nunfound++] = spec;
	}
	ri->unfound = unfound;
	ri->notes = alloc_notes(&ri->nnotes);
}

/* The source's final(): one warning on stderr per probe never found, once. */
static void final(void *self)
{
	static int warned;
	const char *spec;

	(void)self;
	for (size_t it = 0; !warned && (spec = unfound_probe(&it));)
		warn_msg("probe '%s' was never found in the traced processes", spec);
	warned = 1;
}

static void new_task(void *self, struct thread *tcp, struct proc *child, int event)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	(void)self;
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

/*
 * Read now what the in-target probes of tcp's address space recorded
 * (events to the sink).  1 if the space has in-target probes.
 */
static int space_drain(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	if (!s || !s->dt)
		return 0;
	if (tcp->proc->vfork_child)
		alloc_detours_vfork_stop(s->dt, tcp->proc, 0);
	alloc_detours_drain(s->dt);
	return 1;
}

/* After space_drain(): a vfork child's calls are counted to here (alloc-vcount.h). */
static void vfork_leaves(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	if (s && s->dt && tcp->proc->vfork_child)
		alloc_detours_vfork_stop(s->dt, tcp->proc, 1);
}

static int flush_thread(void *self, struct thread *tcp)
{
	(void)self;
	return space_drain(tcp);
}

/*
 * The source's execve_entry(): what the in-target probes recorded is
 * the old image's, read now (their stacks unwound); a vfork child's
 * parent may run once the exec is done.
 */
static void execve_entry(void *self, struct thread *tcp)
{
	(void)self;
	if (space_drain(tcp)) {
		debug_msg("thread %d: execve: the in-target ring read first", tcp->tid);
		sink_flush();
	}
	vfork_leaves(tcp);
}

/*
 * The source's thread_exit(): the last records of tcp's space read; a
 * vfork child leaves the memory; the leader of a process whose other
 * threads live on becomes a zombie, its /proc/PID/maps empty: the
 * address space is read through another thread from then on.
 */
static void thread_exit(void *self, struct thread *tcp)
{
	struct alloc_space *s;
	struct thread *t;
	size_t it = 0;

	(void)self;
	space_drain(tcp);
	vfork_leaves(tcp);
	s = alloc_active_space(tcp->proc);
	if (!s || s->pid != tcp->tid)
		return;
	while ((t = procs_next_thread(alloc_procs, &it)))
		if (t->proc == tcp->proc && t != tcp && !(t->flags & T_EXITED)) {
			debug_msg("process %d: its leader exits, its memory read through thread %d",
				  tcp->proc->pid, t->tid);
			s->pid = t->tid;
			alloc_detours_live_task(s->dt, t->tid);
			return;
		}
}

/* The source's thread_gone(): tcp is about to be freed (exit, detach, exec by another thread). */
static void thread_gone(void *self, struct thread *tcp)
{
	struct proc *p = tcp->proc;

	(void)self;
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
		alloc_try_arm(p->alloc, tcp, 0, tcp);
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

static enum stop_verdict on_sigtrap(struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);
	arch_regs_t regs;
	struct bp_hit h;
	int r;

	if (!s)
		return STOP_NOT_MINE;
	if ((r = arch_regs_get(tcp->tid, &regs)) < 0)
		return r == -ESRCH ? STOP_RESUME : STOP_NOT_MINE;
	r = bp_hit(s->set, tcp->tid, &regs, &h);
	if (r < 0) {
		error_msg("process %d thread %d: breakpoint hit: %s", s->pid, tcp->tid,
			  strerror(-r));
		return STOP_NOT_MINE;
	}
	switch (r) {
	case BP_HIT_NONE:
		return STOP_NOT_MINE;
	case BP_HIT_SUPPRESS:
		return STOP_RESUME;
	case BP_HIT_ENTRY:
		stops.breakpoint++;
		if (h.cookie == &alloc_entry_cookie) {
			if (s->state == SP_AT_ENTRY && !tracer_detaching())
				alloc_arm_at_entry(s, tcp);
		} else if (h.cookie == &alloc_dl_cookie) {
			/*
			 * The library list changes (before) or changed (after).
			 * Before a dlclose unmaps a library, what the stubs
			 * recorded in it is read and unwound: its code is needed.
			 */
			if (space_drain(tcp))
				sink_flush();
			if (tcp->proc->rec->modules)
				modules_map_changed(tcp->proc->rec->modules);
			if (s->state == SP_ARMED && !tracer_detaching())
				dl_rearm(s, tcp);
			else if (s->state == SP_AT_ENTRY && !tracer_detaching())
				alloc_loader_hit(s, tcp);
		} else if (h.cookie) {
			alloc_hit_entry(tcp, h.cookie, &regs, &h);
		}
		return STOP_RESUME;
	case BP_HIT_RETURN:
		stops.breakpoint++;
		if (h.cookie && h.cookie != &alloc_entry_cookie && h.cookie != &alloc_dl_cookie) {
			/* the detoured wrappers' records first: held ranges in order */
			if (((const struct probe *)h.cookie)->role >= PR_MMAP &&
			    alloc_detours_wrappers(s->dt))
				alloc_detours_drain_ring(s->dt);
			alloc_hit_return(tcp, h.cookie, &regs, &h);
		}
		return STOP_RESUME;
	}
	return STOP_NOT_MINE;
}

/* The source's stop(): SIGTRAP signal-delivery-stops, a breakpoint's maybe. */
static enum stop_verdict alloc_stop(void *self, struct thread *tcp, int status)
{
	(void)self;
	if ((unsigned)status >> 16 || WSTOPSIG(status) != SIGTRAP)
		return STOP_NOT_MINE;
	return on_sigtrap(tcp);
}

/* ---- detach ---- */

/* The source's space(). */
static const void *detach_space(void *self, const struct proc *p)
{
	(void)self;
	return alloc_active_space(p);
}

/* The source's park(): tcp out of memtap's code (bp_thread_fixup_for_detach()). */
static int park(void *self, struct thread *tcp)
{
	struct alloc_space *s = alloc_active_space(tcp->proc);

	(void)self;
	if (!s)
		return 0;
	return bp_thread_fixup_for_detach(s->set, tcp->tid);
}

/*
 * The source's remove(): write back every original byte, unmap the
 * scratch pages, forget the breakpoints.
 */
static void space_remove(void *self, const void *space, struct thread *good,
			 struct thread *const *others, size_t nothers)
{
	struct alloc_space *s = (struct alloc_space *)space;
	int err, unmapped;

	(void)self;
	err = s->dt ? alloc_detours_remove(s->dt, good->tid) : 0;

	if (err < 0)
		error_msg("process %d: restoring the detoured entries: %s", s->pid, strerror(-err));
	alloc_detours_free(s->dt);
	s->dt = NULL;
	err = bp_restore_all(s->set, good->tid);
	if (err < 0)
		error_msg("process %d: undoing the breakpoints: %s", s->pid, strerror(-err));
	unmapped = bp_unmap_scratch(s->set, good->tid);
	for (size_t i = 0; unmapped == -EBUSY && i < nothers; i++)
		if (others[i] != good)
			unmapped = bp_unmap_scratch(s->set, others[i]->tid);
	if (unmapped == -EPERM && remote_refusal())
		warn_msg("process %d: memtap's scratch pages stay mapped in it, harmless (nothing "
			 "runs them): %s", s->pid, remote_refusal());
	else if (unmapped < 0)
		error_msg("process %d: unmapping memtap's scratch pages: %s", s->pid,
			  strerror(-unmapped));
	bp_set_free(s->set);
	s->set = NULL;
	s->nsites = 0;
}

/*
 * alloc-arm.c - putting the probes in (alloc.c says when): resolving
 * them in the process's objects, inserting each (a detour, else an int3
 * breakpoint), the sync points, the dynamic loader's point before the
 * constructors, and the waits for every thread to stop that detours
 * need.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <link.h>
#include <sys/ptrace.h>
#include <linux/ptrace.h>

#include "trace/alloc.h"
#include "trace/alloc-int.h"
#include "trace/alloc-detour.h"
#include "trace/attach.h"
#include "trace/sc-mech.h"
#include "record/sink-proc.h"
#include "probe/breakpoint.h"
#include "probe/elfsym.h"
#include "probe/remote.h"
#include "util/error.h"
#include "util/xmalloc.h"
#include "linux/features.h"
#include "linux/memio.h"
#include "linux/procfs.h"
#include "stack/modules.h"

/* ---- inserting ---- */

/*
 * bp_insert() said -EPERM and remote_refusal() why: the process's
 * seccomp filters forbid the syscalls of a scratch page (remote.h).  No
 * probe goes in.
 */
void alloc_refuse(struct alloc_space *s, struct proc *p)
{
	if (!s->refused)
		attach_refuse_probes(alloc_cfg, alloc_procs, p, remote_refusal(), 0);
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

		if (pr->role >= PR_MMAP && !sc_mech_wrappers(tcp->proc))
			continue;	/* its syscalls are caught otherwise */
		if ((pr->optional ? elfsym_lookup_api : elfsym_lookup)(ep, pr->spec, NULL, &r) < 0) {
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
		if (alloc_detours_insert(s->dt, alloc_procs, tcp, pr, &r)) {
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
			alloc_refuse(s, tcp->proc);
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
	if (!alloc_cfg->npids || !s->dt || s->pending)
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
void alloc_arm(struct alloc_space *s, struct thread *tcp)
{
	struct elfsym_proc *ep = elfsym_proc_load(s->pid);
	struct elfsym_result r;
	size_t in = 0;

	s->state = SP_ARMED;
	if (!ep) {
		error_msg("cannot read the objects of process %d: %s", s->pid, strerror(errno));
	} else {
		sc_mech_choose(alloc_cfg, alloc_procs, tcp->proc, ep);
		if (!s->dt && !s->refused)
			s->dt = alloc_detours_arm(alloc_cfg, alloc_procs, tcp, ep);
		in = insert_probes(s, tcp, ep, 0);
		alloc_detours_sync_points(s->dt, alloc_procs, tcp, ep);
		/* attached, a sync point if it can be: an int3 outlives memtap */
		if (!s->refused && !s->dl_state && !dl_state_needless(s) &&
		    elfsym_lookup(ep, "_dl_debug_state", NULL, &r) == 0 &&
		    ((alloc_cfg->npids && alloc_detours_dl_point(s->dt, alloc_procs, tcp, &r)) ||
		     bp_insert(s->set, tcp->tid, r.addr, 0, &alloc_dl_cookie) == 0))
			s->dl_state = r.addr;
		elfsym_proc_free(ep);
	}
	if (tcp->proc->rec->modules)
		modules_map_changed(tcp->proc->rec->modules);
	if (!alloc_armed_once) {
		alloc_armed_once = 1;
		/* a --probe may be in a library loaded later: run, and tell at the end */
		if (!in && !s->refused && !probes_user_pending() && !tcp->proc->ptrace_syscalls &&
		    !alloc_cfg->agent)
			error_msg_and_die("nothing to probe in process %d (%s): none of the "
					  "functions asked for was found", s->pid, tcp->proc->rec->comm);
	}
}

/* ---- exec: before the libraries' constructors ---- */

/*
 * Launch mode, at the exec'd image's first stop, the entry breakpoint
 * in: a breakpoint on the program interpreter's _dl_debug_state too,
 * the debuggers' hook.  glibc's ld.so calls it with _r_debug.r_state
 * RT_ADD before it maps the initial libraries and RT_CONSISTENT once
 * they are mapped and relocated, before it runs their initialisers;
 * the probes go in then (alloc_loader_hit()).  An interpreter without
 * both symbols (musl's, which runs the constructors after the entry
 * point), or no interpreter (a static binary): the entry point only.
 * ld.so run as the command ("ld.so PROGRAM"): no interpreter, the
 * entry point is ld.so's, before it loads anything: there only its
 * point (a static binary has __libc_start_main).
 */
void alloc_loader_point(struct alloc_space *s, struct thread *tcp)
{
	uint64_t base = procfs_auxv(s->pid, AT_BASE), st, rd;
	const struct elfsym_module *ld;
	struct elfsym_proc *ep;
	int err;

	if (!(ep = elfsym_proc_load(s->pid)))
		return;
	ld = elfsym_module_at(ep, base ? base : s->entry);
	/* musl's loader is its C library: __libc_start_main runs them */
	s->ctors_first = ld && elfsym_module_lookup(ld, "__libc_start_main", &st) < 0;
	if (!base && !s->ctors_first)
		ld = NULL;	/* a static binary */
	if (ld && feature_has(F_DL_DEBUG_STATE) &&
	    elfsym_module_lookup(ld, "_dl_debug_state", &st) == 0 &&
	    elfsym_module_lookup(ld, "_r_debug", &rd) == 0) {
		err = bp_insert(s->set, tcp->tid, st + ld->bias, 0, &alloc_dl_cookie);
		if (err == 0) {
			s->dl_state = st + ld->bias;
			s->r_debug = rd + ld->bias;
			s->entry_early = !base;
		} else {
			debug_msg("process %d: no breakpoint on %s's _dl_debug_state: %s", s->pid,
				  ld->path, strerror(-err));
		}
	}
	if (!base && !s->entry_early)
		s->ctors_first = 0;	/* a static binary, or nothing to wait for */
	elfsym_proc_free(ep);
}

/*
 * Before the image's first instruction ran (exec'd), or while its loader
 * starts it (attached then): breakpoints at the entry point and on the
 * loader's _dl_debug_state; the probes go in at the first of them that
 * says the libraries are there.
 */
void alloc_entry_point(struct alloc_space *s, struct thread *tcp)
{
	struct proc *p = tcp->proc;
	uint64_t e = procfs_auxv_entry(p->pid);
	int err = e ? bp_insert(s->set, tcp->tid, e, 0, &alloc_entry_cookie) : -ENOENT;

	if (err == -EPERM && remote_refusal()) {
		alloc_refuse(s, p);
	} else if (err < 0) {
		error_msg("cannot break at the entry point of process %d (%s): %s; "
			  "probing now, without the libraries loaded later", p->pid,
			  p->rec->comm, strerror(-err));
		alloc_arm(s, tcp);
	} else {
		s->entry = e;
		s->state = SP_AT_ENTRY;
		alloc_loader_point(s, tcp);
	}
}

/*
 * Attached while the dynamic loader starts the process: its thread has
 * no TLS yet (the thread pointer is 0, an interpreter in its auxv).  Its
 * C library may not be mapped, and a stub that reads the thread's TCB
 * (the detoured _dl_debug_state, which the loader calls before it sets
 * TLS up) would fault.  It is armed as an exec'd process is: 1 then,
 * else 0 (arm now).
 */
static int arm_in_loader(struct alloc_space *s, struct thread *tcp)
{
	struct r_debug rd;
	arch_regs_t regs;

	if (!alloc_cfg->npids || arch_regs_get(tcp->tid, &regs) < 0 || arch_tp(&regs) ||
	    !procfs_auxv(s->pid, AT_BASE))
		return 0;
	alloc_entry_point(s, tcp);
	if (s->state != SP_AT_ENTRY)
		return 1;
	s->in_loader = 1;
	/* mapping its libraries already: RT_CONSISTENT comes once they are */
	if (s->r_debug && memio_read_all(s->pid, tcp->tid, s->r_debug, &rd, sizeof(rd)) == 0 &&
	    rd.r_version && rd.r_state == RT_ADD)
		s->dl_added = 1;
	return 1;
}

/*
 * Armed at the loader's point or at the entry point, attached: the two
 * int3 make way for what alloc_arm() puts in an attached process (a
 * detoured _dl_debug_state, or none), so that nothing of memtap's can
 * stop the process if memtap dies.  tcp, the only thread, is at one of
 * them: it goes on at the original code.
 */
static void in_loader_done(struct alloc_space *s, struct thread *tcp)
{
	int err = bp_thread_fixup_for_detach(s->set, tcp->tid);

	if (err < 0) {
		debug_msg("process %d: cannot move its thread off memtap's breakpoints: %s",
			  s->pid, strerror(-err));
		return;		/* they stay, as in an exec'd process */
	}
	if (s->dl_state && (err = bp_remove(s->set, tcp->tid, s->dl_state)) < 0)
		debug_msg("process %d: cannot take the loader's breakpoint out: %s", s->pid,
			  strerror(-err));
	else
		s->dl_state = 0;
	if (s->entry && bp_remove(s->set, tcp->tid, s->entry) == 0)
		s->entry = 0;
	s->in_loader = 0;
}

static char *note;
static unsigned nlate;
static pid_t first_late;

const char *const *alloc_notes(size_t *n)
{
	free(note);
	note = NULL;
	*n = 0;
	if (!nlate)
		return NULL;
	if (nlate == 1)
		note = xasprintf("process %d: allocator probes in at its entry point: what its "
				 "libraries' constructors allocated before it is not counted",
				 (int)first_late);
	else
		note = xasprintf("%u processes (the first %d): allocator probes in at their entry "
				 "points: what their libraries' constructors allocated before "
				 "them is not counted", nlate, (int)first_late);
	*n = 1;
	return (const char *const *)&note;
}

/*
 * The entry point's breakpoint, the probes not in yet: in now.  A
 * loader that ran the constructors already (ld.so without its hook):
 * the report says what that missed.
 */
void alloc_arm_at_entry(struct alloc_space *s, struct thread *tcp)
{
	if (s->entry_early)
		return;		/* ld.so's own: its point comes later */
	if (s->ctors_first) {
		debug_msg("process %d: probes in at the entry point, after the libraries' "
			  "constructors", s->pid);
		if (!nlate++)
			first_late = s->pid;
	}
	if (s->in_loader)
		in_loader_done(s, tcp);
	alloc_arm(s, tcp);
	if (!s->ctors_first)
		/* nothing of its image ran before: every block is seen */
		sink_proc_from_start(tcp->proc->rec);
}

/*
 * _dl_debug_state's breakpoint hit before the entry point: the probes
 * go in at ld.so's RT_CONSISTENT that follows its RT_ADD (an audit
 * module's namespace, loaded before, leaves the main _r_debug as it
 * is).  1 when they went in.
 */
int alloc_loader_hit(struct alloc_space *s, struct thread *tcp)
{
	struct r_debug rd;

	if (!s->r_debug ||
	    memio_read_all(s->pid, tcp->tid, s->r_debug, &rd, sizeof(rd)) < 0)
		return 0;
	if (rd.r_state == RT_ADD) {
		s->dl_added = 1;
		return 0;
	}
	if (rd.r_state != RT_CONSISTENT || !s->dl_added)
		return 0;
	debug_msg("process %d: the initial libraries are loaded: probes in before their "
		  "constructors", s->pid);
	if (s->in_loader)
		in_loader_done(s, tcp);
	alloc_arm(s, tcp);
	sink_proc_from_start(tcp->proc->rec);	/* before any allocator call */
	return 1;
}

/*
 * After _dl_debug_state: new libraries, or libraries gone.  Then a
 * dlopen or dlclose waiting in _dl_debug_state's stub goes on.
 */
void alloc_rearm(struct alloc_space *s, struct thread *tcp)
{
	struct elfsym_proc *ep = elfsym_proc_load(s->pid);
	size_t kept = 0;

	s->rearm = 0;
	if (!ep) {
		alloc_detours_release(s->dt);
		return;
	}
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
	alloc_detours_tables(s->dt);	/* before the held record goes on */
	alloc_detours_release(s->dt);
}

/* ---- attach, and new code mapped: arm once every thread has stopped ---- */

/* gone: a thread that exits, still in the list */
void alloc_try_arm(struct alloc_space *s, struct thread *cur, int cur_listening,
		    const struct thread *gone)
{
	struct thread *t, *use = NULL;
	size_t it = 0;
	int n = 0;

	while ((t = procs_next_thread(alloc_procs, &it))) {
		if (!t->proc || t->proc->alloc != s || t == gone || (t->flags & T_EXITED))
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
		alloc_rearm(s, use);
		debug_msg("process %d: %d threads stopped for the probes of new code", s->pid, n);
	} else if (arm_in_loader(s, use)) {
		info_msg("attached to process %d (%s) while its loader starts it: probes go "
			 "in before its libraries' constructors run", use->proc->pid,
			 use->proc->rec->comm);
	} else {
		alloc_arm(s, use);
		info_msg("attached to process %d (%s), %d thread%s", use->proc->pid,
			 use->proc->rec->comm, n, n == 1 ? "" : "s");
		debug_msg("process %d: %zu probes in", s->pid, s->nsites);
	}
	it = 0;
	while ((t = procs_next_thread(alloc_procs, &it)))
		if (t->proc && t->proc->alloc == s && (t->flags & T_PARKED)) {
			t->flags &= ~T_PARKED;
			tracer_resume(t, 0);
		}
}

/*
 * New code is mapped (a dlopen): its probes become detours only while
 * every thread is stopped.  With others running (none group-stopped,
 * whose stop memtap would have to take and give back), they are
 * interrupted and tcp waits parked with them: alloc_try_arm() puts the
 * probes in once all are.  Returns 1 then, 0 when tcp may go on (the
 * probes are in).
 */
int alloc_rearm_stopped(struct alloc_space *s, struct thread *tcp)
{
	struct thread *t;
	size_t it = 0;
	int running = 0;

	while (s->dt && (t = procs_next_thread(alloc_procs, &it))) {
		if (!t->proc || t->proc->alloc != s || t == tcp || (t->flags & T_EXITED))
			continue;
		if (t->flags & (T_LISTENING | T_HELD | T_VFORK_WAIT)) {
			running = 0;	/* a detour waits for nothing: int3 for now */
			break;
		}
		if (!(t->flags & T_STOPPED))
			running = 1;
	}
	if (!running) {
		alloc_rearm(s, tcp);
		return 0;
	}
	/* the stopped ones too: a stop of this round, resumed later, stops again */
	it = 0;
	while ((t = procs_next_thread(alloc_procs, &it)))
		if (t->proc && t->proc->alloc == s && t != tcp &&
		    !(t->flags & (T_PARKED | T_EXITED)) && ptrace(PTRACE_INTERRUPT, t->tid, 0L, 0L) < 0 && errno != ESRCH)
			perror_msg("ptrace(PTRACE_INTERRUPT, %d)", t->tid);
	s->state = SP_WAIT_REARM;
	s->rearm = 0;
	tcp->flags |= T_PARKED;
	alloc_try_arm(s, tcp, 0, NULL);
	return 1;
}


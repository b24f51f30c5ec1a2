/*
 * alloc.h - breakpoint probes in traced processes (alloc.c): inserting
 * them (at attach, at the entry point after exec, in followed fork
 * children, after dlopen), turning hits into events, and undoing them.
 *
 * One struct alloc_space per address space holds the breakpoint set; a
 * process points at its space through proc->alloc (a vfork child shares
 * its parent's until it execs or exits).  Spaces are reference counted
 * by the processes using them and freed (bp_set_free(), which never
 * touches the target) when the last one leaves: at exec, at exit, or
 * after alloc_space_remove() at detach.
 *
 * The breakpoint hits come as a source (source.h): alloc_init()
 * registers it, and the loop offers it every SIGTRAP stop.  The tracer
 * calls the hooks below at the life-cycle stops named; each returns
 * what the tracer must do with the thread.  None of them exits; errors
 * are reported and the probe or process concerned goes without.
 */
#ifndef MEMTAP_ALLOC_H
#define MEMTAP_ALLOC_H

#include <stdio.h>
#include <sys/types.h>

#include "trace/memtap.h"
#include "trace/procs.h"
#include "trace/tracer.h"

struct alloc_space;
struct bp_set;
struct bp_hit;
struct probe;

/* What the tracer does with the thread after a hook. */
enum alloc_action {
	ALLOC_RESUME,		/* resume it (signal 0) as usual */
	ALLOC_KEEP,		/* leave it stopped: alloc.c resumes it later */
	ALLOC_DETACH,		/* detach it (signal 0) */
	ALLOC_NOT_OURS,		/* SIGTRAP stop: not a breakpoint, deliver it */
};

/*
 * Once, after the options: build the probe list (probes_init()), with
 * libc's syscall wrappers if syscall_wrappers, and register the
 * breakpoint source.  pt: the table of traced threads, walked to arm
 * and to detach.  Returns 1 when there is anything to probe.
 */
int alloc_init(struct procs *pt, const struct trace_config *cfg, int syscall_wrappers);
int alloc_enabled(void);

/* attach_pid(): every thread of p seized; probes go in once all stopped. */
void alloc_attach(struct proc *p);

/*
 * 1 while a process waits for its probes (attach: until every thread has
 * stopped; exec: until the entry point), else 0.  A process whose
 * threads are all group-stopped does not wait.
 */
int alloc_arming(void);

/* PTRACE_EVENT_EXEC of tcp (the address space is new). */
enum alloc_action alloc_on_exec(struct thread *tcp);

/*
 * A PTRACE_EVENT_STOP: first, the first stop of a thread whose process
 * is known; group, a group-stop (the tracer then answers PTRACE_LISTEN
 * whatever this returns).  Fork children's cleanup, following or
 * detaching them, waiting to arm after attach, the entry breakpoint
 * after exec.
 */
enum alloc_action alloc_on_event_stop(struct thread *tcp, int first, int group);

/*
 * The parent's PTRACE_EVENT_{FORK,VFORK,CLONE} stop, before it is
 * resumed; child is the new process (NULL for a thread).
 */
void alloc_on_new_task(struct thread *tcp, struct proc *child, pid_t child_tid, int event);

/* A syscall stop of tcp (PTRACE_SYSCALL), before it is resumed. */
void alloc_on_syscall_stop(struct thread *tcp);

/*
 * tcp's syscall-exit stop of a call that mapped code (or made memory
 * executable): probes not found yet are looked up again at the thread's
 * next stop (it is interrupted for it).
 */
void alloc_on_code_mapped(struct thread *tcp);

/*
 * The --probe specs never found in any traced process: the next one
 * from *iter (start at 0), or NULL.  Borrowed strings.
 */
const char *alloc_unfound_probe(size_t *iter);
/* At the end: one warning on stderr per probe never found, once. */
void alloc_warn_unfound(void);
/*
 * What the probes could not see, a sentence each for the report (the
 * processes whose probes went in at the entry point, after their
 * libraries' constructors ran): *n of them, valid until the next call.
 */
const char *const *alloc_notes(size_t *n);

/*
 * Read now what the in-target probes of tcp's address space recorded
 * (events to the sink): at a thread's PTRACE_EVENT_EXIT, the last moment
 * the memory can be read, and at a fork event, before the child gets a
 * copy of the live blocks.  1 if the space has in-target probes.
 */
int alloc_drain(struct thread *tcp);
/*
 * At the entry of execve, after alloc_drain(): a vfork child's calls
 * are counted to here (alloc-vcount.h); its parent may run once the
 * exec is done.  alloc_thread_exiting() does the same at its exit.
 */
void alloc_execve_entry(struct thread *tcp);

/*
 * At a thread's PTRACE_EVENT_EXIT, after alloc_drain(): the leader of a
 * process whose other threads live on becomes a zombie, its
 * /proc/PID/maps empty: its address space is read through another
 * thread from then on.  A vfork child's calls are counted to here.
 */
void alloc_thread_exiting(struct thread *tcp);

/*
 * The in-target ring of process p holds a record of ld.so's
 * _dl_debug_state by thread tid (ring.h): the module list is marked
 * changed and, if the probes are to be looked at again, tid is asked
 * for a stop (the ring stays held until then): 1; else 0.  ring.h's dl
 * hook.
 */
int alloc_dl_record(struct proc *p, pid_t tid);

/* tcp is about to be freed (exit, detach, exec by another thread). */
void alloc_thread_free(struct thread *tcp);

/*
 * The breakpoint set of p's address space, or NULL: for unwinders,
 * which must pass a stack snapshot through bp_fix_stack() (return
 * addresses of open probed calls point at memtap's trampoline).  Valid
 * until the next stop is handled.
 */
struct bp_set *alloc_bp_set(const struct proc *p);

/* ---- detaching ---- */

/* The space of p when it has breakpoints to undo, else NULL. */
struct alloc_space *alloc_active_space(const struct proc *p);
int alloc_any_active(void);

/*
 * For detach, tcp in a ptrace-stop: move it out of memtap's code.
 * 0: done; 1: a SIGTRAP of ours is still queued (resume it with signal
 * 0, its next stop is that SIGTRAP, then call again); -errno.
 */
int alloc_fixup_for_detach(struct thread *tcp);

/*
 * Every thread of the space is stopped and fixed up; good is one at a
 * signal-delivery-stop or PTRACE_EVENT_STOP.  Write back every original
 * byte, unmap the scratch pages, forget the breakpoints.  0 or -errno
 * (reported).
 */
int alloc_space_remove(struct alloc_space *s, struct thread *good,
		       struct thread *const *others, size_t nothers);

/* ---- alloc-hits.c: a probe's hit, at its entry or its return ---- */

/* tcp entered pr's function; h as bp_hit() gave it, regs the thread's. */
void alloc_hit_entry(struct thread *tcp, const struct probe *pr, const arch_regs_t *regs,
		     const struct bp_hit *h);
/* pr's function returned to h->caller; regs are the caller's. */
void alloc_hit_return(struct thread *tcp, const struct probe *pr, const arch_regs_t *regs,
		      const struct bp_hit *h);

/*
 * A wrapper probe's (pr->role >= PR_MMAP) event needs nothing read at
 * the call's entry: alloc-detour.c may detour it.
 */
int alloc_wrapper_detourable(const struct probe *pr);
/*
 * A detoured wrapper's record (ring.c), made by thread tid of p after
 * the call returned retval, args its arguments at entry: the event its
 * int3 probe makes at the return (1), or 0 when it makes none.  The
 * wrapper's entry read nothing from /proc (alloc_wrapper_detourable():
 * alloc-detour.c detours no other).  ring.h's wrapper hook.
 */
int alloc_wrapper_record(struct proc *p, pid_t tid, const struct probe *pr,
			 const uint64_t args[6], uint64_t retval, struct event *ev);

#endif /* MEMTAP_ALLOC_H */

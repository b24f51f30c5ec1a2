/*
 * alloc-int.h - what alloc.c (the probes' life in the tracer),
 * alloc-arm.c (putting them in) and alloc-hits.c (what a hit means)
 * share: the address spaces and their states, the hits.
 */
#ifndef MEMTAP_TRACE_ALLOC_INT_H
#define MEMTAP_TRACE_ALLOC_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/probes.h"
#include "trace/memtap.h"

struct bp_hit;
struct probe;

enum space_state {
	SP_NEW,			/* exec'd: entry breakpoint at the next interrupt stop */
	SP_AT_ENTRY,		/* entry breakpoint in (and the loader's), not hit yet */
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
	uint64_t r_debug;	/* exec'd: the loader's _r_debug, 0 = none */
	int dl_added;		/* exec'd: _r_debug said RT_ADD at a hit */
	int ctors_first;	/* exec'd: its loader runs the libraries'
				   constructors before the entry point */
	int entry_early;	/* exec'd: the entry point is ld.so's (run as
				   the command), before its libraries */
	int in_loader;		/* attached while its loader started it: armed
				   as if exec'd (alloc_arm_in_loader()) */
	struct site *sites;	/* probes inserted */
	size_t nsites;
	int refused;		/* its seccomp filters forbid a scratch page */
	size_t pending;		/* probes (not optional) not found yet */
	int rearm;		/* code was mapped: look again at the next interrupt stop */
	struct alloc_detours *dt;	/* in-target probes, or NULL */
	struct alloc_space *next;
};

extern struct procs *alloc_procs;	/* every traced thread */
extern const struct trace_config *alloc_cfg;
extern int alloc_armed_once;
/* Cookies of memtap's own breakpoints. */
extern char alloc_entry_cookie, alloc_dl_cookie;

/* alloc-arm.c */
void alloc_refuse(struct alloc_space *s, struct proc *p);
void alloc_arm(struct alloc_space *s, struct thread *tcp);
void alloc_loader_point(struct alloc_space *s, struct thread *tcp);
void alloc_entry_point(struct alloc_space *s, struct thread *tcp);
int alloc_loader_hit(struct alloc_space *s, struct thread *tcp);
void alloc_arm_at_entry(struct alloc_space *s, struct thread *tcp);
void alloc_rearm(struct alloc_space *s, struct thread *tcp);
void alloc_try_arm(struct alloc_space *s, struct thread *cur, int cur_listening,
		   const struct thread *gone);
int alloc_rearm_stopped(struct alloc_space *s, struct thread *tcp);
/*
 * What the probes could not see, a sentence each for the report (the
 * processes whose probes went in at the entry point, after their
 * libraries' constructors ran): *n of them, valid until the next call.
 */
const char *const *alloc_notes(size_t *n);

/* alloc.c */
/*
 * The in-target ring of process p holds a record of ld.so's
 * _dl_debug_state by thread tid (ring.h): the module list is marked
 * changed and, if the probes are to be looked at again, tid is asked
 * for a stop (the ring stays held until then): 1; else 0.  ring.h's dl
 * hook.
 */
int alloc_dl_record(struct proc *p, pid_t tid);

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

#endif /* MEMTAP_TRACE_ALLOC_INT_H */

/*
 * alloc-int.h - what alloc.c (the probes' life in the tracer) and
 * alloc-arm.c (putting them in) share: the address spaces and their
 * states.
 */
#ifndef MEMTAP_TRACE_ALLOC_INT_H
#define MEMTAP_TRACE_ALLOC_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/probes.h"
#include "trace/memtap.h"

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

#endif /* MEMTAP_TRACE_ALLOC_INT_H */

/*
 * alloc-detour.h - the allocator probes of an address space as detours
 * (alloc-detour.c; mechanism: probe/detour.h, records: ring.h), for
 * alloc.c: where a detour can go it replaces the int3 breakpoint, and
 * where it cannot (refused, said with -v) the probe stays an int3.
 * Private to alloc.c and alloc-detour.c: what it needs of them is
 * handed to it by alloc_detours_init().
 */
#ifndef MEMTAP_ALLOC_DETOUR_H
#define MEMTAP_ALLOC_DETOUR_H

#include <stdint.h>
#include <sys/types.h>

#include "trace/memtap.h"
#include "trace/procs.h"
#include "trace/ring.h"
#include "trace/tracer.h"

struct alloc_detours;
struct elfsym_proc;
struct probe;
struct elfsym_result;

/*
 * Once, before the first arm, what the probes' hits make of a detour's
 * records (alloc-hits.c, alloc.c): wrapper_detourable, 1 when the event
 * of a syscall wrapper's probe (pr->role >= PR_MMAP) needs nothing read
 * at the call's entry; ring, what the records mean (ring.h).  h must
 * outlive every space.
 */
struct alloc_detours_hooks {
	int (*wrapper_detourable)(const struct probe *pr);
	struct ring_hooks ring;
};
void alloc_detours_init(const struct alloc_detours_hooks *h);

/*
 * At arm time (tcp stopped where syscalls can be injected, ep the
 * process's objects): with --probes=detour, map the stubs and the ring
 * near the allocator functions found.  NULL when no detour can go in
 * (--probes=int3, nothing to detour, the seccomp filters forbid it, no
 * process_vm_readv): the reason is said once (-v), int3 probes follow.
 */
struct alloc_detours *alloc_detours_arm(const struct trace_config *cfg, struct procs *pt,
					struct thread *tcp, struct elfsym_proc *ep);

/*
 * Detour pr's function r through tcp if it can be (an allocator, every
 * thread of the process stopped, a plan that works).  1: detoured; 0:
 * not (the caller puts an int3 there).
 */
int alloc_detours_insert(struct alloc_detours *ad, struct procs *pt, struct thread *tcp,
			 struct probe *pr, const struct elfsym_result *r);

/*
 * tcp (stopped) is a thread of the process: at arm time for every
 * thread, then at each new thread's first stop.  Its stack's bounds go
 * into the stub mapping's table (rep movsb copies).  _gone: it exits.
 */
void alloc_detours_thread(struct alloc_detours *ad, struct thread *tcp, int fresh);
void alloc_detours_thread_gone(struct alloc_detours *ad, pid_t tid);
/* Its address space is read through thread tid from now on (its leader exits). */
void alloc_detours_live_task(struct alloc_detours *ad, pid_t tid);

/*
 * After the probes, every thread stopped: execve and execveat become
 * sync points (their stubs wait, bounded, until memtap has read the
 * ring: an exec takes the ring with the address space).  Never an int3:
 * where one cannot go, said with -v.
 */
void alloc_detours_sync_points(struct alloc_detours *ad, struct procs *pt, struct thread *tcp,
			       struct elfsym_proc *ep);

/*
 * Attach mode, every thread stopped: ld.so's _dl_debug_state (r) as a
 * sync point instead of an int3, which would kill the process at its
 * next dlopen were memtap to die.  Its record holds the ring until the
 * thread's next stop (ring.h, the hooks' dl()).  1: detoured; 0: not.
 */
int alloc_detours_dl_point(struct alloc_detours *ad, struct procs *pt, struct thread *tcp,
			   const struct elfsym_result *r);
/* The library list was looked at again: the ring goes on (ring_release()). */
void alloc_detours_release(struct alloc_detours *ad);
/* New code mapped (a dlopen): the stub walk's tables of it (probe/detour.h); ad may be NULL. */
void alloc_detours_tables(struct alloc_detours *ad);

/* How many of libc's syscall wrappers are detoured (0 for NULL). */
size_t alloc_detours_wrappers(const struct alloc_detours *ad);

/* Is the function at addr detoured? */
int alloc_detours_at(const struct alloc_detours *ad, uint64_t addr);
/* Its code was unmapped (dlclose). */
void alloc_detours_forget(struct alloc_detours *ad, uint64_t addr);

/*
 * child, a vfork child of tid, runs in the space until it execs or exits
 * (_end): the records tid makes meanwhile are the child's (ring.h).
 */
void alloc_detours_vfork(struct alloc_detours *ad, pid_t tid, struct proc *child);
void alloc_detours_vfork_end(struct alloc_detours *ad, struct proc *child);
/*
 * The stubs' counts of child (alloc-vcount.h): it stopped at its execve
 * entry (execve, after its last drain: what its parent's thread counts
 * from then on is held), or elsewhere (before a drain: what was held is
 * child's, its exec failed).
 */
void alloc_detours_vfork_stop(struct alloc_detours *ad, struct proc *child, int execve);

/*
 * Drain the ring now, and read the stubs' counters (a thread exits, the
 * process execs, a report is due).
 */
void alloc_detours_drain(struct alloc_detours *ad);
/* The ring only: records to put in order before another event's. */
void alloc_detours_drain_ring(struct alloc_detours *ad);

/*
 * Detach, every thread stopped: a last drain, the entries restored
 * through tid.  Reports records lost.  0 or -errno.
 */
int alloc_detours_remove(struct alloc_detours *ad, pid_t tid);

/* At a fork child's first stop: its copy of the entries restored. */
void alloc_detours_clean_fork(const struct alloc_detours *ad, pid_t child);

/* Frees memtap's memory (a last word on records lost); never touches the target. */
void alloc_detours_free(struct alloc_detours *ad);

#endif /* MEMTAP_ALLOC_DETOUR_H */

/*
 * procs.h - the table of traced processes and threads (procs.c).
 *
 * One struct procs holds every struct proc, in creation order, and every
 * live struct thread, found by tid.  The loop owns the table and hands
 * it to those that walk it (alloc.c, attach.c, launch.c); nobody reaches
 * for it.  A proc outlives its threads, so that the report can speak of
 * processes that exited; a thread is freed by procs_free_thread() when
 * it dies or is detached.
 */
#ifndef MEMTAP_PROCS_H
#define MEMTAP_PROCS_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "trace/memtap.h"

struct procs {
	struct proc *head, **tail;	/* every process, in creation order */
	struct thread **tab;		/* open addressing on tid */
	size_t tab_size, tab_used;
	size_t nthreads;		/* live threads */
	volatile pid_t any_tid;		/* one live thread, 0 = none known */
};

/* An empty table. */
void procs_init(struct procs *pt);

/* A new process (comm read from /proc), appended to the list. */
struct proc *procs_new_proc(struct procs *pt, pid_t pid, pid_t ppid);

/* A new thread of p (NULL: its process is not known yet). */
struct thread *procs_new_thread(struct procs *pt, pid_t tid, struct proc *p);

/* The thread of tid, or NULL. */
struct thread *procs_find(const struct procs *pt, pid_t tid);

/* Every live thread: *iter starts at 0; NULL at the end.  No insertion meanwhile. */
struct thread *procs_next_thread(const struct procs *pt, size_t *iter);

/* tcp belongs to p from now (its first stop came before its parent's event). */
void procs_set_proc(struct thread *tcp, struct proc *p);

/* tcp took over tid (a non-leader thread exec'd). */
void procs_rename_thread(struct procs *pt, struct thread *tcp, pid_t tid);

/* Forget tcp and free it. */
void procs_free_thread(struct procs *pt, struct thread *tcp);

#endif /* MEMTAP_PROCS_H */

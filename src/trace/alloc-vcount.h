/*
 * alloc-vcount.h - the stubs' exact counts of a vfork child, out of its
 * parent's (alloc-detour.c).
 *
 * A vfork child runs on the TCB of the thread that vforked, so its calls
 * count in that thread's block of the per-thread counters
 * (arch/stub-abi.h), which nothing else writes while the
 * thread waits in vfork: its growth from the vfork event on is the
 * child's, whatever the parent's other threads do.  A thread without an
 * entry in the thread table counts in the shared counter page: its
 * child's calls stay in the parent's figures (a warning says so, once).
 *
 * Until the child execs or exits the parent's thread waits; but an exec
 * lets it go before memtap has the child's exec event, and it may call
 * the allocator at once.  So the child's share is taken at its execve
 * entry, and what the block counts from then on is held: the parent's
 * at the exec event, the child's if the child stops again in the memory
 * (the exec failed: at its exit, or its next execve).
 */
#ifndef MEMTAP_ALLOC_VCOUNT_H
#define MEMTAP_ALLOC_VCOUNT_H

#include <sys/types.h>

#include "probe/detour.h"

struct proc;
struct sink_proc;

#define VCOUNT_MAX 4		/* vfork children at once, of one process */

struct vcount {
	struct proc *child;	/* NULL: a free place */
	pid_t tid;		/* the thread that vforked */
	struct detour_counts *base;	/* its block, per probe, as last read */
	struct detour_counts *held;	/* since the child's execve entry */
	int holding;
};

/*
 * At the vfork event, with the parent's counts read up to now: the
 * block of tid from now on is child's.  child must outlive
 * vcount_end().
 */
void vcount_begin(struct vcount *vc, const struct detour_set *set, pid_t tid,
		  struct proc *child);
/*
 * At each read of the counts (now, per probe, read before this call):
 * what each child counted since gives its process's totals
 * (sink_add_counted()), and is added to given, the counts already given
 * to the parent, so that the parent's share is now - given.  Returns
 * whether a child is followed (given may then be ahead of now).
 */
int vcount_take(struct vcount *vc, const struct detour_set *set,
		struct detour_counts *given);
/*
 * child stopped (not at its exec event): vcount_hold() at its execve
 * entry, after the last vcount_take(); vcount_stopped() at any other
 * stop, before a vcount_take(): what was held is child's.
 */
void vcount_hold(struct vcount *vc, const struct proc *child);
void vcount_stopped(struct vcount *vc, const struct detour_set *set, const struct proc *child);
/*
 * The child left the memory: what was held is the parent's (parent, its
 * process's totals).
 */
void vcount_end(struct vcount *vc, const struct detour_set *set, const struct proc *child,
		struct sink_proc *parent);
void vcount_release(struct vcount *vc);

#endif /* MEMTAP_ALLOC_VCOUNT_H */

/*
 * sink-proc.c - the sink's record of the traced processes (sink-proc.h):
 * their list in creation order, what a fork, a new image or the stubs
 * change of them, a process forgotten, and the stores told of each of
 * these (live blocks, held ranges, the timeline), which it does not
 * name.
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "linux/procfs.h"
#include "record/aggregate.h"
#include "record/sink-int.h"
#include "record/sink-proc.h"
#include "stack/runtimes/jitnames.h"
#include "stack/modules.h"
#include "stack/unwind/unwind.h"
#include "util/xmalloc.h"

static struct sink_proc *procs, **procs_tail = &procs;
static const struct sink_proc_store *stores[SINK_PROC_MAX_STORES];
static size_t nstores;

void sink_proc_store_add(const struct sink_proc_store *s)
{
	for (size_t i = 0; i < nstores; i++)
		if (stores[i] == s)
			return;
	assert(nstores < SINK_PROC_MAX_STORES);
	stores[nstores++] = s;
}

void sink_proc_stores_release(void)
{
	for (size_t i = 0; i < nstores; i++)
		if (stores[i]->release)
			stores[i]->release();
}

struct sink_proc *sink_proc_new(pid_t pid, pid_t ppid)
{
	struct sink_proc *sp = xcalloc(1, sizeof(*sp));

	sp->pid = pid;
	sp->ppid = ppid;
	procfs_read_comm(pid, sp->comm, sizeof(sp->comm));
	*procs_tail = sp;
	procs_tail = &sp->next;
	return sp;
}

struct sink_proc *sink_procs(void)
{
	return procs;
}

void sink_proc_mark_interval(void)
{
	aggregate_mark();
	for (struct sink_proc *p = procs; p; p = p->next)
		memcpy(p->prev, p->stats, sizeof(p->prev));
}

struct proc_modules *sink_proc_modules(struct sink_proc *p)
{
	if (!p->modules)
		p->modules = proc_modules_new(p->pid);
	return p->modules;
}

void sink_proc_fork(struct sink_proc *child, const struct sink_proc *parent)
{
	if (child->unfollowed)
		return;
	for (size_t i = 0; i < nstores; i++)
		if (stores[i]->fork)
			stores[i]->fork(child, parent);
	child->inherits = 1;
	child->from_start = parent->from_start;
}

void sink_proc_add_stubs(struct sink_proc *p, uint64_t start, uint64_t len, stub_frame_fn fn)
{
	if (start)
		modules_add_stubs(sink_proc_modules(p), start, len, fn);
}

void sink_proc_copy_stubs(struct sink_proc *child, struct sink_proc *parent)
{
	if (parent->modules && parent->modules->nstubs)
		modules_copy_stubs(sink_proc_modules(child), parent->modules);
}

void sink_proc_exec(struct sink_proc *p)
{
	p->from_start = 0;	/* until the new image's probes are in */
	for (size_t i = 0; i < nstores; i++)
		if (stores[i]->exec)
			stores[i]->exec(p);
	if (p->modules) {
		modules_map_changed(p->modules);
		modules_clear_stubs(p->modules);
	}
	if (p->unwinder) {
		unwinder_free(p->unwinder);
		p->unwinder = NULL;
	}
}

void sink_proc_from_start(struct sink_proc *sp)
{
	sp->from_start = 1;
}

void sink_proc_forget(struct sink_proc *sp)
{
	struct sink_proc **pp;

	assert(sp->queued == 0);
	for (pp = &procs; *pp && *pp != sp; pp = &(*pp)->next)
		;
	if (!*pp)
		return;
	*pp = sp->next;
	if (procs_tail == &sp->next)
		procs_tail = pp;
	/* what it held first (the aggregates' held figures go to 0), and
	   the timeline's changes, before the aggregates' indexes move */
	for (size_t i = 0; i < nstores; i++)
		if (stores[i]->forget)
			stores[i]->forget(sp);
	aggregate_forget(sp);
	if (sp->unwinder)
		unwinder_free(sp->unwinder);
	if (sp->modules)
		proc_modules_free(sp->modules);
	/* its run-time code's names, unless its pid is another's now */
	for (pp = &procs; *pp && (*pp)->pid != sp->pid; pp = &(*pp)->next)
		;
	if (!*pp)
		jit_names_forget(sp->pid);
	free(sp);
}

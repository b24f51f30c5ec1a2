/*
 * procs.c - the table of traced processes and threads: a list of procs
 * in creation order, and the threads by tid in an open-addressing hash
 * table whose tombstones are (void *)1.
 */
#include "config.h"

#include <stdlib.h>

#include "trace/procs.h"
#include "trace/source.h"
#include "util/xmalloc.h"

#define TOMB ((struct thread *)1)

void procs_init(struct procs *pt)
{
	*pt = (struct procs){ .tail = &pt->head };
}

static size_t slot_of(pid_t tid, size_t size)
{
	return ((size_t)tid * 2654435761u) & (size - 1);
}

static void tab_insert(struct procs *pt, struct thread *tcp)
{
	if ((pt->tab_used + 1) * 2 > pt->tab_size) {
		struct thread **old = pt->tab;
		size_t old_size = pt->tab_size;

		pt->tab_size = pt->tab_size ? pt->tab_size * 2 : 64;
		while (pt->nthreads * 4 > pt->tab_size)
			pt->tab_size *= 2;
		pt->tab = xcalloc(pt->tab_size, sizeof(*pt->tab));
		pt->tab_used = 0;
		for (size_t i = 0; i < old_size; i++)
			if (old[i] && old[i] != TOMB) {
				size_t j = slot_of(old[i]->tid, pt->tab_size);
				while (pt->tab[j])
					j = (j + 1) & (pt->tab_size - 1);
				pt->tab[j] = old[i];
				pt->tab_used++;
			}
		free(old);
	}
	size_t j = slot_of(tcp->tid, pt->tab_size);
	while (pt->tab[j] && pt->tab[j] != TOMB)
		j = (j + 1) & (pt->tab_size - 1);
	if (!pt->tab[j])
		pt->tab_used++;
	pt->tab[j] = tcp;
}

static struct thread **tab_slot(const struct procs *pt, pid_t tid)
{
	if (!pt->tab_size)
		return NULL;
	for (size_t j = slot_of(tid, pt->tab_size), n = 0; pt->tab[j] && n < pt->tab_size;
	     j = (j + 1) & (pt->tab_size - 1), n++)
		if (pt->tab[j] != TOMB && pt->tab[j]->tid == tid)
			return &pt->tab[j];
	return NULL;
}

struct thread *procs_find(const struct procs *pt, pid_t tid)
{
	struct thread **s = tab_slot(pt, tid);

	return s ? *s : NULL;
}

struct thread *procs_next_thread(const struct procs *pt, size_t *iter)
{
	while (*iter < pt->tab_size) {
		struct thread *tcp = pt->tab[(*iter)++];

		if (tcp && tcp != TOMB)
			return tcp;
	}
	return NULL;
}

struct proc *procs_new_proc(struct procs *pt, pid_t pid, pid_t ppid)
{
	struct proc *p = xcalloc(1, sizeof(*p));

	p->pid = pid;
	p->rec = sink_proc_new(pid, ppid);
	*pt->tail = p;
	pt->tail = &p->next;
	return p;
}

void procs_set_proc(struct thread *tcp, struct proc *p)
{
	tcp->proc = p;
	if (p)
		p->nthreads++;
}

struct thread *procs_new_thread(struct procs *pt, pid_t tid, struct proc *p)
{
	struct thread *tcp = xcalloc(1, sizeof(*tcp));

	tcp->tid = tid;
	procs_set_proc(tcp, p);
	procfs_read_comm(tid, tcp->comm, sizeof(tcp->comm));
	tab_insert(pt, tcp);
	pt->nthreads++;
	if (!pt->any_tid)
		pt->any_tid = tid;
	sources_thread_new(tcp);
	return tcp;
}

void procs_free_thread(struct procs *pt, struct thread *tcp)
{
	struct thread **s = tab_slot(pt, tcp->tid);

	if (s)
		*s = TOMB;
	if (tcp->proc)
		tcp->proc->nthreads--;
	if (pt->any_tid == tcp->tid)
		pt->any_tid = 0;
	pt->nthreads--;
	free(tcp);
}

void procs_rename_thread(struct procs *pt, struct thread *tcp, pid_t tid)
{
	struct thread **s = tab_slot(pt, tcp->tid);

	if (s)
		*s = TOMB;
	tcp->tid = tid;
	tab_insert(pt, tcp);
}

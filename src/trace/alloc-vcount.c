/*
 * alloc-vcount.c - a vfork child's exact counts (alloc-vcount.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probes.h"
#include "record/sink.h"
#include "trace/alloc-vcount.h"
#include "trace/memtap.h"
#include "util/error.h"
#include "util/xmalloc.h"

/* n counts of the probes to sp's totals (sink_add_counted()). */
static void credit(struct sink_proc *sp, const struct detour_set *set,
		   const struct detour_counts *d)
{
	for (size_t i = 0; sp && i < probes_count(); i++) {
		const struct probe *pr = probes_get(i);
		int counted = probe_counted(pr);

		if (d[i].calls && counted && detour_nested_counted(set))
			sink_add_counted(sp, pr->kind, d[i].calls, d[i].bytes, counted);
	}
}

/* The block of tid per probe into out (probes_count() of them); 0 or -errno. */
static int read_block(const struct detour_set *set, pid_t tid, struct detour_counts *out)
{
	size_t n = probes_count();
	const void **cookies = xcalloc(n ? n : 1, sizeof(*cookies));
	int err;

	for (size_t i = 0; i < n; i++)
		cookies[i] = probes_get(i);
	err = detour_read_thread_counts(set, tid, cookies, n, out);
	free(cookies);
	return err;
}

void vcount_begin(struct vcount *vc, const struct detour_set *set, pid_t tid,
		  struct proc *child)
{
	size_t n = probes_count();
	struct detour_counts *base = xcalloc(n ? n : 1, sizeof(*base));
	int err = read_block(set, tid, base);
	int i = 0;

	while (i < VCOUNT_MAX && vc[i].child)
		i++;
	if (err < 0 || i == VCOUNT_MAX) {
		static int warned;

		if (!warned++)
			warn_msg("vfork child %d: its allocator calls are counted in its parent's "
				 "figures (%s)", child->pid, err == -ENOENT ?
				 "its thread is not in the stubs' thread table" :
				 err < 0 ? strerror(-err) : "too many vfork children at once");
		free(base);
		return;
	}
	vc[i].child = child;
	vc[i].tid = tid;
	vc[i].base = base;
	vc[i].held = xcalloc(n ? n : 1, sizeof(*vc[i].held));
}

int vcount_take(struct vcount *vc, const struct detour_set *set, struct detour_counts *given)
{
	size_t n = probes_count();
	struct detour_counts *now = xcalloc(n ? n : 1, sizeof(*now));
	struct detour_counts *d = xcalloc(n ? n : 1, sizeof(*d));
	int any = 0;

	for (int k = 0; k < VCOUNT_MAX; k++) {
		if (!vc[k].child)
			continue;
		any = 1;
		if (read_block(set, vc[k].tid, now) < 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			d[i].calls = d[i].bytes = 0;
			if (now[i].calls < vc[k].base[i].calls)
				continue;
			d[i].calls = now[i].calls - vc[k].base[i].calls;
			d[i].bytes = now[i].bytes - vc[k].base[i].bytes;
			given[i].calls += d[i].calls;
			given[i].bytes += d[i].bytes;
			vc[k].held[i].calls += vc[k].holding ? d[i].calls : 0;
			vc[k].held[i].bytes += vc[k].holding ? d[i].bytes : 0;
			vc[k].base[i] = now[i];
		}
		if (!vc[k].holding)
			credit(vc[k].child->rec, set, d);
	}
	free(d);
	free(now);
	return any;
}

static void give_held(struct vcount *v, const struct detour_set *set, struct sink_proc *sp)
{
	credit(sp, set, v->held);
	memset(v->held, 0, probes_count() * sizeof(*v->held));
	v->holding = 0;
}

void vcount_hold(struct vcount *vc, const struct proc *child)
{
	for (int k = 0; k < VCOUNT_MAX; k++)
		if (vc[k].child == child)
			vc[k].holding = 1;
}

void vcount_stopped(struct vcount *vc, const struct detour_set *set, const struct proc *child)
{
	for (int k = 0; k < VCOUNT_MAX; k++)
		if (vc[k].child == child && vc[k].holding)
			give_held(&vc[k], set, vc[k].child->rec);
}

void vcount_end(struct vcount *vc, const struct detour_set *set, const struct proc *child,
		struct sink_proc *parent)
{
	for (int k = 0; k < VCOUNT_MAX; k++)
		if (vc[k].child == child) {
			give_held(&vc[k], set, parent);
			free(vc[k].held);
			free(vc[k].base);
			memset(&vc[k], 0, sizeof(vc[k]));
		}
}

void vcount_release(struct vcount *vc)
{
	for (int k = 0; k < VCOUNT_MAX; k++) {
		free(vc[k].base);
		free(vc[k].held);
	}
	memset(vc, 0, VCOUNT_MAX * sizeof(*vc));
}

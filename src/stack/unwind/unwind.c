/*
 * unwind.c - the unwinder front end: picks a back end, notices mapping
 * changes, and the trivial "none" back end.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/stub-frame.h"
#include "linux/memio.h"
#include "stack/modules.h"
#include "stack/unwind/unwind.h"
#include "util/xmalloc.h"

static const char *const kind_names[UNWIND_NKINDS] = {
	[UNWIND_NONE] = "none",
	[UNWIND_FP] = "fp",
	[UNWIND_DWARF] = "dwarf",
	[UNWIND_LIBDW] = "libdw",
};

int unwind_kind_from_name(const char *name)
{
	for (int k = 0; k < UNWIND_NKINDS; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -1;
}

const char *unwind_kind_name(enum unwind_kind kind)
{
	return (unsigned)kind < UNWIND_NKINDS ? kind_names[kind] : "?";
}

static const struct unwinder_ops *kind_ops(enum unwind_kind kind)
{
	switch (kind) {
	case UNWIND_NONE:
		return &unwinder_none_ops;
	case UNWIND_FP:
		return &unwinder_fp_ops;
	case UNWIND_DWARF:
		return unwinder_libunwind_ops;
	case UNWIND_LIBDW:
		return unwinder_libdw_ops;
	default:
		return NULL;
	}
}

int unwind_kind_available(enum unwind_kind kind)
{
	return kind_ops(kind) != NULL;
}

static int none_walk(struct unwinder *uw, const struct stack_snapshot *s,
		     uint64_t *pcs, int max_depth)
{
	(void)uw;
	if (max_depth < 1)
		return 0;
	pcs[0] = arch_pc(&s->regs);
	return 1;
}

const struct unwinder_ops unwinder_none_ops = {
	.name = "none",
	.walk = none_walk,
};

struct unwinder *unwinder_new(enum unwind_kind kind, pid_t pid, struct proc_modules *pm)
{
	const struct unwinder_ops *ops = kind_ops(kind);
	struct unwinder *uw;

	if (!ops) {
		errno = ENOSYS;
		return NULL;
	}
	uw = xcalloc(1, sizeof(*uw));
	uw->kind = kind;
	uw->ops = ops;
	uw->pid = pid;
	uw->pm = pm;
	uw->pm_version = pm ? modules_version(pm) : 0;
	if (ops->init && ops->init(uw) < 0) {
		int err = errno;

		free(uw);
		errno = err ? err : EINVAL;
		return NULL;
	}
	return uw;
}

void unwinder_maps_changed(struct unwinder *uw)
{
	uw->dirty = 1;
	if (uw->pm)
		modules_map_changed(uw->pm);
}

/*
 * Bring the module list up to date for a walk: re-read when marked
 * changed, or when pc misses (modules_lookup()); flag the back end when
 * the ranges changed.
 */
static void sync_modules(struct unwinder *uw, uint64_t pc)
{
	if (uw->pm) {
		modules_lookup(uw->pm, pc);
		if (modules_version(uw->pm) != uw->pm_version)
			uw->dirty = 1;
		uw->pm_version = modules_version(uw->pm);
	}
	if (uw->dirty) {
		uw->dirty = 0;
		if (uw->ops->maps_changed)
			uw->ops->maps_changed(uw);
	}
}

/* The frames after a stub walk's return addresses, from its tail's copy. */
static int walk_copy(struct unwinder *uw, const struct stack_snapshot *s, uint64_t *pcs,
		     int max_depth);
static int walk_done(struct unwinder *uw, const struct stack_snapshot *s, uint64_t *pcs,
		     int depth);

int unwinder_walk(struct unwinder *uw, const struct stack_snapshot *s,
		  uint64_t *pcs, int max_depth)
{
	int n;

	if (!uw || !s || (!pcs && max_depth > 0) || max_depth < 0)
		return -1;
	if (max_depth == 0)
		return 0;
	if (max_depth > UNWIND_MAX_DEPTH)
		max_depth = UNWIND_MAX_DEPTH;
	if (!s->walked)
		return walk_copy(uw, s, pcs, max_depth);
	/* the stub's walk: its return addresses, then the tail's frames */
	n = s->npre < max_depth ? s->npre : max_depth;
	if (n > 0)
		memcpy(pcs, s->pre, (size_t)n * sizeof(*pcs));
	if (s->walked == STACK_WALK_TAIL && n < max_depth)
		return n + walk_copy(uw, s, pcs + n, max_depth - n);
	return walk_done(uw, s, pcs, n);
}

static int walk_copy(struct unwinder *uw, const struct stack_snapshot *s, uint64_t *pcs,
		     int max_depth)
{
	int depth;

	sync_modules(uw, arch_pc(&s->regs));
	depth = uw->ops->walk(uw, s, pcs, max_depth);
	if (uw->pm && depth >= 1 && depth < max_depth) {
		/*
		 * The walk stopped at a pc of no known module: maybe code mapped
		 * since the list was read.  If a re-read finds it, walk again.
		 */
		uint64_t last = depth > 1 ? pcs[depth - 1] - 1 : pcs[0];
		unsigned version = modules_version(uw->pm);

		if (!modules_find_range(uw->pm, last)) {
			sync_modules(uw, last);
			if (modules_version(uw->pm) != version)
				depth = uw->ops->walk(uw, s, pcs, max_depth);
		}
	}
	return walk_done(uw, s, pcs, depth);
}

/*
 * The thread is stopped, so the stack above the copy is still the
 * stop's: one walk now, its reads above the copy made live, says how
 * far the later one will read (the same reads of the same bytes), and
 * one more read copies that far.  Only a copy of all the bytes asked
 * for is walked: a shorter one ends where the stack does.
 */
size_t stack_snapshot_extend(struct unwinder *uw, struct stack_snapshot *s, int max_depth,
			     size_t max_bytes)
{
	uint64_t pcs[UNWIND_MAX_DEPTH];
	struct unwinder counted;	/* its counts, put back */
	size_t want, old = s->len;
	ssize_t n;

	if (!s->asked || s->len != s->asked || s->len >= max_bytes)
		return 0;	/* the common case: the copy holds the stack */
	if (!uw || s->borrowed || s->walked || s->go_len || max_depth < 1)
		return 0;
	counted = *uw;
	if (max_depth > UNWIND_MAX_DEPTH)
		max_depth = UNWIND_MAX_DEPTH;
	s->live = 1;
	s->reach = 0;
	walk_copy(uw, s, pcs, max_depth);
	s->live = 0;
	s->cut = 0;
	uw->walks = counted.walks;
	uw->frames = counted.frames;
	uw->failures = counted.failures;
	uw->by_cfi = counted.by_cfi;
	uw->by_insn = counted.by_insn;
	uw->by_fp = counted.by_fp;
	uw->by_jit = counted.by_jit;
	if (s->reach <= s->start + s->len)
		return 0;
	want = s->reach - s->start < max_bytes ? (size_t)(s->reach - s->start) : max_bytes;
	if (s->cap < want) {
		s->data = xrealloc(s->data, want);
		s->cap = want;
	}
	/* short where the stack's mapping ends, as the first read */
	n = memio_read(s->pid, s->tid, s->start + s->len, s->data + s->len, want - s->len);
	if (n > 0) {
		s->len += (size_t)n;
		s->asked = want;
	}
	return s->len - old;
}

/* A walk of depth frames is done: counted; none gives the pc alone. */
static int walk_done(struct unwinder *uw, const struct stack_snapshot *s, uint64_t *pcs,
		     int depth)
{
	if (depth < 1) {
		/* Every back end owes the caller at least the pc. */
		pcs[0] = arch_pc(&s->regs);
		depth = 1;
		uw->failures++;
	}
	uw->walks++;
	uw->frames += (uint64_t)depth;
	return depth;
}

#define STUB_MAX_STEPS 4	/* keep_record, its caller in the stubs, the glue */

int unwind_stub_step(const struct unwinder *uw, const struct stack_snapshot *s,
		     arch_regs_t *regs)
{
	const struct stub_range *r = modules_find_stubs(uw->pm, arch_pc(regs));
	int steps = 0;

	if (!r)
		return 0;
	while (r) {
		struct stub_frame f;
		uint64_t sp = arch_sp(regs), ra, v[ARCH_NSAVED];

		if (steps++ == STUB_MAX_STEPS || r->frame(uw->pm->pid, r->start, arch_pc(regs), &f) < 0)
			return -1;
		if (ARCH_RET_POP == 0 && f.ra_off == STUB_RA_IN_REG) {
			/* still in the return-address register: the stop's own frame only */
			if (steps > 1 || arch_entry_ra(regs, &ra) != 0)
				return -1;
			arch_set_pc(regs, ra);
			r = modules_find_stubs(uw->pm, ra);
			continue;
		}
		if (stack_snapshot_read(s, sp + f.ra_off, &ra, sizeof(ra)) < 0)
			return -1;
		for (int i = 0; i < ARCH_NSAVED; i++)
			if (f.saved[i] >= 0 &&
			    stack_snapshot_read(s, sp + (uint64_t)f.saved[i], &v[i], sizeof(v[i])) < 0)
				return -1;
		for (int i = 0; i < ARCH_NSAVED; i++)
			if (f.saved[i] >= 0)
				arch_set_saved_reg(regs, i, v[i]);
		arch_set_pc(regs, ra);
		arch_set_sp(regs, sp + f.ra_off + 8);	/* stub-frame.h: the frame's top word */
		r = modules_find_stubs(uw->pm, ra);
	}
	return 1;
}

void unwinder_free(struct unwinder *uw)
{
	if (!uw)
		return;
	if (uw->ops->fini)
		uw->ops->fini(uw);
	free(uw);
}

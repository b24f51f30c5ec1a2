/*
 * unwind-libdw.c - DWARF unwinding with elfutils' libdwfl over a stack
 * snapshot (--unwind=libdw).
 *
 * One Dwfl per process, kept for the process's life: it holds each
 * module's ELF and parsed CFI, which is what makes a walk cheap.  Its
 * module list comes from the process's struct proc_modules (no second
 * read of /proc/PID/maps) and is re-reported when that list changes:
 * dwfl_report_begin() + dwfl_report_module() for every module instance
 * + dwfl_report_end() keeps the Dwfl_Module (and its caches) of every
 * module reported again with the same name and range, and drops the
 * others.  ELF files are opened by find_elf below from the module
 * table, that is through /proc/PID/map_files or /proc/PID/root
 * (libdwfl's own dwfl_linux_proc_find_elf opens the path as seen by
 * memtap, which fails across mount namespaces).
 *
 * Thread state comes from Dwfl_Thread_Callbacks over the snapshot:
 * registers from the stop, memory from the copy (then the process).
 * dwfl_attach_state() is called once; each walk points the callbacks at
 * its snapshot.
 *
 * Compiled only with libdw (HAVE_LIBDW).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

#ifdef HAVE_LIBDW

#include <elfutils/libdwfl.h>

#include "modules.h"
#include "xmalloc.h"

struct dw_state {
	Dwfl *dwfl;
	int attached;
	int attach_failures;
	int reported;			/* modules reported at least once */
	const struct stack_snapshot *snap;	/* the walk in progress */
	struct unwind_memcache cache;
	uint64_t *pcs;
	int n, max;
};

/* The module id travels in the Dwfl_Module's userdata, as id + 1. */
static int dw_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	uintptr_t v = (uintptr_t)*userdata;
	const struct module *m = v ? module_get((uint32_t)(v - 1)) : NULL;
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	*elfp = NULL;
	if (!m)
		return -1;
	fd = module_open(m);
	if (fd < 0)
		return -1;
	*file_name = strdup(m->path);
	return fd;
}

static char *dw_debuginfo_path;

static const Dwfl_Callbacks dw_callbacks = {
	.find_elf = dw_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &dw_debuginfo_path,
};

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct dw_state *st = arg;

	(void)dwfl;
	if (*thread_argp || !st->snap)
		return 0;
	*thread_argp = st;
	return st->snap->tid;
}

static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct dw_state *st = arg;

	(void)dwfl;
	if (!st->snap || st->snap->tid != tid)
		return false;
	*thread_argp = st;
	return true;
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct dw_state *st = arg;
	uint64_t w;

	(void)dwfl;
	if (!st->snap || unwind_memcache_read(&st->cache, st->snap, addr, &w, sizeof(w)) < 0)
		return false;
	*result = w;
	return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct dw_state *st = arg;
	const arch_regs_t *r = &st->snap->regs;
	/* DWARF register numbers 0-16 of x86-64 */
	Dwarf_Word regs[17] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rip,
	};

	if (!dwfl_thread_state_registers(thread, 0, 17, regs))
		return false;
	dwfl_thread_state_register_pc(thread, r->rip);
	return true;
}

static const Dwfl_Thread_Callbacks dw_thread_callbacks = {
	.next_thread = dw_next_thread,
	.get_thread = dw_get_thread,
	.memory_read = dw_memory_read,
	.set_initial_registers = dw_set_initial_registers,
};

/* Report the module instances of uw->pm to the Dwfl. */
static void dw_report(struct unwinder *uw)
{
	struct dw_state *st = uw->priv;
	const struct proc_modules *pm = uw->pm;

	dwfl_report_begin(st->dwfl);
	for (size_t i = 0; i < pm->nranges; ) {
		const struct module_range *r = &pm->ranges[i];
		const struct module *m = module_get(r->module);
		uint64_t low = r->start, high = r->end;
		size_t j = i + 1;

		/* the ranges of one instance: same module and bias */
		while (j < pm->nranges && pm->ranges[j].module == r->module &&
		       pm->ranges[j].bias == r->bias) {
			high = pm->ranges[j].end;
			j++;
		}
		i = j;
		if (!m || m->path[0] != '/')
			continue;	/* [vdso] */
		if (m->elf_ok) {
			low = r->bias + m->first_vaddr;
			high = r->bias + m->end_vaddr;
		}
		Dwfl_Module *mod = dwfl_report_module(st->dwfl, m->path, low, high);
		void **ud = NULL;

		if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud)
			*ud = (void *)(uintptr_t)(m->id + 1);
	}
	dwfl_report_end(st->dwfl, NULL, NULL);
	st->reported = 1;
}

static int dw_init(struct unwinder *uw)
{
	struct dw_state *st;

	if (!uw->pm) {
		errno = EINVAL;
		return -1;
	}
	st = xcalloc(1, sizeof(*st));
	st->dwfl = dwfl_begin(&dw_callbacks);
	if (!st->dwfl) {
		free(st);
		errno = ENOMEM;
		return -1;
	}
	uw->priv = st;
	return 0;
}

static void dw_fini(struct unwinder *uw)
{
	struct dw_state *st = uw->priv;

	if (!st)
		return;
	st->snap = NULL;
	dwfl_end(st->dwfl);
	free(st);
	uw->priv = NULL;
}

static void dw_maps_changed(struct unwinder *uw)
{
	struct dw_state *st = uw->priv;

	st->reported = 0;
}

static int dw_frame(Dwfl_Frame *frame, void *arg)
{
	struct dw_state *st = arg;
	Dwarf_Addr pc;
	bool activation = false;

	if (!dwfl_frame_pc(frame, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	/* Convention of unwind.h: exact pcs after frame 0 are stored + 1. */
	st->pcs[st->n] = st->n > 0 && activation ? pc + 1 : pc;
	st->n++;
	return st->n < st->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int dw_walk(struct unwinder *uw, const struct stack_snapshot *s,
		   uint64_t *pcs, int max_depth)
{
	struct dw_state *st = uw->priv;

	if (!st->reported)
		dw_report(uw);
	st->snap = s;
	unwind_memcache_reset(&st->cache);
	if (!st->attached) {
		/* Retried on later walks: no module may have an ELF yet. */
		if (st->attach_failures > 16 ||
		    !dwfl_attach_state(st->dwfl, NULL, uw->pid, &dw_thread_callbacks, st)) {
			st->attach_failures++;
			st->snap = NULL;
			return 0;
		}
		st->attached = 1;
	}
	st->pcs = pcs;
	st->n = 0;
	st->max = max_depth;
	dwfl_getthread_frames(st->dwfl, s->tid, dw_frame, st);
	st->snap = NULL;
	return st->n;
}

static const struct unwinder_ops dw_ops = {
	.name = "libdw",
	.init = dw_init,
	.fini = dw_fini,
	.maps_changed = dw_maps_changed,
	.walk = dw_walk,
};

const struct unwinder_ops *const unwinder_libdw_ops = &dw_ops;

#else /* !HAVE_LIBDW */

const struct unwinder_ops *const unwinder_libdw_ops = NULL;

#endif /* HAVE_LIBDW */

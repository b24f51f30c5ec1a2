/*
 * alloc-detour.c - allocator probes as detours (see alloc-detour.h).
 *
 * Which probes: the allocator functions whose signature memtap knows
 * (malloc ... pvalloc, jemalloc's API), and libc's syscall wrappers
 * (attach mode: mmap, munmap, mremap, brk).  Results are recorded after
 * the function returned (the stub calls it), frees at their entry.  A
 * wrapper's record is never filtered in the stub (DF_ALWAYS: the sink
 * sees every call, for the break and the held ranges, and applies
 * --min-size itself) and becomes the event of its int3 probe
 * (ring.h's wrapper hook).  A wrapper whose event needs /proc read at
 * the call's entry stays an int3 breakpoint: mprotect and madvise (their
 * weights), munmap and mremap when the account is wanted (-e mprotect,
 * madvise, faults).  A --probe function is recorded at its entry, every
 * call (its size argument one of the first five: size=arg5 keeps an
 * int3), and the calls it makes are events of their own (not outer).
 *
 * When: a detour goes in only while every thread of the process is
 * stopped (arming after attach, at the entry point after exec, in a
 * followed fork child, and after a dlopen, when alloc.c stops them all
 * for it); a function found while other threads run (a dlopen with a
 * thread in a group-stop) gets an int3.  Refusals are said with -v,
 * once per probe.
 *
 * Where: the probed functions (and execve, a sync point) are grouped
 * into clusters of at most SET_SPAN bytes.  The stub mapping goes near
 * the cluster of the most functions, a far code page (probe/detour.h)
 * near each other one: objects terabytes apart (a PIE executable with
 * allocator functions of its own, libc) are all detoured, into one
 * ring, one set of counters.  A cluster whose page finds no room within
 * reach keeps int3 probes (said with -v).
 *
 * Wholesale int3 (said with -v, once): --probes=int3, no
 * process_vm_readv (Linux < 3.2: the stubs copy stacks with it, memtap
 * reads the ring with it), the target's seccomp filters forbid a
 * syscall of the installation or of the stubs, no room within reach.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "arch/stub-abi.h"
#include "linux/features.h"
#include "probe/detour.h"
#include "probe/elfsym.h"
#include "probe/probes.h"
#include "probe/remote.h"
#include "record/live.h"
#include "record/sink.h"
#include "trace/alloc-detour.h"
#include "trace/alloc-vcount.h"
#include "trace/ring.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/xmalloc.h"

#define COPY_MAX 8192		/* bytes of stack per record at most */
#define RING_RECORDS 1024	/* 8.3 MiB with 8 KiB copies: resident, the pages written to */
#define WAIT_SPINS 10000	/* sleeps of DT_WAIT_NS on a full ring: about 1 s with the
				   timer slack (50 us a sleep) */
#define SET_SPAN (UINT64_C(3) << 29)	/* 1.5 GiB of code per stub mapping or far page */
#define MAX_CLUSTERS (1 + DT_FAR_MAX)

/* Probed code: a function's, or a cluster's (n functions). */
struct span {
	uint64_t lo, hi;
	size_t n;
};

struct alloc_detours {
	struct detour_set *set;
	struct ring_src *ring;
	pid_t pid;
	pid_t mm_pid;			/* a live thread's tid: its leader may be a zombie */
	struct detour_counts *counts;	/* per probe, as last read */
	struct sink_proc *rec;		/* the process's totals, for those counts */
	uint64_t copy_slow;		/* D_COPY_SLOW, as last read */
	uint64_t set_full;		/* D_SET_FULL, as last read */
	int sampled;			/* a set full makes the leak view approximate */
	size_t wrappers;		/* syscall wrappers detoured */
	size_t no_slot;			/* functions probed by int3 for want of a slot */
	struct vcount vforks[VCOUNT_MAX];	/* vfork children's counts */
};

static const struct alloc_detours_hooks *hooks;

void alloc_detours_init(const struct alloc_detours_hooks *h)
{
	hooks = h;
}

/* How pr's calls are recorded; 0 when it is no allocator function. */
static int probe_kind(const struct probe *pr, struct detour_probe *dp)
{
	memset(dp, 0, sizeof(*dp));
	dp->cookie = (void *)pr;
	dp->result = 1;
	dp->outer = pr->role != PR_USER;
	switch (pr->role) {
	/* DF_SETADD, DF_SETDEL: only with a set of kept blocks (stub-abi.h) */
	case PR_MALLOC: dp->size_kind = SK_ARG0; dp->flags = DF_SETADD; break;
	case PR_CALLOC: dp->size_kind = SK_ARG01; dp->flags = DF_SETADD; break;
	case PR_REALLOC:
		dp->size_kind = SK_ARG1;
		dp->flags = DF_ARG0_KEEP | DF_SETADD | DF_SETDEL;
		break;
	case PR_REALLOCARRAY:
		dp->size_kind = SK_ARG12;
		dp->flags = DF_ARG0_KEEP | DF_SETADD | DF_SETDEL | DF_TAILS;
		break;
	case PR_POSIX_MEMALIGN: dp->size_kind = SK_ARG2; dp->flags = DF_WORD | DF_SETADD; break;
	case PR_ALIGNED: dp->size_kind = SK_ARG1; dp->flags = DF_SETADD | DF_TAILS; break;
	case PR_XALLOCX: dp->size_kind = SK_NONE; break;
	case PR_FREE:
		dp->result = 0;
		dp->size_kind = SK_NONE;
		/* a free weighs nothing: its stack is never shown */
		dp->flags = DF_NOSTACK | DF_SETDEL;
		break;
	case PR_USER:
		/* --probe: recorded at entry, every call (the sink weighs and
		   filters it); the stub keeps arguments 0..4 only */
		if (pr->size_arg > 4)
			return 0;
		dp->result = 0;
		dp->size_kind = SK_NONE;
		dp->flags = DF_ALWAYS;
		break;
	case PR_MMAP: case PR_MUNMAP: case PR_MREMAP: case PR_BRK:
	case PR_MPROTECT: case PR_MADVISE:
		if (!hooks->wrapper_detourable(pr))
			return 0;
		dp->size_kind = pr->role == PR_BRK ? SK_NONE : pr->role == PR_MREMAP ? SK_ARG2 : SK_ARG1;
		dp->flags = DF_ALWAYS;
		break;
	default:
		return 0;
	}
	return 1;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

static void say_int3(pid_t pid, const char *why)
{
	static int said;

	if (!said && verbose)
		verbose_msg("process %d: allocator probes are int3 breakpoints: %s", pid, why);
	said = 1;
}

/* The code of the functions to detour, execve's too, sorted: how many, in *out. */
static size_t probed_code(struct elfsym_proc *ep, struct span **out)
{
	static const char *const sync_names[] = { "execve", "execveat" };
	size_t n = 0, cap = 0, np = probes_count();
	struct span *c = NULL;

	for (size_t i = 0; i < np + 2; i++) {
		const struct probe *pr = i < np ? probes_get(i) : NULL;
		struct detour_probe dp;
		struct elfsym_result r;

		if (pr && !probe_kind(pr, &dp))
			continue;
		if ((pr && pr->optional ? elfsym_lookup_api : elfsym_lookup)(
			    ep, pr ? pr->spec : sync_names[i - np], NULL, &r) < 0 || r.ifunc)
			continue;
		c = xgrowarray(c, &cap, n + 1, sizeof(*c));
		c[n].lo = r.addr;
		c[n].hi = r.addr + (r.size ? r.size : 64);
		c[n++].n = 1;
	}
	/* insertion sort: a few dozen */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && c[j].lo < c[j - 1].lo; j--) {
			struct span t = c[j];

			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	*out = c;
	return n;
}

/*
 * The sorted code c[0..n) in clusters, into cl (MAX_CLUSTERS at most:
 * the code after them keeps int3 probes), the one of the most functions
 * first: how many.
 */
static size_t clusters(pid_t pid, const struct span *c, size_t n, struct span *cl)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && c[i].hi - cl[k - 1].lo <= SET_SPAN) {
			if (c[i].hi > cl[k - 1].hi)
				cl[k - 1].hi = c[i].hi;
			cl[k - 1].n++;
		} else if (k < MAX_CLUSTERS) {
			cl[k++] = c[i];
		} else {
			debug_msg("process %d: more than %d clusters of allocator functions: those "
				  "from %#" PRIx64 " on keep int3 probes", pid, MAX_CLUSTERS, c[i].lo);
			break;
		}
	}
	for (size_t i = 1; i < k; i++)
		if (cl[i].n > cl[0].n) {
			struct span t = cl[0];

			cl[0] = cl[i];
			cl[i] = t;
		}
	return k;
}

/* Why the stubs cannot go in, for -v, into buf. */
static void install_error(int err, const char *why, char *buf, size_t size)
{
	if (err == -EPERM && why)
		snprintf(buf, size, "its seccomp filter forbids %s, which the stubs make", why);
	else if (err == -EPERM && remote_refusal())
		snprintf(buf, size, "%s", remote_refusal());
	else if (why)
		snprintf(buf, size, "cannot map the stubs: %s", why);
	else
		snprintf(buf, size, "cannot map the stubs: %s", strerror(-err));
}

struct seed {
	uint64_t *ptrs;
	size_t n, cap;
};

static void seed_one(const struct live_block *b, void *arg)
{
	struct seed *s = arg;

	s->ptrs = xgrowarray(s->ptrs, &s->cap, s->n + 1, sizeof(*s->ptrs));
	s->ptrs[s->n++] = b->addr;
}

/*
 * A set of kept blocks: those the process holds already (a fork child's,
 * its parent's kept blocks) into it, so that their frees are recorded
 * too.
 */
static void seed_leaks(struct alloc_detours *ad, struct thread *tcp)
{
	struct seed s = { NULL, 0, 0 };
	int err;

	live_foreach(tcp->proc->rec, seed_one, &s);
	if (s.n && (err = detour_leak_seed(ad->set, tcp->tid, s.ptrs, s.n)) < 0)
		debug_msg("process %d: cannot fill the set of sampled blocks: %s", ad->pid,
			  strerror(-err));
	free(s.ptrs);
}

/*
 * The stub walk (probe/detour.h): each record holds return addresses, at
 * most as many as --max-depth and half its room, and copies the stack
 * only from a frame the tables do not know.  With --exact, unless
 * MEMTAP_STUB_WALK=0 (or =1 when sampled): compiling the tables costs
 * every process and exec some milliseconds (libc's 28,000 rows), which
 * only a run that keeps every call wins back.
 */
static void walk_start(struct alloc_detours *ad, struct thread *tcp, uint64_t copy_len)
{
	const char *env = getenv("MEMTAP_STUB_WALK");
	uint64_t max = (uint64_t)sink_config()->max_depth;
	int err;

	if (env && *env ? !strcmp(env, "0") : ad->sampled)
		return;
	if (!copy_len)
		return;
	if (max > copy_len / 16)
		max = copy_len / 16;
	err = detour_walk_start(ad->set, tcp->tid, (unsigned)max);
	if (err < 0)
		debug_msg("process %d: no stub walk: %s", ad->pid, strerror(-err));
}

void alloc_detours_tables(struct alloc_detours *ad)
{
	if (ad)
		detour_walk_update(ad->set);
}

struct alloc_detours *alloc_detours_arm(const struct trace_config *cfg, struct procs *pt,
					struct thread *tcp, struct elfsym_proc *ep)
{
	struct detour_config dc = { 0 };
	struct alloc_detours *ad;
	struct span *code, cl[MAX_CLUSTERS];
	uint64_t nrec;
	const char *why = NULL;
	pid_t pid = tcp->proc->pid;
	char buf[160];
	size_t n, ncl;
	int err;

	(void)pt;
	if (cfg->probes == PROBES_INT3)
		return NULL;
	if (!feature_has(F_PROCESS_VM_READV)) {
		say_int3(pid, "this kernel has no process_vm_readv (Linux 3.2)");
		return NULL;
	}
	n = probed_code(ep, &code);
	ncl = clusters(pid, code, n, cl);
	free(code);
	if (!ncl)
		return NULL;
	dc.copy_len = sink_stacks_wanted() ? sink_stack_size() : 0;
	if (dc.copy_len > COPY_MAX)
		dc.copy_len = COPY_MAX;
	dc.copy_len &= ~(uint64_t)7;
	nrec = env_u64("MEMTAP_RING_RECORDS", RING_RECORDS);
	if (!nrec || (nrec & (nrec - 1)) || nrec > (1u << 16))
		nrec = RING_RECORDS;
	dc.nrec = nrec;
	dc.min_size = cfg->min_size;
	dc.max_size = cfg->max_size;
	dc.wait_spins = env_u64("MEMTAP_RING_WAIT", WAIT_SPINS);
	dc.test_slots = env_u64("MEMTAP_TEST_SLOTS", 0);	/* for tests: slots run out */
	dc.sample_mean = cfg->sample_mean;
	/*
	 * The set of kept blocks: sampled, for --leaks (the frees of sampled
	 * blocks are recorded); not sampled, with a size filter (only the
	 * frees of blocks kept by their size are recorded; all of them once
	 * the set had no room for one).
	 */
	if ((cfg->leaks && cfg->sample_mean) ||
	    (!cfg->sample_mean && (cfg->min_size || cfg->max_size))) {
		/* MEMTAP_LEAK_SET: a smaller set, for the tests of a full one */
		dc.leak_set = env_u64("MEMTAP_LEAK_SET", DT_SET_N);
		if (dc.leak_set < 2 || dc.leak_set > DT_SET_N || (dc.leak_set & (dc.leak_set - 1)))
			dc.leak_set = DT_SET_N;
	}
	dc.sample_seed = env_u64("MEMTAP_SAMPLE_SEED", now_ns() ^ (uint64_t)pid << 32);
	/* compact records: a --trace line shows the caller, which they lack;
	   MEMTAP_COMPACT=0: full ones, for the tests that compare them */
	dc.compact = !sink_config()->trace && env_u64("MEMTAP_COMPACT", 1) != 0;
	ad = xcalloc(1, sizeof(*ad));
	ad->pid = pid;
	ad->mm_pid = procfs_live_task(pid);
	ad->sampled = cfg->sample_mean != 0;
	ad->set = detour_set_new(ad->mm_pid, &dc);
	err = detour_install(ad->set, tcp->tid, ep, cl[0].lo, cl[0].hi, &why);
	if (err < 0) {
		install_error(err, why, buf, sizeof(buf));
		say_int3(pid, buf);
		detour_set_free(ad->set);
		free(ad);
		return NULL;
	}
	for (size_t i = 1; i < ncl; i++)
		if ((err = detour_far(ad->set, tcp->tid, cl[i].lo, cl[i].hi)) < 0 && verbose)
			verbose_msg("process %d: allocator probes in %#" PRIx64 "-%#" PRIx64 " are int3 "
				 "breakpoints: cannot map a code page near them: %s", pid, cl[i].lo,
				 cl[i].hi, strerror(-err));
	if (dc.leak_set)
		seed_leaks(ad, tcp);
	ad->ring = ring_add(tcp->proc, ad->set, &hooks->ring);
	ad->rec = tcp->proc->rec;
	walk_start(ad, tcp, dc.copy_len);
	for (unsigned i = 0; i <= DT_FAR_MAX; i++) {
		/* stacks taken while a stub's function runs go through its frame */
		uint64_t len, base = detour_stubs(ad->set, i, &len);

		if (base)
			sink_proc_add_stubs(tcp->proc->rec, base, len, detour_stub_frame);
	}
	{
		/* the account: what memtap maps into the process, and leaves there */
		uint64_t data, size = detour_made(ad->set, &data);

		tcp->proc->rec->left_size += size;
		tcp->proc->rec->left_data += data;
	}
	/* every thread is stopped (or tcp is the only one) */
	{
		struct thread *t;
		size_t it = 0;

		while ((t = procs_next_thread(pt, &it)))
			if (t->proc == tcp->proc && (t == tcp || (t->flags & T_STOPPED)))
				alloc_detours_thread(ad, t, 0);
	}
	return ad;
}

/*
 * Its stack: the main thread's is the [stack] mapping, which may grow to
 * the rlimit; another thread's ends below its TCB (glibc and musl put
 * the TCB and static TLS at the top of the thread's stack block): a
 * mapping may be merged with the next one and lose it later, so its end
 * is no bound (arch_stack_top_from_tp()).  A thread whose TCB is not
 * above its sp in the mapping (its own stack elsewhere) stays out of
 * the table: process_vm_readv.
 *
 * The stubs copy the stack up to that end, so the end is put where the
 * outermost frame ends: the main thread's at the process's first stack
 * pointer (startstack, where argc is: the arguments, environment and
 * auxiliary vector above it are no frame; often several KiB), a new
 * thread's (fresh: its first stop, before any instruction of its own)
 * at its sp then, with room for what a clone wrapper leaves above it
 * (the static TLS between it and the TCB is no frame either).
 */
#define STACK_TOP_ROOM 256

void alloc_detours_thread(struct alloc_detours *ad, struct thread *tcp, int fresh)
{
	struct procfs_map *maps;
	arch_regs_t regs;
	struct rlimit rl;
	uint64_t top, sp, tp, tcb;
	size_t n;

	if (!ad || arch_regs_get(tcp->tid, &regs) < 0 || !arch_tp(&regs) ||
	    procfs_read_maps(ad->mm_pid, &maps, &n) < 0)
		return;
	sp = arch_sp(&regs);
	tp = arch_tp(&regs);
	tcb = arch_stack_top_from_tp(tp);
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = maps[i].start;

		if (sp < maps[i].start || sp >= maps[i].end)
			continue;
		if (maps[i].path && !strcmp(maps[i].path, "[stack]")) {
			uint64_t room = 8ULL << 20;

			if (prlimit(ad->pid, RLIMIT_STACK, NULL, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
				room = rl.rlim_cur;
			lo = maps[i].end > room ? maps[i].end - room : 0;
			if (procfs_stat_fields(ad->mm_pid, 28, 1, &top) < 0 || top < sp ||
			    top + STACK_TOP_ROOM > maps[i].end)
				top = maps[i].end;	/* not shown, or not in this stack */
			else
				top += STACK_TOP_ROOM;
		} else if (tcb > sp && tcb < maps[i].end) {
			top = tcb;
			if (fresh && sp + STACK_TOP_ROOM < top)
				top = sp + STACK_TOP_ROOM;
		} else {
			break;
		}
		detour_thread_add(ad->set, tcp->tid, tp, lo, top);
		debug_msg("thread %d: stack copied up to %#" PRIx64 ", %" PRIu64 " bytes above sp",
			  tcp->tid, top, top - sp);
		break;
	}
	procfs_maps_free(maps);
}

void alloc_detours_thread_gone(struct alloc_detours *ad, pid_t tid)
{
	if (ad)
		detour_thread_remove(ad->set, tid);
}

/* Are all threads of tcp's process stopped?  They and their pcs into *th. */
static int all_stopped(struct procs *pt, struct thread *tcp, struct detour_thread **th,
		       size_t *n)
{
	struct thread *t;
	size_t it = 0, cap = 0;

	*th = NULL;
	*n = 0;
	while ((t = procs_next_thread(pt, &it))) {
		arch_regs_t regs;

		if (t->proc != tcp->proc || (t != tcp && (t->flags & T_EXITED)))
			continue;
		if (t != tcp && (!(t->flags & T_STOPPED) || (t->flags & T_LISTENING)))
			goto running;
		if (arch_regs_get(t->tid, &regs) < 0)
			goto running;
		*th = xgrowarray(*th, &cap, *n + 1, sizeof(**th));
		(*th)[*n].tid = t->tid;
		(*th)[(*n)++].pc = arch_pc(&regs);
	}
	return 1;
running:
	free(*th);
	*th = NULL;
	return 0;
}

int alloc_detours_insert(struct alloc_detours *ad, struct procs *pt, struct thread *tcp,
			 struct probe *pr, const struct elfsym_result *r)
{
	struct detour_probe dp;
	const char *why = NULL;
	struct detour_thread *th;
	size_t nth;
	int err;

	if (ad && (pr->role >= PR_MMAP || pr->role == PR_USER) && !probe_kind(pr, &dp)) {
		if (!pr->reported && verbose)
			verbose_msg("process %d: %s is an int3 breakpoint: %s", ad->pid, pr->spec,
				 pr->role == PR_USER ? "its size is the sixth argument"
						     : "its event reads /proc at the call's entry");
		return 0;
	}
	if (!ad || !probe_kind(pr, &dp) || r->ifunc)
		return 0;
	if (!all_stopped(pt, tcp, &th, &nth)) {
		if (!pr->reported && verbose)
			verbose_msg("process %d: %s is an int3 breakpoint: found while other threads run",
				 ad->pid, pr->spec);
		return 0;
	}
	err = detour_insert(ad->set, tcp->tid, r->addr, r->size, &dp, th, nth, &why);
	free(th);
	if (err == 0 || err == -EEXIST) {
		debug_msg("process %d: probe %s at %#" PRIx64 " (%s in %s) detoured", ad->pid,
			  pr->spec, r->addr, r->name, r->module->path);
		if (pr->role >= PR_MMAP)
			ad->wrappers++;
		/* the break before the first brk recorded: now, every thread stopped */
		if (pr->role == PR_BRK && !tcp->proc->brk)
			tcp->proc->brk = procfs_heap_end(ad->mm_pid);
		return 1;
	}
	if (err == -ENOSPC && !ad->no_slot++)
		warn_msg("process %d: memtap's stub slots are all in use: %s (%s) and the functions "
			 "probed after it are int3 breakpoints", ad->pid, r->name, r->module->path);
	else if (verbose && err != -ENOSPC)	/* those only counted, in say_lost() */
		verbose_msg("process %d: %s at %#" PRIx64 " is an int3 breakpoint: %s", ad->pid,
			 pr->spec, r->addr, why ? why : strerror(-err));
	return 0;
}

void alloc_detours_live_task(struct alloc_detours *ad, pid_t tid)
{
	if (ad)
		ad->mm_pid = tid;
}

size_t alloc_detours_wrappers(const struct alloc_detours *ad)
{
	return ad ? ad->wrappers : 0;
}

/*
 * A sync point (its records no event, cookie says which) at r, every
 * thread stopped: 0, or -errno with *why (-EAGAIN: a thread runs).
 */
static int sync_point(struct alloc_detours *ad, struct procs *pt, struct thread *tcp,
		      const struct elfsym_result *r, void *cookie, const char **why)
{
	struct detour_probe dp = { .sync = 1, .size_kind = SK_NONE, .flags = DF_ALWAYS | DF_NOSTACK,
				   .cookie = cookie };
	struct detour_thread *th;
	size_t nth;
	int err;

	*why = NULL;
	if (!all_stopped(pt, tcp, &th, &nth))
		return -EAGAIN;
	err = detour_insert(ad->set, tcp->tid, r->addr, r->size, &dp, th, nth, why);
	free(th);
	return err == -EEXIST ? 0 : err;
}

void alloc_detours_sync_points(struct alloc_detours *ad, struct procs *pt, struct thread *tcp,
			       struct elfsym_proc *ep)
{
	static const char *const names[] = { "execve", "execveat" };

	for (size_t i = 0; ad && i < sizeof(names) / sizeof(names[0]); i++) {
		struct elfsym_result r;
		const char *why;
		int err;

		if (elfsym_lookup(ep, names[i], NULL, &r) < 0 || r.ifunc || detour_at(ad->set, r.addr))
			continue;
		err = sync_point(ad, pt, tcp, &r, &ring_sync_cookie, &why);
		if (err == -EAGAIN)
			return;
		if (err < 0 && verbose)
			verbose_msg("process %d: no sync point at %s (%s): what its probes record "
				 "just before it execs may be lost", ad->pid, names[i],
				 why ? why : strerror(-err));
	}
}

int alloc_detours_dl_point(struct alloc_detours *ad, struct procs *pt, struct thread *tcp,
			   const struct elfsym_result *r)
{
	const char *why;
	int err;

	if (!ad || !ad->ring || r->ifunc)
		return 0;
	err = sync_point(ad, pt, tcp, r, &ring_dl_cookie, &why);
	if (err == -EAGAIN)
		return 0;
	if (err < 0) {
		if (verbose)
			verbose_msg("process %d: _dl_debug_state is an int3 breakpoint: %s", ad->pid,
				 why ? why : strerror(-err));
		return 0;
	}
	return 1;
}

void alloc_detours_release(struct alloc_detours *ad)
{
	if (ad && ad->ring && ring_release(ad->ring))
		ring_drain(ad->ring);
}

int alloc_detours_at(const struct alloc_detours *ad, uint64_t addr)
{
	return ad && detour_at(ad->set, addr) != NULL;
}

void alloc_detours_forget(struct alloc_detours *ad, uint64_t addr)
{
	if (ad)
		detour_forget(ad->set, addr);
}

static void read_counts(struct alloc_detours *ad);

void alloc_detours_vfork(struct alloc_detours *ad, pid_t tid, struct proc *child)
{
	if (!ad || !ad->ring)
		return;
	ring_vfork(ad->ring, tid, child);
	read_counts(ad);	/* the parent's until now */
	vcount_begin(ad->vforks, ad->set, tid, child);
}

void alloc_detours_vfork_end(struct alloc_detours *ad, struct proc *child)
{
	if (ad && ad->ring)
		ring_vfork_end(ad->ring, child);
	if (ad)
		vcount_end(ad->vforks, ad->set, child, ad->rec);
}

void alloc_detours_vfork_stop(struct alloc_detours *ad, struct proc *child, int execve)
{
	if (ad && execve)
		vcount_hold(ad->vforks, child);
	else if (ad)
		vcount_stopped(ad->vforks, ad->set, child);
}

/*
 * The stubs' counters, per probe: what they counted since the last read
 * goes to the process's totals (sink.h: sink_add_counted()), when the
 * stubs leave nested calls out (the counts are then the program's calls).
 */
static void read_counts(struct alloc_detours *ad)
{
	size_t n = probes_count();
	const void **cookies = xcalloc(n ? n : 1, sizeof(*cookies));
	struct detour_counts *now = xcalloc(n ? n : 1, sizeof(*now));

	if (!ad->counts)
		ad->counts = xcalloc(n ? n : 1, sizeof(*ad->counts));
	for (size_t i = 0; i < n; i++)
		cookies[i] = probes_get(i);
	if (n && detour_read_counts_of(ad->set, cookies, n, now) == 0) {
		/* a vfork child's, read after now: the parent's may be behind given */
		int vforks = vcount_take(ad->vforks, ad->set, ad->counts);

		for (size_t i = 0; i < n; i++) {
			const struct probe *pr = probes_get(i);
			int counted = probe_counted(pr);

			if (ad->rec && counted && detour_nested_counted(ad->set) &&
			    now[i].calls >= ad->counts[i].calls)
				sink_add_counted(ad->rec, pr->kind, now[i].calls - ad->counts[i].calls,
						 now[i].bytes - ad->counts[i].bytes, counted);
			if (now[i].calls >= ad->counts[i].calls || !vforks)
				ad->counts[i] = now[i];
		}
	}
	free(now);
	free(cookies);
}

void alloc_detours_drain_ring(struct alloc_detours *ad)
{
	if (ad && ad->ring)
		ring_drain(ad->ring);
}

void alloc_detours_drain(struct alloc_detours *ad)
{
	if (!ad || !ad->ring)
		return;
	ring_drain(ad->ring);
	/* the stubs' counters too, while they can be read */
	ring_lost(ad->ring);
	detour_read_data(ad->set, D_COPY_SLOW, &ad->copy_slow);
	uint64_t full;

	if (detour_read_data(ad->set, D_SET_FULL, &full) == 0 && full)
		ad->set_full = full;
	read_counts(ad);
}

/* Once, while the counters can still be read: what was lost. */
static void say_lost(struct alloc_detours *ad)
{
	uint64_t lost, records, copied, compact, again, gone;

	if (!ad->ring)
		return;
	detour_slot_stats(ad->set, &again, &gone);
	if (verbose && (again || gone || ad->no_slot))
		verbose_msg("process %d: stub slots: %" PRIu64 " of unloaded code used again, %" PRIu64
			 " not yet; %zu functions probed by int3 for want of one", ad->pid, again,
			 gone, ad->no_slot);
	lost = ring_lost(ad->ring);
	records = ring_records(ad->ring, &copied, &compact);
	debug_msg("process %d: %" PRIu64 " records from the in-target ring (%" PRIu64
		  " compact), %" PRIu64 " bytes of stack a full record on average, %" PRIu64
		  " stacks copied by process_vm_readv", ad->pid, records, compact,
		  records > compact ? copied / (records - compact) : 0, ad->copy_slow);
	for (size_t i = 0; verbose && ad->counts && i < probes_count(); i++) {
		const struct detour_counts *c = &ad->counts[i];

		if (c->calls)
			verbose_msg("process %d: %s: %" PRIu64 " calls (%" PRIu64 " bytes asked) in its "
				 "stub, %" PRIu64 " recorded, %" PRIu64 " only counted (size), %" PRIu64
				 " only counted (not sampled); %" PRIu64 " decided in the prefilter", ad->pid,
				 probes_get(i)->name, c->calls, c->bytes, c->kept, c->filtered,
				 c->unsampled, c->fast);
	}
	/* no report is made once the output is gone: nothing to warn of */
	if (lost && !output_gone())
		warn_msg("process %d: %" PRIu64 " allocator calls not recorded: the in-target "
			 "ring was full (memtap did not keep up)", ad->pid, lost);
	if (ad->set_full && ad->sampled && !output_gone())
		warn_msg("process %d: %" PRIu64 " sampled blocks not followed to their free (the "
			 "set of sampled blocks in the target was full): the leak view is "
			 "approximate", ad->pid, ad->set_full);
	ring_remove(ad->ring);
	ad->ring = NULL;
}

int alloc_detours_remove(struct alloc_detours *ad, pid_t tid)
{
	int err;

	/* a dlopen waiting in _dl_debug_state's stub: the ring goes on */
	if (ad->ring)
		ring_release(ad->ring);
	alloc_detours_drain(ad);
	err = detour_remove_all(ad->set, tid);
	alloc_detours_drain(ad);
	say_lost(ad);
	return err;
}

void alloc_detours_clean_fork(const struct alloc_detours *ad, pid_t child)
{
	int err;

	if (!ad)
		return;
	err = detour_clean_fork_child(ad->set, child);
	if (err < 0)
		error_msg("cannot remove the detours from fork child %d: %s", child, strerror(-err));
}

void alloc_detours_free(struct alloc_detours *ad)
{
	if (!ad)
		return;
	if (ad->ring)
		say_lost(ad);
	detour_set_free(ad->set);
	vcount_release(ad->vforks);
	free(ad->counts);
	free(ad);
}

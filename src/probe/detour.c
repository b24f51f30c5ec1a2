/*
 * detour.c - in-target probes (see detour.h): plan a detour at a
 * function entry, map the stub mapping and the ring, write a probe's
 * glue and relocated entry into its slot, patch the entry, undo it;
 * the thread table.  Planning and relocation: arch/detour-plan.h.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "arch/arch.h"
#include "arch/stub-abi.h"
#include "linux/features.h"
#include "linux/memio.h"
#include "linux/procfs.h"
#include "probe/breakpoint.h"
#include "probe/detour.h"
#include "probe/detour-int.h"
#include "arch/detour-plan.h"
#include "probe/detour-ring.h"
#include "probe/elfsym.h"
#include "probe/hole.h"
#include "probe/remote.h"
#include "probe/sandbox.h"
#include "record/sample.h"
#include "util/error.h"
#include "util/xmalloc.h"

#ifndef MADV_WIPEONFORK
# define MADV_WIPEONFORK 18
#endif

#define MAX_FUNC_READ 65536


struct detour_set *detour_set_new(pid_t pid, const struct detour_config *cfg)
{
	struct detour_set *ds = xcalloc(1, sizeof(*ds));

	ds->pid = pid;
	ds->cfg = *cfg;
	ds->mean = cfg->sample_mean;
	sample_rng_init(&ds->rng, cfg->sample_seed);
	return ds;
}

void detour_set_free(struct detour_set *ds)
{
	if (ds && ds->tramp)
		remote_tramp_clear(ds->pid);
	if (ds) {
		detour_ring_unshare(ds->local, ds->ring_len);
		detour_walk_free(ds);
	}
	free(ds);
}

/*
 * The trampoline of injected syscalls into the code mapping at base,
 * then used for the process's next ones: a memtap killed during one
 * no longer harms the thread (remote.h).
 */
static void tramp_install(struct detour_set *ds, pid_t tid, uint64_t base)
{
	uint8_t code[REMOTE_TRAMP_SIZE];

	if (!remote_tramp_code(base + TRAMP_OFF, code, sizeof(code)) ||
	    memio_write_code(ds->pid, tid, base + TRAMP_OFF, code, sizeof(code)) < 0)
		return;
	remote_tramp_set(ds->pid, base + TRAMP_OFF);
	ds->tramp = 1;
}

static void tramp_remove(struct detour_set *ds)
{
	if (ds->tramp)
		remote_tramp_clear(ds->pid);
	ds->tramp = 0;
}

int detour_installed(const struct detour_set *ds)
{
	return ds && ds->base != 0;
}

/* ---- the mappings ---- */

static uint64_t own_pid(pid_t pid);

/*
 * Where the tid is from the thread pointer (D_TID_OFF), from the tid's
 * offset in glibc's struct pthread that libthread_db's descriptor gives
 * (and, where the CPU needs it, the struct's size: stub-abi.h,
 * arch_stub_tid_off(); then checked in the stopped thread tid: the word
 * there is its tid, or 0).
 */
static uint64_t tcb_tid_offset(pid_t pid, pid_t tid, struct elfsym_proc *ep)
{
	struct elfsym_result self;
	uint64_t value, off;
	uint32_t desc[3], size = 0, seen = 0;
	arch_regs_t regs;

	if (!ep || elfsym_lookup(ep, "pthread_self", NULL, &self) < 0 ||
	    elfsym_module_lookup(self.module, "_thread_db_pthread_tid", &value) < 0)
		return 0;
	if (memio_read_all(pid, 0, value + self.module->bias, desc, sizeof(desc)) < 0 ||
	    desc[0] != 32 || desc[2] == 0 || desc[2] > 65536)
		return 0;
	if (ARCH_STUB_TID_SIZE &&
	    (elfsym_module_lookup(self.module, "_thread_db_sizeof_pthread", &value) < 0 ||
	     memio_read_all(pid, 0, value + self.module->bias, &size, sizeof(size)) < 0 ||
	     size > 65536))
		return 0;
	off = arch_stub_tid_off(desc[2], size);
	if (ARCH_STUB_TID_SIZE && off &&
	    (arch_regs_get(tid, &regs) < 0 || !arch_tp(&regs) ||
	     memio_read_all(pid, tid, arch_tp(&regs) + off, &seen, sizeof(seen)) < 0 ||
	     seen != own_pid(tid)))
		return 0;
	return off;
}

/* The pid as the process sees it (the last NSpid). */
static uint64_t own_pid(pid_t pid)
{
	long ids[4] = { 0 };
	uint64_t v = (uint64_t)pid;

	if (procfs_status_ids(pid, "NSpid", ids) == 0)
		for (int i = 0; i < 4 && ids[i] > 0; i++)
			v = (uint64_t)ids[i];
	return v;
}

/* Would the stubs' own syscalls pass the thread's seccomp filters? */
static int stubs_allowed(pid_t tid, uint64_t insn, int gettid, const char **why)
{
	static const struct {
		long nr;
		const char *name;
	} calls[] = {
		{ SYS_process_vm_readv, "process_vm_readv" },
		{ SYS_clock_nanosleep, "clock_nanosleep" },
		{ SYS_sched_yield, "sched_yield" },
		{ SYS_gettid, "gettid" },
	};
	struct sandbox *sb = sandbox_load(tid);
	struct sandbox_verdict v;
	int ok = 1;

	for (size_t i = 0; ok && i < sizeof(calls) / sizeof(calls[0]); i++) {
		const uint64_t args[6] = { 0 };

		if (calls[i].nr == SYS_gettid && !gettid)
			continue;
		if (!sandbox_allows(sb, calls[i].nr, args, insn, &v)) {
			*why = calls[i].name;
			ok = 0;
		}
	}
	sandbox_free(sb);
	return ok;
}

static int64_t inject(struct detour_set *ds, pid_t tid, long nr, uint64_t a0, uint64_t a1,
		      uint64_t a2)
{
	const uint64_t args[6] = { a0, a1, a2, 0, 0, 0 };
	struct remote_result res;
	int err = remote_syscall(tid, ds->syscall_insn, nr, args, &res);

	return err < 0 ? err : res.ret;
}

int64_t dt_hole(const struct detour_set *ds, uint64_t lo, uint64_t hi, uint64_t len)
{
	struct procfs_map *maps;
	uint64_t hole;
	size_t n;

	if (procfs_read_maps(ds->pid, &maps, &n) < 0)
		return -errno;
	hole = hole_find(maps, n, lo, hi, len, ARCH_NEAR_REACH);
	procfs_maps_free(maps);
	return hole ? (int64_t)hole : -ENOMEM;
}

int64_t dt_map_at(struct detour_set *ds, pid_t tid, uint64_t a, uint64_t len, int prot)
{
	struct remote_result res;
	int64_t got = remote_mmap(tid, ds->syscall_insn, a, len, prot, bp_scratch_flags(), &res);

	if (got < 0 && got > -4096)
		return got;
	if ((uint64_t)got != a) {
		/* without MAP_FIXED_NOREPLACE the address is a hint */
		remote_munmap(tid, ds->syscall_insn, (uint64_t)got, len, &res);
		return -EEXIST;
	}
	return got;
}

/* TAIL's address in a ring of nrec records of rec_size bytes at commit: its own line. */
static uint64_t ring_tail(uint64_t commit, uint64_t nrec, uint64_t rec_size)
{
	return (commit + nrec * (8 + rec_size) + 63) & ~(uint64_t)63;
}

/* The ring's mapping: commit words, records, TAIL, in whole pages. */
static uint64_t ring_bytes(uint64_t nrec, uint64_t rec_size)
{
	return (ring_tail(0, nrec, rec_size) + 8 + DT_PAGE - 1) & ~(uint64_t)(DT_PAGE - 1);
}

/*
 * Do the stubs stamp each call with the CPU's counter (D_CLOCK,
 * stub-abi.h R_TIME)?  Asked once: the counter is there (F_STUB_CLOCK)
 * and in step with CLOCK_MONOTONIC (arch_stub_clock_start()); if not,
 * -v says once that the events carry the time memtap read them.
 */
static int stub_clock(void)
{
	static int on;		/* 0: not asked yet, 1: yes, -1: no */
	const char *why = NULL;

	if (on)
		return on > 0;
	if (!feature_has(F_STUB_CLOCK))
		why = "CPU feature stub_clock off";
	else if (arch_stub_clock_start(&why) < 0)
		feature_found(F_STUB_CLOCK, 0);
	on = why ? -1 : 1;
	if (why)
		verbose_msg("allocator calls carry the time memtap read their records, not the "
			    "time of the call: %s", why);
	return on > 0;
}

/*
 * The data page, HEAD kept (records' R_SEQ hold sequence numbers: they
 * must never go back), TAIL = HEAD; the counters zeroed.
 */
static int write_data(struct detour_set *ds, pid_t tid, uint64_t tid_off)
{
	uint64_t data[DT_PAGE / 8] = { 0 }, zero[DT_PAGE / 8] = { 0 };
	int err;

	data[D_PID / 8] = own_pid(ds->pid);
	data[D_RING / 8] = ds->ring;
	data[D_COMMIT / 8] = ds->commit;
	data[D_NREC / 8] = ds->cfg.nrec;
	data[D_MASK / 8] = ds->cfg.nrec - 1;
	data[D_REC_SIZE / 8] = ds->rec_size;
	data[D_COPY_LEN / 8] = ds->cfg.copy_len;
	data[D_STALL_TAIL / 8] = ~(uint64_t)0;
	data[D_TID_OFF / 8] = tid_off;
	data[D_WAIT_SPINS / 8] = ds->cfg.wait_spins;
	data[D_MIN_SIZE / 8] = ds->cfg.min_size;
	data[D_MAX_SIZE / 8] = ds->cfg.max_size ? ds->cfg.max_size : ~(uint64_t)0;
	data[D_DROPPED / 8] = ds->dropped0;
	data[D_TAILP / 8] = ds->tail;
	data[D_SAMPLE_MEAN / 8] = ds->mean;
	data[D_PREFETCH / 8] = feature_has(F_PREFETCHW);
	ds->clock = stub_clock();
	data[D_CLOCK / 8] = (uint64_t)ds->clock;
	if (ds->cfg.leak_set)
		data[D_SET_MASK / 8] = ds->cfg.leak_set - 1;
	data[D_KEEP_ALL / 8] = detour_keeps_all(ds);
	if (ds->mean) {
		data[D_SHARED_LEFT / 8] = sample_interval(&ds->rng, ds->mean);
		data[D_SHARED_MEAN / 8] = ds->mean;
		for (unsigned i = 0; i < DT_POOL_N; i++) {
			ds->pool[2 * i] = sample_interval(&ds->rng, ds->mean);
			ds->pool[2 * i + 1] = ds->mean;
		}
	}
	ds->pool_idx = 0;
	err = memio_write(ds->pid, tid, ds->tail, &ds->head0, sizeof(ds->head0));
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_DATA, data, D_HEAD);
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_TAILP, data + D_TAILP / 8,
				  sizeof(data) - D_TAILP);
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_COUNTERS, zero, sizeof(zero));
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_THREADS, zero, sizeof(zero));
	/* an earlier memtap's: its threads' counts too (a new mapping is zero) */
	for (unsigned i = 0; err == 0 && ds->reused && i < (K_NENT << PT_SHIFT) / DT_PAGE; i++)
		err = memio_write(ds->pid, tid, ds->base + DT_PERTHREAD + (uint64_t)i * DT_PAGE,
				  zero, sizeof(zero));
	if (err == 0 && ds->mean)
		err = memio_write(ds->pid, tid, ds->base + DT_POOL, ds->pool, sizeof(ds->pool));
	for (uint64_t off = 0; err == 0 && data[D_SET_MASK / 8] && off < DT_SET_N * 8;
	     off += sizeof(zero))
		err = memio_write(ds->pid, tid, ds->base + DT_SET + off, zero, sizeof(zero));
	return err;
}

/* Is there a mapping [a, a + len)? */
static int mapped(const struct procfs_map *r, size_t n, uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].start == a && r[i].end == a + len && r[i].ino == 0)
			return 1;
	return 0;
}

/*
 * A stub mapping left by an earlier memtap, within reach of [lo, hi):
 * use it again (and its ring, if of the same size).  1 found, 0 not.
 */
static int reuse_old(struct detour_set *ds, pid_t tid, uint64_t lo, uint64_t hi)
{
	size_t len = (size_t)(dt_template_end - dt_template), n;
	uint64_t data[DT_PAGE / 8], rec_size = DT_REC_SIZE(ds->cfg.copy_len);
	uint8_t code[DT_TEMPLATE_MAX];
	struct procfs_map *r;
	int found = 0;

	if (procfs_read_maps(ds->pid, &r, &n) < 0)
		return 0;
	for (size_t i = 0; i + 1 < n && !found; i++) {
		uint64_t a = r[i].start;

		if (!(r[i].perms & PROT_EXEC) || r[i].ino || r[i].end - a != DT_CODE_SIZE ||
		    r[i + 1].start != r[i].end || r[i + 1].end - a != DT_MAP_SIZE ||
		    !arch_in_reach(a, lo) || !arch_in_reach(a + DT_MAP_SIZE, hi) ||
		    memio_read_all(ds->pid, tid, a, code, len) < 0 || memcmp(code, dt_template, len) ||
		    memio_read_all(ds->pid, tid, a + DT_DATA, data, sizeof(data)) < 0)
			continue;
		found = 1;
		ds->base = a;
		ds->reused = 1;
		ds->head0 = data[D_HEAD / 8];
		ds->dropped0 = data[D_DROPPED / 8];
		ds->ring_len = ring_bytes(ds->cfg.nrec, rec_size);
		if (data[D_NREC / 8] == ds->cfg.nrec && data[D_REC_SIZE / 8] == rec_size &&
		    data[D_RING / 8] == data[D_COMMIT / 8] + ds->cfg.nrec * 8 &&
		    data[D_TAILP / 8] == ring_tail(data[D_COMMIT / 8], ds->cfg.nrec, rec_size) &&
		    mapped(r, n, data[D_COMMIT / 8], ds->ring_len)) {
			ds->commit = data[D_COMMIT / 8];
			ds->ring = data[D_RING / 8];
			ds->tail = data[D_TAILP / 8];
		}
	}
	procfs_maps_free(r);
	if (found)
		debug_msg("process %d: memtap's stub mapping at %#" PRIx64 " used again%s", ds->pid,
			  ds->base, ds->commit ? ", with its ring" : "");
	return found;
}

int detour_install(struct detour_set *ds, pid_t tid, struct elfsym_proc *ep, uint64_t lo,
		   uint64_t hi, const char **why)
{
	struct remote_result res;
	struct remote_gap gap = { .on = 0 };
	uint64_t hole = 0, gap_at, tid_off, ring_len;
	int64_t got;
	int err, wiped;

	*why = NULL;
	if (ds->base)
		return 0;
	/* the slots start at DT_TEMPLATE_MAX: routines beyond it would be overwritten */
	if (dt_template_end - dt_template > DT_TEMPLATE_MAX) {
		*why = "memtap's stub routines outgrew their room (DT_TEMPLATE_MAX)";
		return -ENOSPC;
	}
	/* the layout protects its code, data and ring pages at DT_PAGE bounds */
	if (arch_page_size() != DT_PAGE) {
		*why = "their layout needs pages of 4 KiB, not this system's";
		return -ENOTSUP;
	}
	err = remote_find_syscall_insn_tid(ds->pid, tid, &ds->syscall_insn);
	if (err < 0)
		return err;
	tid_off = tcb_tid_offset(ds->pid, tid, ep);
	if (reuse_old(ds, tid, lo, hi) && !stubs_allowed(tid, ds->base, !tid_off, why)) {
		ds->base = 0;
		return -EPERM;
	}
	if (ds->base)
		tramp_install(ds, tid, ds->base);
	/*
	 * No memory of memtap's in the process yet: the first mapping's
	 * syscalls run from a trampoline in a gap of its code, put back then.
	 */
	if (!ds->base && !ds->tramp && elfsym_code_gap(ep, REMOTE_TRAMP_SIZE, &gap_at) == 0 &&
	    remote_tramp_gap(ds->pid, tid, gap_at, &gap) == 0)
		debug_msg("process %d: the first mappings through a trampoline at %#" PRIx64,
			  ds->pid, gap_at);
	err = 0;
	for (int tries = 0; tries < 4 && !ds->base && !err; tries++) {
		if ((got = dt_hole(ds, lo, hi, DT_MAP_SIZE)) < 0) {
			err = (int)got;
			break;
		}
		hole = (uint64_t)got;
		if (!stubs_allowed(tid, hole, !tid_off, why)) {
			err = -EPERM;
			break;
		}
		got = dt_map_at(ds, tid, hole, DT_CODE_SIZE, PROT_READ | PROT_EXEC);
		if (got == -EEXIST)
			continue;
		if (got < 0) {
			err = (int)got;
			break;
		}
		tramp_install(ds, tid, hole);
		got = dt_map_at(ds, tid, hole + DT_CODE_SIZE, DT_MAP_SIZE - DT_CODE_SIZE,
			     PROT_READ | PROT_WRITE);
		if (got < 0) {
			tramp_remove(ds);	/* never run from memory being unmapped */
			if (gap.on)
				remote_tramp_set(ds->pid, gap.at);
			remote_munmap(tid, ds->syscall_insn, hole, DT_CODE_SIZE, &res);
			if (got != -EEXIST)
				err = (int)got;
			continue;
		}
		ds->base = hole;
	}
	remote_tramp_gap_end(ds->pid, tid, &gap);
	if (err < 0)
		return err;
	if (!ds->base)
		return -ENOMEM;
	ds->rec_size = DT_REC_SIZE(ds->cfg.copy_len);
	/* the copy takes the record's whole lines: its room is the copy's length */
	if (ds->cfg.copy_len)
		ds->cfg.copy_len = ds->rec_size - R_STACK;
	ring_len = ring_bytes(ds->cfg.nrec, ds->rec_size);
	/* a fork child's stubs find NREC 0: they count and drop */
	wiped = inject(ds, tid, SYS_madvise, ds->base + DT_DATA, DT_MAP_SIZE - DT_DATA,
		       MADV_WIPEONFORK) == 0;
	if (!ds->commit) {
		got = detour_ring_map(ds->pid, tid, ds->syscall_insn, ds->base + DT_DATA + D_SCRATCH,
				      ring_len, wiped, &ds->local);
		if (got < 0 && got > -4096) {
			err = (int)got;
			goto fail;
		}
		ds->commit = (uint64_t)got;
		ds->ring = ds->commit + ds->cfg.nrec * 8;
		ds->tail = ring_tail(ds->commit, ds->cfg.nrec, ds->rec_size);
		ds->head0 = 0;	/* a new ring: its records' R_SEQ start at 0 */
		ds->made += ring_len;
		ds->made_data += ds->local ? 0 : ring_len;	/* VmData: private only */
	}
	if (!ds->reused) {
		ds->made += DT_MAP_SIZE;
		ds->made_data += DT_MAP_SIZE - DT_CODE_SIZE;
	}
	ds->ring_len = ring_len;
	err = ds->reused ? 0 : memio_write_code(ds->pid, tid, ds->base, dt_template,
						 (size_t)(dt_template_end - dt_template));
	if (err == 0 && ds->reused) {
		/* HEAD of the ring in use from now on */
		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_HEAD, &ds->head0,
				  sizeof(ds->head0));
	}
	if (err == 0)
		err = write_data(ds, tid, tid_off);
	if (err < 0) {
		if (!ds->reused || ds->head0 == 0)
			remote_munmap(tid, ds->syscall_insn, ds->commit, ring_len, &res);
		goto fail;
	}
	dt_far_scan(ds, tid);
	debug_msg("process %d: stub mapping at %#" PRIx64 ", %s ring at %#" PRIx64 " (%" PRIu64
		  " records of %" PRIu64 " bytes, %s), tid %s", ds->pid, ds->base,
		  ds->local ? "shared" : "private", ds->ring, ds->cfg.nrec, ds->rec_size,
		  feature_has(F_PREFETCHW) ? "prefetched" : "not prefetched",
		  tid_off ? "from the TCB" : "by gettid");
	return 0;
fail:
	detour_ring_unshare(ds->local, ring_len);
	ds->local = NULL;
	ds->made = ds->made_data = 0;
	if (!ds->reused) {
		tramp_remove(ds);
		remote_munmap(tid, ds->syscall_insn, ds->base, DT_MAP_SIZE, &res);
	}
	ds->base = 0;
	return err;
}

/* ---- probes ---- */

void *detour_at(const struct detour_set *ds, uint64_t addr)
{
	for (size_t i = 0; ds && i < ds->nslots; i++)
		if (ds->sites[i].live && ds->sites[i].func == addr)
			return ds->sites[i].cookie;
	return NULL;
}

/*
 * Forgotten slots too: a slot is never given to another function, and a
 * record may be read after its slot was forgotten (a dlclose while the
 * record waited in the ring behind one that a thread stopped for the
 * probes had reserved and not committed yet).
 */
void *detour_slot_cookie(const struct detour_set *ds, uint64_t desc)
{
	size_t i = desc & 0xffff;

	return i < ds->nslots ? ds->sites[i].cookie : NULL;
}

uint64_t detour_slot_func(const struct detour_set *ds, uint64_t desc)
{
	size_t i = desc & 0xffff;

	return i < ds->nslots ? ds->sites[i].func : 0;
}

uint64_t detour_stubs(const struct detour_set *ds, unsigned i, uint64_t *len)
{
	*len = DT_CODE_SIZE;
	return ds && i <= DT_FAR_MAX ? dt_page_base(ds, i) : 0;
}

uint64_t detour_made(const struct detour_set *ds, uint64_t *data)
{
	*data = ds ? ds->made_data : 0;
	return ds ? ds->made : 0;
}

size_t detour_count(const struct detour_set *ds)
{
	size_t k = 0;

	for (size_t i = 0; ds && i < ds->nslots; i++)
		k += ds->sites[i].live;
	return k;
}

/*
 * A reused mapping or far page: is the entry of the function at addr
 * (its bytes in buf) a patch into one of its slots, left by a memtap that
 * died?  Then the slot (its page in *pg), with the original bytes put
 * back into buf; else 0.
 */
static uint64_t adopted_slot(const struct detour_set *ds, pid_t tid, uint64_t addr,
			     uint8_t *buf, size_t n, unsigned *pg)
{
	uint8_t saved[DT_SLOT_SIZE - DT_SAVED];
	size_t off;
	uint64_t t = arch_patched_target(buf, n, addr, &off);

	if (!t || !dt_page_of(ds, t, pg) || !dt_page_reused(ds, *pg) ||
	    memio_read_all(ds->pid, tid, t + DT_SAVED, saved, sizeof(saved)) < 0 ||
	    saved[0] < ARCH_PATCH_LEN || saved[0] >= sizeof(saved) || off + saved[0] > n)
		return 0;
	memcpy(buf + off, saved + 1, saved[0]);
	return t;
}

/* Is pc inside what the plan displaces, after its first instruction? */
static int displaced(const struct plan *p, uint64_t pc)
{
	return pc > p->site && pc <= p->site + p->len;
}

/*
 * The threads stopped inside the displaced instructions go on from
 * their copy in the slot at slot: 0, -ENOTSUP (a pc inside an
 * instruction), or -errno.  With check, only see that they can.
 */
static int move_threads(const struct plan *p, uint64_t slot, const struct detour_thread *th,
			size_t n, int check)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t to;
		int err;

		if (!displaced(p, th[i].pc))
			continue;
		if (arch_detour_moved_pc(p, slot + DT_ORIG, th[i].pc, &to) < 0)
			return -ENOTSUP;
		if (check)
			continue;
		if ((err = arch_thread_set_pc(th[i].tid, to)) < 0 && err != -ESRCH)
			return err;
		debug_msg("thread %d: stopped at %#" PRIx64 ", inside a detour's entry: goes on "
			  "at %#" PRIx64 ", its copy", th[i].tid, th[i].pc, to);
	}
	return 0;
}

/* The first page whose next slot reaches what p displaces: 1 with *pg, else 0. */
static int page_for(struct detour_set *ds, const struct plan *p, unsigned *pg)
{
	for (unsigned k = 0; k <= DT_FAR_MAX; k++) {
		uint64_t b = dt_page_base(ds, k);
		size_t used = *dt_page_used(ds, k);

		if (b && used < dt_page_slots(k) && !dt_slots_capped(ds) &&
		    arch_detour_in_reach(p, b + DT_TEMPLATE_MAX + used * DT_SLOT_SIZE)) {
			*pg = k;
			return 1;
		}
	}
	return 0;
}

int detour_insert(struct detour_set *ds, pid_t tid, uint64_t addr, uint64_t size,
		  const struct detour_probe *dp, const struct detour_thread *threads, size_t n,
		  const char **why)
{
	uint8_t code[DT_SLOT_SIZE], patch[32], orig[32];
	size_t len = size ? size : 64, j = 0, g;
	uint64_t adopt, slot, base;
	unsigned pg = 0;
	int again = 0;
	struct dt_site *st;
	struct plan p;
	uint8_t *buf;
	uint32_t desc;
	ssize_t got;
	int err;

	*why = NULL;
	if (!ds->base)
		return -ENOTSUP;
	if (detour_at(ds, addr))
		return -EEXIST;
	if (len > MAX_FUNC_READ)
		len = MAX_FUNC_READ;
	if (len < 32)
		len = 32;	/* a short function's padding: detour_padded_size() */
	buf = xmalloc(len);
	got = memio_read(ds->pid, tid, addr, buf, len);
	/* an earlier memtap's patch: the original bytes first, its padding too */
	adopt = got >= ARCH_PATCH_LEN ? adopted_slot(ds, tid, addr, buf, (size_t)got, &pg) : 0;
	if (got >= 0 && size && (size_t)got >= size) {
		got = (ssize_t)arch_detour_padded_size(addr, buf, (size_t)got, size);
		len = (size_t)got;	/* all of it read */
	}
	if (got < ARCH_PATCH_LEN) {
		free(buf);
		if (got >= 0 && (size_t)got == len)
			*why = "the function is too short";
		return got < 0 ? (int)got : (size_t)got == len ? -ENOTSUP : -EIO;
	}
	err = arch_detour_plan(addr, buf, (size_t)got, &p, why);
	if (err == 0)
		memcpy(orig, buf + (p.site - addr), p.len);
	free(buf);
	if (err < 0)
		return err;
	for (size_t i = 0; adopt && i < n; i++)
		if (displaced(&p, threads[i].pc) && threads[i].pc < p.site + p.len) {
			*why = "a thread is stopped inside an earlier memtap's jmp";
			return -ENOTSUP;
		}
	/* no unused slot within reach: one of unmapped code, no thread inside it */
	if (!adopt && !page_for(ds, &p, &pg) &&
	    !(again = dt_slot_again(ds, &p, dp->cookie, threads, n, &pg, &j))) {
		for (unsigned k = 0; k <= DT_FAR_MAX; k++)
			if (dt_page_base(ds, k) &&
			    arch_detour_in_reach(&p, dt_page_base(ds, k) + DT_TEMPLATE_MAX))
				return -ENOSPC;	/* within reach of a page, but it is full */
		*why = "out of reach of the stub mapping";
		return -ENOTSUP;
	}
	base = dt_page_base(ds, pg);
	if (!again)
		j = adopt ? (size_t)(adopt - base - DT_TEMPLATE_MAX) / DT_SLOT_SIZE
			  : *dt_page_used(ds, pg);
	for (;;) {
		uint8_t old[DT_SLOT_SIZE], zero[DT_SLOT_SIZE] = { 0 };

		if (j >= dt_page_slots(pg))
			return -ENOSPC;
		slot = base + DT_TEMPLATE_MAX + j * DT_SLOT_SIZE;
		g = dt_page_first(pg) + j;
		if (!arch_detour_in_reach(&p, slot)) {
			*why = "out of reach of the stub mapping";
			return -ENOTSUP;
		}
		desc = (uint32_t)g | (dp->size_kind & 0xff) << 16 | (dp->flags & 0xff) << 24;
		arch_detour_glue(ds->base, pg ? base : 0, slot, dp->result, dp->sync, desc, code);
		if (arch_detour_relocate(&p, slot + DT_ORIG, code + DT_ORIG) < 0) {
			*why = "its first instructions cannot be relocated";
			return -ENOTSUP;
		}
		if (move_threads(&p, slot, threads, n, 1) < 0) {
			*why = "a thread is stopped inside one of its first instructions";
			return -ENOTSUP;
		}
		/* all of it set: the same probe writes the same bytes again */
		memset(code + DT_SAVED, 0, DT_SLOT_SIZE - DT_SAVED);
		code[DT_SAVED] = (uint8_t)p.len;
		memcpy(code + DT_SAVED + 1, orig, p.len);
		if (!dt_page_reused(ds, pg) || adopt || again)
			break;
		/*
		 * A slot of an earlier memtap: only unused, or the same code
		 * and saved bytes again (what follows them was left unset
		 * before 0.1.0: each memtap -p took fresh slots until none
		 * was left, and its probes became breakpoints)
		 */
		if ((err = memio_read_all(ds->pid, tid, slot, old, sizeof(old))) < 0)
			return err;
		if (!memcmp(old, zero, sizeof(old)) || !memcmp(old, code, DT_SAVED + 1 + p.len))
			break;
		memset(&ds->sites[g], 0, sizeof(ds->sites[0]));
		j++;	/* another probe's: skip it */
	}
	st = &ds->sites[g];
	memset(st, 0, sizeof(*st));
	st->func = addr;
	st->size = size;
	st->site = p.site;
	st->len = p.len;
	memcpy(st->orig, orig, p.len);
	arch_bp_fill(patch, p.len);
	arch_detour_patch(patch, p.site, slot);
	/* the slot first, the entry last: the only bytes of its code we change */
	if ((err = memio_write_code(ds->pid, tid, slot, code, sizeof(code))) < 0 ||
	    (!adopt && (err = move_threads(&p, slot, threads, n, 0)) < 0) ||
	    (err = memio_write_code(ds->pid, tid, p.site, patch, p.len)) < 0)
		return err;
	detour_frame_note(ds->pid, slot, code);
	st->cookie = dp->cookie;
	st->outer = dp->outer;
	st->live = 1;
	if (*dt_page_used(ds, pg) < j + 1)
		*dt_page_used(ds, pg) = j + 1;
	if (ds->nslots < g + 1)
		ds->nslots = g + 1;
	if (st->outer)
		dt_nest_publish(ds, tid);
	debug_msg("process %d: detour at %#" PRIx64 " (%u bytes, %u instructions%s) to %#" PRIx64
		  "%s%s", ds->pid, addr, p.len, p.ninsns,
		  p.site != addr ? ", after " ARCH_LANDING_PAD_NAME : "", slot,
		  pg ? " in a far page" : "", adopt ? ", adopted from an earlier memtap"
					  : again ? ", a slot of unmapped code" : "");
	return 0;
}

int detour_remove_all(struct detour_set *ds, pid_t tid)
{
	int first = 0;

	for (size_t i = 0; i < ds->nslots; i++) {
		struct dt_site *st = &ds->sites[i];
		int err;

		if (!st->live)
			continue;
		err = memio_write_code(ds->pid, tid, st->site, st->orig, st->len);
		if (err < 0 && !first)
			first = err;
		st->live = 0;
	}
	return first;
}

int detour_clean_fork_child(const struct detour_set *ds, pid_t child)
{
	int first = 0;

	for (size_t i = 0; i < ds->nslots; i++) {
		const struct dt_site *st = &ds->sites[i];
		int err;

		if (!st->live)
			continue;
		err = memio_write_code(child, child, st->site, st->orig, st->len);
		if (err < 0 && !first)
			first = err;
	}
	return first;
}

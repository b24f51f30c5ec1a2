/*
 * detour-data.c - the stub mapping's data pages as memtap keeps them
 * (see detour.h): the thread table, the per-probe counters, the pool of
 * sampling intervals, where the ring is, the nest table.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "util/clock.h"
#include "util/error.h"
#include "probe/detour.h"
#include "probe/detour-int.h"
#include "record/sample.h"
#include "util/xmalloc.h"

/* ---- the thread table ---- */

int detour_thread_add(struct detour_set *ds, pid_t tid, uint64_t key, uint64_t lo, uint64_t hi)
{
	unsigned h = (unsigned)((key * K_HASH_MUL) >> K_HASH_SHIFT), i = K_NENT;
	uint64_t at, zero = 0, bounds[4] = { lo, hi, 0, 0 };
	int err;

	if (!ds->base || !key)
		return -EINVAL;
	for (unsigned k = 0; k < K_PROBES; k++) {
		unsigned j = (h + k) & (K_NENT - 1);

		if (ds->keys[j] == key) {
			i = j;
			break;
		}
		if (!ds->keys[j] && i == K_NENT)
			i = j;
	}
	if (i == K_NENT)
		return -ENOSPC;	/* its copies go through process_vm_readv */
	if (ds->mean) {
		bounds[2] = sample_interval(&ds->rng, ds->mean);	/* K_LEFT */
		bounds[3] = ds->mean;					/* K_MEAN */
	}
	at = ds->base + DT_THREADS + ((uint64_t)i << K_SHIFT);
	detour_memo_reset(ds, i);
	/* the key last: a stub that finds it finds the bounds */
	if ((ds->keys[i] && (err = memio_write(ds->pid, tid, at + K_KEY, &zero, 8)) < 0) ||
	    (err = memio_write(ds->pid, tid, at + K_LO, bounds, sizeof(bounds))) < 0 ||
	    (err = memio_write(ds->pid, tid, at + K_KEY, &key, sizeof(key))) < 0)
		return err;
	ds->keys[i] = key;
	ds->key_tids[i] = tid;
	ds->key_lo[i] = lo;
	ds->key_hi[i] = hi;
	ds->blocks_used |= (uint64_t)1 << i;
	return 0;
}

void detour_thread_remove(struct detour_set *ds, pid_t tid)
{
	uint64_t zero = 0;

	for (unsigned i = 0; ds->base && i < K_NENT; i++)
		if (ds->keys[i] && ds->key_tids[i] == tid) {
			memio_write(ds->pid, 0, ds->base + DT_THREADS + ((uint64_t)i << K_SHIFT) +
				    K_KEY, &zero, sizeof(zero));
			ds->keys[i] = 0;
		}
}

void detour_get_ring(const struct detour_set *ds, struct detour_ring *r)
{
	r->pid = ds->pid;
	r->data = ds->base + DT_DATA;
	r->commit = ds->commit;
	r->ring = ds->ring;
	r->tail = ds->tail;
	r->nrec = ds->cfg.nrec;
	r->rec_size = ds->rec_size;
	r->head = ds->head0;
	r->dropped = ds->dropped0;
	r->local = ds->local;
	r->clock = ds->clock;
}

int detour_clock_sync(const struct detour_ring *r)
{
	static int said;
	const char *why;

	if (!r->clock)
		return 0;
	if (arch_stub_clock_sync(&why) == 0)
		return 1;
	if (!said++)
		verbose_msg("allocator calls carry the time memtap read their records from now "
			    "on, not the time of the call: %s", why);
	return 0;
}

uint64_t detour_record_time(const struct detour_ring *r, int synced, const uint8_t *rec,
			    uint64_t read_ns)
{
	uint64_t raw, ns;

	if (!synced || !r->clock)
		return read_ns;
	raw = dt_rec_word(rec, (dt_rec_word(rec, R_DESC) & DC_COMPACT) ? RC_TIME : R_TIME);
	/* the target's word: a time between the start and the read, or the read's */
	if (!raw || arch_stub_clock_ns(raw, &ns) < 0 || ns < start_ns)
		return read_ns;
	return ns - start_ns < read_ns ? ns - start_ns : read_ns;
}

int detour_read_counts(const struct detour_set *ds, const void *cookie,
		       struct detour_counts *c)
{
	return detour_read_counts_of(ds, cookie ? &cookie : NULL, cookie ? 1 : 0, c);
}

int detour_read_counts_of(const struct detour_set *ds, const void *const *cookies, size_t n,
			  struct detour_counts *out)
{
	enum { W = 1 << PT_SLOT_SHIFT >> 3 };	/* words a slot, a thread's */
	uint64_t cnt[DT_ALL_SLOTS << C_SHIFT >> 3], per[DT_ALL_SLOTS * W] = { 0 }, blk[DT_ALL_SLOTS * W];
	int err;

	memset(out, 0, (n ? n : 1) * sizeof(*out));
	if (!ds->base)
		return 0;
	err = memio_read_all(ds->pid, 0, ds->base + DT_COUNTERS, cnt, sizeof(cnt));
	/* the threads' own counts (stub-abi.h): the blocks of entries given */
	for (unsigned t = 0; err == 0 && ds->nslots && t < K_NENT; t++) {
		if (!(ds->blocks_used & (uint64_t)1 << t))
			continue;
		err = memio_read_all(ds->pid, 0, ds->base + DT_PERTHREAD + ((uint64_t)t << PT_SHIFT),
				     blk, ds->nslots << PT_SLOT_SHIFT);
		for (size_t i = 0; err == 0 && i < ds->nslots * W; i++)
			per[i] += blk[i];
	}
	if (err < 0)
		return err;
	for (size_t i = 0; i < ds->nslots; i++) {
		const uint64_t *s = cnt + (i << C_SHIFT >> 3);
		const uint64_t *p = per + i * W;
		uint64_t calls = s[C_CALLS / 8] + p[PT_CALLS / 8], bytes = s[C_BYTES / 8] + p[PT_BYTES / 8];
		uint64_t filtered = s[C_FILTERED / 8] + p[PT_FILTERED / 8], kept;
		struct detour_counts *c = out;
		size_t j = 0;

		while (j < n && cookies[j] != ds->sites[i].cookie)
			j++;
		if (n && j == n)
			continue;
		c += n ? j : 0;
		c->calls += calls;
		c->bytes += bytes;
		/* D_KEEP_ALL: not counted, every call is */
		kept = detour_keeps_all(ds) ? calls : s[C_KEPT / 8];
		c->kept += kept;
		c->fast += p[PT_FAST / 8];
		/* not counted in the stubs: one locked add less per call */
		if (ds->mean) {
			c->filtered += filtered;
			c->unsampled += calls - kept - filtered;
		} else {
			c->filtered += calls - kept;
		}
	}
	return 0;
}

int detour_read_thread_counts(const struct detour_set *ds, pid_t tid,
			      const void *const *cookies, size_t n, struct detour_counts *out)
{
	enum { W = 1 << PT_SLOT_SHIFT >> 3 };
	uint64_t blk[DT_ALL_SLOTS * W];
	unsigned t = 0;
	int err;

	memset(out, 0, n * sizeof(*out));
	while (ds->base && t < K_NENT && !(ds->keys[t] && ds->key_tids[t] == tid))
		t++;
	if (!ds->base || t == K_NENT)
		return -ENOENT;
	if (!ds->nslots)
		return 0;
	err = memio_read_all(ds->pid, 0, ds->base + DT_PERTHREAD + ((uint64_t)t << PT_SHIFT), blk,
			     ds->nslots << PT_SLOT_SHIFT);
	if (err < 0)
		return err;
	for (size_t i = 0; i < ds->nslots; i++)
		for (size_t j = 0; j < n; j++)
			if (cookies[j] == ds->sites[i].cookie) {
				out[j].calls += blk[i * W + PT_CALLS / 8];
				out[j].bytes += blk[i * W + PT_BYTES / 8];
				break;
			}
	return 0;
}

/*
 * The pool entries the stubs took since the last refill get fresh
 * intervals of the mean in force: from the oldest taken on, at most the
 * whole pool (when the stubs went round it since, they reused entries:
 * each is still an interval of its mean).
 */
int detour_sample_refill(struct detour_set *ds, uint64_t mean)
{
	uint64_t idx, n, first;
	int err;

	if (!ds->base || !ds->mean)
		return 0;
	if (mean && mean != ds->mean) {
		ds->mean = mean;
		err = memio_write(ds->pid, 0, ds->base + DT_DATA + D_SAMPLE_MEAN, &ds->mean,
				  sizeof(ds->mean));
		if (err < 0)
			return err;
	}
	err = memio_read_all(ds->pid, 0, ds->base + DT_DATA + D_POOL_IDX, &idx, sizeof(idx));
	if (err < 0)
		return err;
	n = idx - ds->pool_idx;
	if (n > DT_POOL_N)
		n = DT_POOL_N;
	if (!n)
		return 0;
	for (uint64_t k = idx - n; k != idx; k++) {
		uint64_t *e = ds->pool + 2 * (k & (DT_POOL_N - 1));

		e[0] = sample_interval(&ds->rng, ds->mean);
		e[1] = ds->mean;
	}
	ds->pool_idx = idx;
	/* the entries taken: one run, or two where it wraps */
	first = (idx - n) & (DT_POOL_N - 1);
	if (first + n > DT_POOL_N) {
		err = memio_write(ds->pid, 0, ds->base + DT_POOL, ds->pool,
				  (first + n - DT_POOL_N) << P_SHIFT);
		if (err < 0)
			return err;
		n = DT_POOL_N - first;
	}
	return memio_write(ds->pid, 0, ds->base + DT_POOL + (first << P_SHIFT),
			   ds->pool + 2 * first, n << P_SHIFT);
}

int detour_leak_seed(struct detour_set *ds, pid_t tid, const uint64_t *ptrs, size_t n)
{
	uint64_t *set, mask = ds->cfg.leak_set - 1, full = 0;
	int err;

	if (!ds->base || !ds->cfg.leak_set || !n)
		return 0;
	set = xcalloc(ds->cfg.leak_set, sizeof(*set));
	for (size_t i = 0; i < n; i++) {
		/* the stubs' set_put: from the hash on, S_PROBES entries */
		uint64_t h = (ptrs[i] * K_HASH_MUL) >> 32;
		unsigned k;

		for (k = 0; k < S_PROBES && set[(h + k) & mask]; k++)
			;
		if (k < S_PROBES)
			set[(h + k) & mask] = ptrs[i];
		else
			full++;
	}
	err = memio_write(ds->pid, tid, ds->base + DT_SET, set, ds->cfg.leak_set * sizeof(*set));
	if (err == 0 && full)
		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_SET_FULL, &full, sizeof(full));
	free(set);
	return err;
}

uint64_t detour_sample_mean(const struct detour_set *ds)
{
	return ds ? ds->mean : 0;
}

int detour_read_data(const struct detour_set *ds, unsigned off, uint64_t *v)
{
	*v = 0;
	if (!ds->base || off >= DT_PAGE)
		return 0;
	return memio_read_all(ds->pid, 0, ds->base + DT_DATA + off, v, sizeof(*v));
}

int detour_keeps_all(const struct detour_set *ds)
{
	return !ds->mean && !ds->cfg.min_size && !ds->cfg.max_size && !ds->cfg.leak_set;
}

/* ---- the nest table ---- */

void detour_nested_refresh(struct detour_set *ds)
{
	size_t n = 0;

	for (unsigned pg = 0; pg <= DT_FAR_MAX; pg++) {
		uint64_t b = dt_page_base(ds, pg);

		if (b) {
			ds->nest[n].lo = b;
			ds->nest[n++].hi = b + DT_CODE_SIZE;
		}
	}
	for (size_t i = 0; i < ds->nslots; i++)
		if (ds->sites[i].live && ds->sites[i].outer && ds->sites[i].size > 1) {
			ds->nest[n].lo = ds->sites[i].func + 1;
			ds->nest[n++].hi = ds->sites[i].func + ds->sites[i].size;
		}
	ds->nnest = n;
}

/*
 * The nest table into the data page (stub-abi.h), for the stubs: the
 * entries first, then their count, then the bounds.  More entries than
 * it holds: none (nested calls are then counted, and their records
 * left out by memtap only).
 */
int dt_nest_publish(struct detour_set *ds, pid_t tid)
{
	uint64_t head[4] = { UINT64_MAX, 0, 0, 0 };	/* D_NEST_LO .. D_COMPACT */
	int err = 0;

	detour_nested_refresh(ds);
	ds->nest_counted = ds->nnest <= D_NEST_MAX;
	if (ds->nest_counted) {
		for (size_t i = 0; i < ds->nnest; i++) {
			head[0] = ds->nest[i].lo < head[0] ? ds->nest[i].lo : head[0];
			head[1] = ds->nest[i].hi > head[1] ? ds->nest[i].hi : head[1];
		}
		head[2] = ds->nnest;
		if (ds->nnest)
			err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_NEST, ds->nest,
					  ds->nnest * sizeof(ds->nest[0]));
	}
	if (!head[2])
		head[0] = 0;
	head[3] = err == 0 && ds->nest_counted && ds->cfg.compact && ds->local;
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_NEST_LO, head, sizeof(head));
	if (err < 0)
		ds->nest_counted = 0;
	ds->compact = err == 0 && head[3];
	return err;
}

int detour_compact(const struct detour_set *ds)
{
	return ds && ds->compact;
}

int detour_nested_counted(const struct detour_set *ds)
{
	return ds && ds->nest_counted;
}

int detour_nested(const struct detour_set *ds, uint64_t addr)
{
	for (size_t i = 0; i < ds->nnest; i++)
		if (addr >= ds->nest[i].lo && addr < ds->nest[i].hi)
			return 1;
	return 0;
}

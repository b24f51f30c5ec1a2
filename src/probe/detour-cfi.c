/*
 * detour-cfi.c - the CFI tables of the stub walk (stub-abi.h, R_WALK):
 * each mapped module's CFI compiled into simple rows (stack/unwind/cfitab.h),
 * load bias added, in a mapping shared with the process (a memfd, as
 * the ring: detour-ring.h), with a directory of the modules in front.
 *
 * Tables and directories are appended, never written again; W_DIR, one
 * word, then says which directory is in force: a memtap killed while it
 * writes leaves the last one whole, the stubs never see a half-written
 * table.  A module's table is compiled once per run (by module id) and
 * copied into each process that maps it.
 *
 * What stays once memtap has gone: the mapping (/memfd:memtap-cfi in
 * the process's maps), unused when the detours are gone, as the ring.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "probe/detour-int.h"
#include "probe/detour-ring.h"
#include "stack/unwind/cfitab.h"
#include "stack/modules.h"
#include "util/error.h"
#include "util/xmalloc.h"

#define WTAB_SIZE (32u << 20)
/* the chain table, at its end; the tables and directories below */
#define CHAIN_N (1u << 16)
#define CHAIN_OFF (WTAB_SIZE - CHAIN_N * CH_SIZE)
/* the walk memos, below it: a block per thread table entry */
#define MEMO_OFF (CHAIN_OFF - (K_NENT << MEMO_SHIFT))

_Static_assert(CT_NONE == WK_NONE && CT_SP == WK_SP && CT_FP == WK_FP && CT_END == WK_END,
	       "the stubs' row kinds are cfitab's");
_Static_assert(sizeof(struct cfitab_row) == WR_SIZE, "a row as the stubs read it");
_Static_assert(CFITAB_PAGE_SHIFT == WT_PAGE_SHIFT, "the page index's pages");

/* compiled tables by module id: 0 not tried, 1 compiled, -1 none */
static struct ctab {
	int state;
	struct cfitab t;
} *ctabs;
static size_t nctabs;

static const struct cfitab *module_table(uint32_t id)
{
	const struct module *m;
	int fd;

	if (id >= nctabs) {
		size_t n = id + 64;

		ctabs = xrealloc(ctabs, n * sizeof(*ctabs));
		memset(ctabs + nctabs, 0, (n - nctabs) * sizeof(*ctabs));
		nctabs = n;
	}
	if (ctabs[id].state)
		return ctabs[id].state > 0 ? &ctabs[id].t : NULL;
	ctabs[id].state = -1;
	m = module_get(id);
	if (!m || (fd = module_open(m)) < 0)
		return NULL;
	if (cfitab_compile(fd, &ctabs[id].t) == 0) {
		ctabs[id].state = 1;
		debug_msg("%s: CFI table of %zu rows (%zu simple), %zu pages", m->path,
			  ctabs[id].t.nrows, ctabs[id].t.simple, ctabs[id].t.npages);
	} else {
		debug_msg("%s: no CFI table: %s", m->path, strerror(errno));
	}
	close(fd);
	return ctabs[id].state > 0 ? &ctabs[id].t : NULL;
}

static uint64_t table_bytes(const struct cfitab *t)
{
	return (WT_INDEX + (t->npages + 1) * 4 + t->nrows * WR_SIZE + 7) & ~(uint64_t)7;
}

/* The offset of module id's table at bias in the mapping, written now if new; 0: none. */
static uint64_t table_at(struct detour_set *ds, uint32_t id, uint64_t bias)
{
	const struct cfitab *t;
	uint8_t *p;
	uint32_t w;
	uint64_t need;

	for (size_t i = 0; i < ds->nwmods; i++)
		if (ds->wmods[i].module == id && ds->wmods[i].bias == bias)
			return ds->wmods[i].off;
	t = module_table(id);
	if (!t || !t->nrows || t->npages >= UINT32_MAX || t->nrows >= UINT32_MAX)
		return 0;
	need = table_bytes(t);
	if (ds->wtab_used + need > MEMO_OFF - 64 * 1024)	/* room kept for directories */
		return 0;
	p = (uint8_t *)ds->wtab + ds->wtab_used;
	w = (uint32_t)t->nrows;
	memcpy(p + WT_NROWS, &w, 4);
	w = (uint32_t)t->npages;
	memcpy(p + WT_NPAGES, &w, 4);
	memcpy(p + WT_INDEX, t->index, (t->npages + 1) * 4);
	memcpy(p + WT_INDEX + (t->npages + 1) * 4, t->rows, t->nrows * WR_SIZE);
	ds->wmods = xgrowarray(ds->wmods, &ds->wmods_cap, ds->nwmods + 1, sizeof(*ds->wmods));
	ds->wmods[ds->nwmods].module = id;
	ds->wmods[ds->nwmods].bias = bias;
	ds->wmods[ds->nwmods].off = ds->wtab_used;
	ds->nwmods++;
	ds->wtab_used += need;
	return ds->wtab_used - need;
}

void detour_walk_update(struct detour_set *ds)
{
	struct proc_modules *pm = ds->wpm;
	uint64_t (*dir)[3], last_hi = 0, need, at;
	size_t n = 0;

	if (!ds->wtab || !pm || modules_refresh(pm, 1) < 0)
		return;
	dir = xcalloc(pm->nranges + 1, sizeof(*dir));
	for (size_t i = 0; i < pm->nranges; i++) {
		const struct module_range *r = &pm->ranges[i];
		const struct cfitab *t = module_table(r->module);
		uint64_t off, lo, hi;

		if (!t || (off = table_at(ds, r->module, r->bias)) == 0)
			continue;
		lo = t->lo + r->bias;
		hi = t->hi + r->bias;
		if (lo < last_hi || hi <= lo || (n && dir[n - 1][0] == lo))
			continue;	/* another range of the same module, or overlapping */
		dir[n][0] = lo;
		dir[n][1] = hi;
		dir[n][2] = off;
		n++;
		last_hi = hi;
	}
	need = n * WD_SIZE;
	if (ds->wtab_used + need > MEMO_OFF) {
		free(dir);
		return;		/* the one in force stays */
	}
	at = ds->wtab_used;
	memcpy((uint8_t *)ds->wtab + at, dir, need);
	ds->wtab_used += (need + 7) & ~(uint64_t)7;
	/* the directory whole before the word that points at it */
	__atomic_store_n((uint64_t *)((uint8_t *)ds->wtab + W_DIR), at | (uint64_t)n << 32,
			 __ATOMIC_RELEASE);
	debug_msg("process %d: CFI tables of %zu modules, %" PRIu64 " bytes", ds->pid, n,
		  ds->wtab_used);
	free(dir);
}

int detour_walk_start(struct detour_set *ds, pid_t tid, unsigned max_pcs)
{
	uint64_t words[2], chains[2], memo;
	int64_t got;
	void *local = NULL;
	int err;

	if (!arch_stub_walks())
		return -ENOTSUP;		/* the CPU's stubs copy the stack */
	if (!ds->base || !ds->local || !max_pcs || ds->wtab)
		return ds->wtab ? 0 : -EINVAL;	/* a private ring: no shared memory */
	got = detour_memfd_share(ds->pid, tid, ds->syscall_insn, ds->base + DT_DATA + D_SCRATCH,
				 WTAB_SIZE, "memtap-cfi", &local);
	if (got < 0 && got > -4096)
		return (int)got;
	ds->wtab = local;
	ds->wtab_addr = (uint64_t)got;
	ds->wtab_used = W_START;
	ds->made += WTAB_SIZE;
	*(uint64_t *)((uint8_t *)local + W_MAGIC) = DT_WTAB_MAGIC;
	ds->wpm = proc_modules_new(ds->pid);
	detour_walk_update(ds);
	words[0] = ds->wtab_addr;
	words[1] = max_pcs;
	chains[0] = ds->wtab_addr + CHAIN_OFF;
	chains[1] = CHAIN_N - 1;
	memo = ds->wtab_addr + MEMO_OFF;
	/* the tables and their size, then the word that turns the walk on */
	err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_CHAINS, chains, sizeof(chains));
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_MEMO, &memo, sizeof(memo));
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_WTAB, &words[0], 8);
	if (err == 0) {
		uint64_t size = WTAB_SIZE;

		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_WTAB_SIZE, &size, 8);
	}
	if (err == 0)
		err = memio_write(ds->pid, tid, ds->base + DT_DATA + D_WALK_MAX, &words[1], 8);
	return err;
}

void detour_walk_free(struct detour_set *ds)
{
	if (ds->wtab)
		munmap(ds->wtab, WTAB_SIZE);
	if (ds->wpm)
		proc_modules_free(ds->wpm);
	free(ds->wmods);
	free(ds->chains);
	free(ds->chain_pcs);
	ds->chains = NULL;
	ds->chain_pcs = NULL;
	ds->nchains = ds->chains_cap = ds->chain_pcs_n = ds->chain_pcs_cap = 0;
	ds->wtab = NULL;
	ds->wpm = NULL;
	ds->wmods = NULL;
	ds->nwmods = ds->wmods_cap = 0;
}

/*
 * A 64-bit key stands for the chain: two chains of the same key (odds
 * of about n^2 / 2^65 for n chains) would share the first one's id.
 */
void detour_chain_learn(struct detour_set *ds, const uint64_t *pcs, uint64_t n)
{
	uint64_t key, *tab;
	struct dt_chain *c;

	if (!ds->wtab || n == 0 || n > UINT32_MAX || ds->nchains >= UINT32_MAX)
		return;
	tab = (uint64_t *)(void *)((uint8_t *)ds->wtab + CHAIN_OFF);
	key = dt_chain_hash(pcs, n);
	for (uint64_t k = 0; k < CH_PROBES; k++) {
		uint64_t *e = tab + ((key + k) & (CHAIN_N - 1)) * (CH_SIZE / 8);

		if (e[CH_KEY / 8] == key)
			return;		/* known: memtap is its only writer */
		if (e[CH_KEY / 8])
			continue;
		ds->chains = xgrowarray(ds->chains, &ds->chains_cap, ds->nchains + 1,
					sizeof(*ds->chains));
		ds->chain_pcs = xgrowarray(ds->chain_pcs, &ds->chain_pcs_cap, ds->chain_pcs_n + n,
					   sizeof(*ds->chain_pcs));
		c = &ds->chains[ds->nchains++];
		c->off = ds->chain_pcs_n;
		c->n = (unsigned)n;
		memcpy(ds->chain_pcs + c->off, pcs, n * sizeof(*pcs));
		ds->chain_pcs_n += n;
		/* the id, then the key the stubs look for */
		e[CH_ID / 8] = ds->nchains;
		__atomic_store_n(&e[CH_KEY / 8], key, __ATOMIC_RELEASE);
		return;
	}
	/* no room: its calls stay full records */
}

const uint64_t *detour_chain(const struct detour_set *ds, uint64_t id, unsigned *n)
{
	if (!id || id > ds->nchains)
		return NULL;
	*n = ds->chains[id - 1].n;
	return ds->chain_pcs + ds->chains[id - 1].off;
}

void detour_memo_reset(struct detour_set *ds, unsigned entry)
{
	if (ds->wtab && entry < K_NENT)
		__atomic_store_n((uint64_t *)(void *)((uint8_t *)ds->wtab + MEMO_OFF +
						      ((uint64_t)entry << MEMO_SHIFT) + MB_BUSY),
				 0, __ATOMIC_RELAXED);
}

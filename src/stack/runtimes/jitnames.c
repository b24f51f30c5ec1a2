/*
 * jitnames.c - names of run-time code from perf maps and jitdumps
 * (jitnames.h): the table of ranges, the perf map reader, and the name
 * source of each process.  The jitdump reader is jitdump.c.
 *
 * Both files are hostile input (the target's user writes them, and any
 * local user can plant /tmp/perf-PID.map): they are opened by
 * tfile_open() only (linux/tfile.h: no FIFO, device or symbolic link,
 * no file of another user, none over the cap), and one refused stays
 * refused for its process: it is looked for again only at the retry
 * interval, never at a lookup's forced look, and tfile.c warns of it
 * once.  They are read on the tracer thread, while target threads may
 * wait for it: an event's refresh hands the readers JIT_READ_STEP bytes
 * at most, the rest at later refreshes; the exit and a report read up
 * to the cap (JIT_MAX_BYTES).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/procfs.h"
#include "linux/tfile.h"
#include "stack/runtimes/jitnames.h"
#include "stack/runtimes/jitnames-int.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/xmalloc.h"

#define MAX_SOURCES 65536
#define RETRY_NS 200000000ull	/* a file not found is looked for again after */

/* ---- the table ---- */

void jit_warn(struct jit_table *t, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (t->warned)
		return;
	t->warned = 1;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	warn_msg("%s: %s", t->what ? t->what : "?", buf);
}

static size_t max_entries = JIT_MAX_ENTRIES;

void jit_names_set_max_entries(size_t n)
{
	max_entries = n >= 2 && n < JIT_MAX_ENTRIES ? n : JIT_MAX_ENTRIES;
}

static void by_start_put(struct jit_table *t, uint32_t i);

/*
 * Full: keep the newer half of the ranges and their names in a new pool,
 * and *name (if any: a range's not added yet, its new offset given
 * back).  Not a table with DEBUG_INFO lines (their files are in the
 * pool too): -1.  Returns 0 when trimmed.
 */
static int table_trim(struct jit_table *t, uint32_t *name)
{
	size_t keep = t->n / 2, from = t->n - keep, len = 0;
	char *pool;

	if (t->nlines || !keep)
		return -1;
	for (size_t i = from; i < t->n; i++)
		len += strlen(t->pool + t->e[i].name) + 1;
	len += name ? strlen(t->pool + *name) + 1 : 0;
	pool = xmalloc(len ? len : 1);
	len = 0;
	if (name) {
		len = strlen(t->pool + *name) + 1;
		memcpy(pool, t->pool + *name, len);
		*name = 0;
	}
	for (size_t i = from; i < t->n; i++) {
		size_t l = strlen(t->pool + t->e[i].name) + 1;

		memcpy(pool + len, t->pool + t->e[i].name, l);
		t->e[i - from] = t->e[i];
		t->e[i - from].name = (uint32_t)len;
		len += l;
	}
	free(t->pool);
	t->pool = pool;
	t->pool_len = t->pool_cap = len;
	t->n = keep;
	free(t->by_start);
	t->by_start = NULL;
	t->by_start_size = t->by_start_count = 0;
	for (size_t i = 0; i < t->n; i++)
		by_start_put(t, (uint32_t)i);
	t->dirty = 1;
	t->trimmed += from;
	return 0;
}

uint32_t jit_pool_add(struct jit_table *t, const char *s, size_t len)
{
	uint32_t off;

	if (len > JIT_NAME_MAX)
		len = JIT_NAME_MAX;
	if (t->pool_len + len + 1 > JIT_POOL_MAX && table_trim(t, NULL) < 0) {
		jit_warn(t, "more than %u MiB of names: the rest is not read", JIT_POOL_MAX >> 20);
		return JIT_NONE;
	}
	if (t->pool_len + len + 1 > t->pool_cap) {
		t->pool_cap = t->pool_cap ? t->pool_cap : 4096;
		while (t->pool_cap < t->pool_len + len + 1)
			t->pool_cap *= 2;
		t->pool = xrealloc(t->pool, t->pool_cap);
	}
	off = (uint32_t)t->pool_len;
	memcpy(t->pool + off, s, len);
	t->pool[off + len] = '\0';	/* the writers quote the rest */
	t->pool_len += len + 1;
	return off;
}

static size_t start_slot(uint64_t start, size_t size)
{
	return (size_t)((start * 0x9e3779b97f4a7c15ULL) >> 24) & (size - 1);
}

static void by_start_put(struct jit_table *t, uint32_t i)
{
	size_t j, mask;

	if ((t->by_start_count + 1) * 2 > t->by_start_size) {
		uint32_t *old = t->by_start;
		size_t old_size = t->by_start_size;

		t->by_start_size = old_size ? 2 * old_size : 1024;
		t->by_start = xmalloc(t->by_start_size * sizeof(*t->by_start));
		memset(t->by_start, 0xff, t->by_start_size * sizeof(*t->by_start));
		t->by_start_count = 0;
		for (size_t k = 0; k < old_size; k++)
			if (old[k] != JIT_NONE)
				by_start_put(t, old[k]);
		free(old);
	}
	mask = t->by_start_size - 1;
	for (j = start_slot(t->e[i].start, t->by_start_size); t->by_start[j] != JIT_NONE;
	     j = (j + 1) & mask)
		if (t->e[t->by_start[j]].start == t->e[i].start) {
			t->by_start[j] = i;
			return;
		}
	t->by_start[j] = i;
	t->by_start_count++;
}

const struct jit_entry *jit_table_at(const struct jit_table *t, uint64_t start)
{
	size_t mask = t->by_start_size - 1;

	if (!t->by_start_size)
		return NULL;
	for (size_t j = start_slot(start, t->by_start_size); t->by_start[j] != JIT_NONE;
	     j = (j + 1) & mask)
		if (t->e[t->by_start[j]].start == start)
			return &t->e[t->by_start[j]];
	return NULL;
}

int jit_table_add(struct jit_table *t, uint64_t start, uint64_t size, uint32_t name,
		  uint32_t dbg, uint32_t unwind)
{
	struct jit_entry *e;

	if (!size || start + size < start || name == JIT_NONE)
		return -1;
	if (t->n >= max_entries && table_trim(t, &name) < 0) {
		jit_warn(t, "more than %zu ranges: the rest is not read", max_entries);
		return -1;
	}
	if (jit_table_at(t, start))
		t->rewrites++;	/* the runtime wrote other code there */
	t->e = xgrowarray(t->e, &t->cap, t->n + 1, sizeof(*t->e));
	e = &t->e[t->n++];
	e->start = start;
	e->end = start + size;
	e->name = name;
	e->dbg = dbg;
	e->unwind = unwind;
	e->pad = 0;
	t->dirty = 1;
	by_start_put(t, (uint32_t)(t->n - 1));
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const struct jit_entry *sort_base;

static int cmp_start(const void *a, const void *b)
{
	const struct jit_entry *x = &sort_base[*(const uint32_t *)a];
	const struct jit_entry *y = &sort_base[*(const uint32_t *)b];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Max-heap of entry numbers: the later entry on top. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/*
 * The index, by a sweep over the ranges' bounds: each piece between two
 * bounds belongs to the last entry that covers it.
 */
static void build_index(struct jit_table *t)
{
	size_t n = t->n, np = 0, nh = 0, next = 0, cap = 0;
	uint64_t *pts = xmalloc((2 * n + 1) * sizeof(*pts));
	uint32_t *order = xmalloc((n + 1) * sizeof(*order));
	uint32_t *heap = xmalloc((n + 1) * sizeof(*heap));

	free(t->seg);
	t->seg = NULL;
	t->nseg = 0;
	for (size_t i = 0; i < n; i++) {
		pts[np++] = t->e[i].start;
		pts[np++] = t->e[i].end;
		order[i] = (uint32_t)i;
	}
	qsort(pts, np, sizeof(*pts), cmp_u64);
	sort_base = t->e;
	qsort(order, n, sizeof(*order), cmp_start);
	for (size_t i = 0; i + 1 < np; i++) {
		uint64_t p = pts[i], q = pts[i + 1];

		if (p == q)
			continue;
		while (next < n && t->e[order[next]].start <= p)
			heap_push(heap, &nh, order[next++]);
		while (nh && t->e[heap[0]].end <= p)
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		if (t->nseg && t->seg[t->nseg - 1].entry == heap[0] &&
		    t->seg[t->nseg - 1].end == p) {
			t->seg[t->nseg - 1].end = q;
			continue;
		}
		t->seg = xgrowarray(t->seg, &cap, t->nseg + 1, sizeof(*t->seg));
		t->seg[t->nseg].start = p;
		t->seg[t->nseg].end = q;
		t->seg[t->nseg].entry = heap[0];
		t->nseg++;
	}
	free(pts);
	free(order);
	free(heap);
	t->dirty = 0;
}

const struct jit_entry *jit_table_find(struct jit_table *t, uint64_t pc)
{
	size_t lo = 0, hi;

	if (t->dirty)
		build_index(t);
	hi = t->nseg;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->seg[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nseg && t->seg[lo].start <= pc)
		return &t->e[t->seg[lo].entry];
	return NULL;
}

void jit_table_free(struct jit_table *t)
{
	free(t->e);
	free(t->pool);
	free(t->seg);
	free(t->by_start);
	free(t->dbg);
	free(t->lines);
	free(t->uw);
	free(t->uw_data);
	memset(t, 0, sizeof(*t));
}

ssize_t jit_pread_fd(void *arg, void *buf, size_t n, uint64_t off)
{
	ssize_t r;

	do
		r = pread(*(int *)arg, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	return r;
}

/* ---- each process's source ---- */

struct jit_file {
	struct jit_table t;
	char *path;		/* for messages */
	int fd;
	int refused;		/* tfile_open() refused it: looked for again
				   only at next_try, never forced */
	uint64_t size;		/* what the last fstat() saw */
	uint64_t done;		/* bytes handed to the reader so far */
	uint64_t next_try;	/* clock: look for the file again from */
};

struct jit_source {
	pid_t pid;		/* 0: forgotten */
	int exited;
	struct jit_file map, dump;
	struct perfmap_state ms;
	struct jitdump_state ds;
};

static struct jit_source **sources;
static size_t nsources, sources_cap, last_hit;
static uint64_t files_found;

static struct jit_source *source_of(uint32_t module)
{
	if (!jit_is_module(module) || module - JIT_MODULE_BASE >= nsources ||
	    !sources[module - JIT_MODULE_BASE]->pid)
		return NULL;
	return sources[module - JIT_MODULE_BASE];
}

uint32_t jit_names_module(pid_t pid)
{
	struct jit_source *s;

	if (last_hit < nsources && sources[last_hit]->pid == pid)
		return JIT_MODULE_BASE + (uint32_t)last_hit;
	for (size_t i = nsources; i-- > 0;)
		if (sources[i]->pid == pid) {
			last_hit = i;
			return JIT_MODULE_BASE + (uint32_t)i;
		}
	if (nsources >= MAX_SOURCES)
		return UINT32_MAX;
	s = xcalloc(1, sizeof(*s));
	s->pid = pid;
	s->map.fd = s->dump.fd = -1;
	sources = xgrowarray(sources, &sources_cap, nsources + 1, sizeof(*sources));
	sources[nsources] = s;
	last_hit = nsources;
	return JIT_MODULE_BASE + (uint32_t)nsources++;
}

/* The pid the process knows itself by (its own pid namespace's). */
static long own_pid(pid_t pid)
{
	long ids[4] = { 0, 0, 0, 0 }, own = pid;

	if (procfs_status_ids(pid, "NSpid", ids) == 0)
		for (int i = 0; i < 4 && ids[i] > 0; i++)
			own = ids[i];
	return own;
}

static void file_opened(struct jit_file *f, int fd, char *path)
{
	f->fd = fd;
	f->refused = 0;
	f->path = path;
	f->t.what = path;
	files_found++;
}

/* tfile_open() of f's file; a refusal (warned of once by tfile.c) is kept. */
static int open_checked(struct jit_file *f, pid_t pid, const char *path, const char *shown,
			enum tfile_kind kind, unsigned flags)
{
	struct tfile_req r = {
		.pid = pid, .path = path, .shown = shown, .kind = kind, .flags = flags | TF_OWNED,
	};
	int fd = tfile_open(&r);

	if (fd < 0 && *tfile_last_why())
		f->refused = 1;
	return fd;
}

/* The perf map, /tmp/perf-PID.map under the process's root, if its own. */
static void open_map(struct jit_source *s)
{
	char path[48];
	long own = own_pid(s->pid);
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", own);
	fd = open_checked(&s->map, s->pid, path, path, TF_PERFMAP, TF_IN_ROOT);
	if (fd >= 0)
		file_opened(&s->map, fd, xstrdup(path));
}

/* The jitdump the runtime mapped, by its mapping (else by its path in
 * the process's root), if its own. */
static void open_dump(struct jit_source *s)
{
	struct procfs_map *maps;
	size_t n;
	char want[48], path[96];
	long own = own_pid(s->pid);

	if (procfs_read_maps(s->pid, &maps, &n) < 0)
		return;
	snprintf(want, sizeof(want), "jit-%ld.dump", own);
	for (size_t i = 0; i < n; i++) {
		const char *base = maps[i].path ? strrchr(maps[i].path, '/') : NULL;
		int fd;

		if (!base || strcmp(base + 1, want) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, s->pid,
			 maps[i].start, maps[i].end);
		fd = open_checked(&s->dump, s->pid, path, maps[i].path, TF_JITDUMP, TF_MAGIC);
		if (fd < 0 && !s->dump.refused)
			fd = open_checked(&s->dump, s->pid, maps[i].path, maps[i].path, TF_JITDUMP,
					  TF_IN_ROOT);
		if (fd >= 0)
			file_opened(&s->dump, fd, xstrdup(maps[i].path));
		if (fd >= 0 || s->dump.refused)
			break;
	}
	procfs_maps_free(maps);
}

/*
 * Hand f's reader what f gained, JIT_READ_STEP bytes at most unless
 * whole (then up to JIT_MAX_BYTES); final: the file is complete.
 */
static void read_more(struct jit_source *s, struct jit_file *f, int whole, int final)
{
	struct stat st;
	uint64_t limit;

	if (f->fd < 0)
		return;
	if (fstat(f->fd, &st) == 0)
		f->size = (uint64_t)st.st_size;
	if (f->size > JIT_MAX_BYTES)
		jit_warn(&f->t, "%" PRIu64 " bytes: only the first %llu MiB are read", f->size,
			 JIT_MAX_BYTES >> 20);
	limit = f->size < JIT_MAX_BYTES ? f->size : JIT_MAX_BYTES;
	if (limit < f->done)	/* truncated: what was read stays */
		limit = f->done;
	if (limit == f->done && !final)
		return;
	if (!whole && limit - f->done > JIT_READ_STEP)
		limit = f->done + JIT_READ_STEP;
	final = final && limit == f->size;
	f->done = limit;
	if (f == &s->map)
		perfmap_read(&f->t, &s->ms, jit_pread_fd, &f->fd, limit, final);
	else
		jitdump_read(&f->t, &s->ds, jit_pread_fd, &f->fd, limit, final);
}

/* Look for a missing file of s now (force) or at its next try. */
static void look_for(struct jit_source *s, struct jit_file *f, int force, uint64_t now)
{
	if (f->fd >= 0 || !((force && !f->refused) || now >= f->next_try))
		return;
	if (f == &s->map)
		open_map(s);
	else
		open_dump(s);
	f->next_try = now + RETRY_NS;
}

/* Read more of s's files; force: look for missing ones now; whole: read
 * them up to the cap (a report, the exit). */
static void refresh(struct jit_source *s, int force, int whole)
{
	if (s->map.fd < 0 || s->dump.fd < 0) {
		uint64_t now = now_ns();

		look_for(s, &s->map, force, now);
		look_for(s, &s->dump, force, now);
	}
	read_more(s, &s->map, whole || s->exited, s->exited);
	read_more(s, &s->dump, whole || s->exited, s->exited);
}

static const struct jit_entry *find(struct jit_source *s, uint64_t pc, struct jit_table **in)
{
	const struct jit_entry *e;

	/* the jitdump first: it may give lines */
	if (s->dump.t.n && (e = jit_table_find(&s->dump.t, pc))) {
		*in = &s->dump.t;
		return e;
	}
	if (s->map.t.n && (e = jit_table_find(&s->map.t, pc))) {
		*in = &s->map.t;
		return e;
	}
	return NULL;
}

void jit_names_note(uint32_t module, uint64_t pc)
{
	struct jit_source *s = source_of(module);
	struct jit_table *t;

	if (s && !find(s, pc, &t))
		refresh(s, 0, 0);
}

uint64_t jit_names_rewrites(pid_t pid)
{
	struct jit_source *s = NULL;

	if (last_hit < nsources && sources[last_hit]->pid == pid)
		s = sources[last_hit];
	for (size_t i = nsources; !s && i-- > 0;)
		if (sources[i]->pid == pid)
			s = sources[i];
	if (!s || (s->map.fd < 0 && s->dump.fd < 0))
		return 0;
	read_more(s, &s->map, s->exited, s->exited);
	read_more(s, &s->dump, s->exited, s->exited);
	return s->map.t.rewrites + s->dump.t.rewrites;
}

void jit_names_exiting(pid_t pid)
{
	for (size_t i = nsources; i-- > 0;)
		if (sources[i]->pid == pid) {
			sources[i]->exited = 1;
			refresh(sources[i], 1, 1);
			return;
		}
}

void jit_names_read_all(void)
{
	for (size_t i = 0; i < nsources; i++)
		if (sources[i]->pid)
			refresh(sources[i], 1, 1);
}

static void file_free(struct jit_file *f);

void jit_names_forget(pid_t pid)
{
	for (size_t i = nsources; pid && i-- > 0;)
		if (sources[i]->pid == pid) {
			file_free(&sources[i]->map);
			file_free(&sources[i]->dump);
			sources[i]->map.fd = sources[i]->dump.fd = -1;
			sources[i]->pid = 0;
			return;
		}
}

/* The line of pc in e's DEBUG_INFO: the last entry at or below it. */
static void line_of(struct jit_table *t, const struct jit_entry *e, uint64_t pc,
		    const char **file, int *line)
{
	const struct jit_dbg *d = &t->dbg[e->dbg];
	uint64_t a = pc - e->start + d->code_addr, best = 0;
	int found = 0;

	for (uint32_t i = d->first; i < d->first + d->n; i++) {
		const struct jit_line *l = &t->lines[i];

		if (l->addr <= a && (!found || l->addr >= best)) {
			best = l->addr;
			*file = t->pool + l->file;
			*line = l->line;
			found = 1;
		}
	}
}

const char *jit_names_lookup(uint32_t module, uint64_t pc, uint64_t *start,
			     const char **file, int *line)
{
	struct jit_source *s = source_of(module);
	const struct jit_entry *e;
	struct jit_table *t = NULL;

	*file = NULL;
	*line = 0;
	if (!s)
		return NULL;
	if (!(e = find(s, pc, &t))) {
		refresh(s, 1, 0);
		if (!(e = find(s, pc, &t)))
			return NULL;
	}
	*start = e->start;
	if (e->dbg != JIT_NONE && e->dbg < t->ndbg)
		line_of(t, e, pc, file, line);
	return t->pool + e->name;
}

int jit_names_unwind(uint32_t module, uint64_t pc, struct jit_unwind *u)
{
	struct jit_source *s = source_of(module);
	const struct jit_entry *e;
	const struct jit_uw *w;

	if (!s || !s->dump.t.n || !(e = jit_table_find(&s->dump.t, pc)) ||
	    e->unwind == JIT_NONE || e->unwind >= s->dump.t.nuw)
		return -1;
	w = &s->dump.t.uw[e->unwind];
	u->code_start = e->start;
	u->code_end = e->end;
	u->eh_frame = s->dump.t.uw_data + w->data;
	u->eh_frame_size = (size_t)w->eh_frame_size;
	u->eh_frame_hdr = u->eh_frame + w->eh_frame_size;
	u->eh_frame_hdr_size = (size_t)w->hdr_size;
	u->mapped_size = w->mapped_size;
	return 0;
}

void jit_names_counts(uint64_t *nsrc, uint64_t *ranges, uint64_t *files)
{
	*nsrc = nsources;
	*ranges = 0;
	for (size_t i = 0; i < nsources; i++)
		*ranges += sources[i]->map.t.n + sources[i]->dump.t.n;
	*files = files_found;
}

static void file_free(struct jit_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	jit_table_free(&f->t);
	free(f->path);
	f->path = NULL;
}

void jit_names_release_all(void)
{
	for (size_t i = 0; i < nsources; i++) {
		file_free(&sources[i]->map);
		file_free(&sources[i]->dump);
		free(sources[i]);
	}
	free(sources);
	sources = NULL;
	nsources = sources_cap = last_hit = 0;
	files_found = 0;
}

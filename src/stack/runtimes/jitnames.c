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
#define MAX_EPOCHS (1u << 18)	/* module ids of run-time code, all processes */
#define RETRY_NS 200000000ull	/* a file not found is looked for again after */

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
	uint64_t base;		/* rewrites its first read found: before memtap */
};

struct jit_source {
	pid_t pid;		/* 0: forgotten */
	int exited;
	uint32_t epoch;		/* its module id's, from JIT_MODULE_BASE */
	uint32_t unsure;	/* the epoch of code not known, UINT32_MAX: none */
	int in_unsure;		/* jit_names_unsure(): its id given */
	struct jit_file map, dump;
	struct perfmap_state ms;
	struct jitdump_state ds;
};

/*
 * An epoch of a process's run-time code (jitnames.h): limit[], of the
 * perf map [0] and the jitdump [1], the entries read (the ones a full
 * table let go counted) before the first that rewrote code read in the
 * epoch; EPOCH_OPEN while none was.
 */
#define EPOCH_OPEN UINT64_MAX
struct jit_epoch {
	uint32_t src;
	int unsure;		/* jit_names_unsure()'s: every pc JIT_UNSURE_NAME */
	uint64_t limit[2];
};

static struct jit_source **sources;
static size_t nsources, sources_cap, last_hit;
static struct jit_epoch *epochs;
static size_t nepochs, epochs_cap;
static uint64_t files_found;

static struct jit_source *source_of(uint32_t module)
{
	struct jit_source *s;

	if (!jit_is_module(module) || module - JIT_MODULE_BASE >= nepochs)
		return NULL;
	s = sources[epochs[module - JIT_MODULE_BASE].src];
	return s->pid ? s : NULL;
}

static struct jit_source *source_by_pid(pid_t pid)
{
	if (last_hit < nsources && sources[last_hit]->pid == pid)
		return sources[last_hit];
	for (size_t i = nsources; i-- > 0;)
		if (sources[i]->pid == pid) {
			last_hit = i;
			return sources[i];
		}
	return NULL;
}

/* A new epoch of source src: its index, or -1 when the table is full. */
static long epoch_add(size_t src)
{
	if (nepochs >= MAX_EPOCHS)
		return -1;
	epochs = xgrowarray(epochs, &epochs_cap, nepochs + 1, sizeof(*epochs));
	epochs[nepochs].src = (uint32_t)src;
	epochs[nepochs].unsure = 0;
	epochs[nepochs].limit[0] = epochs[nepochs].limit[1] = EPOCH_OPEN;
	return (long)nepochs++;
}

uint32_t jit_names_module(pid_t pid)
{
	struct jit_source *s = source_by_pid(pid);
	long e;

	if (s)
		return JIT_MODULE_BASE + (s->in_unsure ? s->unsure : s->epoch);
	if (nsources >= MAX_SOURCES || (e = epoch_add(nsources)) < 0)
		return UINT32_MAX;
	s = xcalloc(1, sizeof(*s));
	s->pid = pid;
	s->epoch = (uint32_t)e;
	s->unsure = UINT32_MAX;
	s->map.fd = s->dump.fd = -1;
	sources = xgrowarray(sources, &sources_cap, nsources + 1, sizeof(*sources));
	sources[nsources] = s;
	last_hit = nsources++;
	return JIT_MODULE_BASE + (uint32_t)e;
}

void jit_names_new_epoch(pid_t pid)
{
	struct jit_source *s = source_by_pid(pid);
	struct jit_epoch *ep;
	long e;

	if (!s)
		return;
	ep = &epochs[s->epoch];
	if (ep->limit[0] == EPOCH_OPEN && ep->limit[1] == EPOCH_OPEN)
		return;		/* nothing rewritten since it began */
	if ((e = epoch_add(last_hit)) < 0) {
		/* full: named by the latest files again, as without epochs */
		ep->limit[0] = ep->limit[1] = EPOCH_OPEN;
		return;
	}
	s->epoch = (uint32_t)e;
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

void jit_names_unsure(pid_t pid, int on)
{
	struct jit_source *s;
	long e;

	jit_names_module(pid);	/* the source made */
	if (!(s = source_by_pid(pid)))
		return;
	if (on && s->unsure == UINT32_MAX && (e = epoch_add(last_hit)) >= 0) {
		epochs[e].unsure = 1;
		s->unsure = (uint32_t)e;
	}
	s->in_unsure = on && s->unsure != UINT32_MAX;
}

/*
 * Hand f's reader what f gained, JIT_READ_STEP bytes at most unless
 * whole (then up to JIT_MAX_BYTES); final: the file is complete.
 */
static void read_more(struct jit_source *s, struct jit_file *f, int whole, int final)
{
	struct stat st;
	uint64_t limit, rewrites, before;
	int k;

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
	rewrites = f->t.rewrites;
	before = f->t.trimmed + f->t.n;
	if (f == &s->map)
		perfmap_read(&f->t, &s->ms, jit_pread_fd, &f->fd, limit, final);
	else
		jitdump_read(&f->t, &s->ds, jit_pread_fd, &f->fd, limit, final);
	/* code rewritten: the epoch's frames are named by what came before;
	   a first read's, from before memtap looked, by the latest */
	k = f == &s->dump;
	if (!before)
		f->base = f->t.rewrites;
	else if (f->t.rewrites != rewrites && epochs[s->epoch].limit[k] == EPOCH_OPEN)
		epochs[s->epoch].limit[k] = before;
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

/*
 * The entry of t naming pc as the entries before limit (EPOCH_OPEN: all
 * of them) named it: a pc whose code was rewritten later is looked for
 * in the entries before, the last one over it; none, the latest's, if
 * it is the only one read since (else *unsure: which one is not known).
 */
static const struct jit_entry *find_before(struct jit_table *t, uint64_t limit, uint64_t pc,
					   int *unsure)
{
	const struct jit_entry *e = t->n ? jit_table_find(t, pc) : NULL;
	size_t i, from, since = 0;

	if (!e || limit == EPOCH_OPEN || t->trimmed + (uint64_t)(e - t->e) < limit)
		return e;
	from = limit <= t->trimmed ? 0 : limit - t->trimmed < t->n ? (size_t)(limit - t->trimmed) : t->n;
	for (i = from; i-- > 0;)
		if (t->e[i].start <= pc && pc < t->e[i].end)
			return &t->e[i];
	for (i = from; i < t->n; i++)
		since += t->e[i].start <= pc && pc < t->e[i].end;
	*unsure = since > 1;
	return e;
}

/* The entry naming pc in epoch ep (NULL: the latest), and its table. */
static const struct jit_entry *find(struct jit_source *s, const struct jit_epoch *ep, uint64_t pc,
				    struct jit_table **in, int *unsure)
{
	const struct jit_entry *e;

	/* the jitdump first: it may give lines */
	if ((e = find_before(&s->dump.t, ep ? ep->limit[1] : EPOCH_OPEN, pc, unsure))) {
		*in = &s->dump.t;
		return e;
	}
	if ((e = find_before(&s->map.t, ep ? ep->limit[0] : EPOCH_OPEN, pc, unsure))) {
		*in = &s->map.t;
		return e;
	}
	return NULL;
}

void jit_names_note(uint32_t module, uint64_t pc)
{
	struct jit_source *s = source_of(module);
	struct jit_table *t;
	int unsure = 0;

	if (s && !find(s, NULL, pc, &t, &unsure))
		refresh(s, 0, 0);
}

uint64_t jit_names_rewrites(pid_t pid)
{
	struct jit_source *s = source_by_pid(pid);

	if (!s || (s->map.fd < 0 && s->dump.fd < 0))
		return 0;
	read_more(s, &s->map, s->exited, s->exited);
	read_more(s, &s->dump, s->exited, s->exited);
	return s->map.t.rewrites - s->map.base + s->dump.t.rewrites - s->dump.base;
}

uint64_t jit_names_code_read(pid_t pid)
{
	struct jit_source *s;

	if (jit_names_module(pid) == UINT32_MAX || !(s = source_by_pid(pid)))
		return 0;
	if (s->map.fd < 0)
		look_for(s, &s->map, 0, now_ns());
	return jit_names_rewrites(pid);
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
	const struct jit_epoch *ep;
	int unsure = 0;

	*file = NULL;
	*line = 0;
	if (!s)
		return NULL;
	ep = &epochs[module - JIT_MODULE_BASE];
	if (ep->unsure) {
		*start = pc;
		return JIT_UNSURE_NAME;
	}
	if (!(e = find(s, ep, pc, &t, &unsure))) {
		refresh(s, 1, 0);
		if (!(e = find(s, ep, pc, &t, &unsure)))
			return NULL;
	}
	if (unsure) {
		*start = pc;
		return JIT_UNSURE_NAME;
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
	free(epochs);
	epochs = NULL;
	nepochs = epochs_cap = 0;
	files_found = 0;
}

/*
 * symbolize-store.c - the modules' symbols and DWARF, kept for the whole
 * run and shared by every symbolizer, and the thread that reads them
 * ahead (symbolize_prefetch()).
 *
 * Reading a module's DWARF is most of a report's cost where the debug
 * file is compressed (Debian's debug packages: libelf inflates every
 * .debug_* section when libdw opens it, 60 ms for libc's), and it came
 * at the end, after the target, while the user waited.  A module is now
 * queued when a stack first has a frame in it, and a thread reads it
 * (opens its Dwfl, its debug file, its symbol table and CU ranges) while
 * the target runs; the report finds it read.  A lookup of a module still
 * queued reads it itself, one the thread is reading waits for it.
 *
 * The thread works on one module at a time, with a Dwfl of its own that
 * no other thread touches until it is done (SM_BUSY); it blocks every
 * signal and makes no syscall on the target.  MEMTAP_PREFETCH=0 turns it
 * off: modules are then read at their first lookup, as before.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stack/modules.h"
#include "stack/symbols/symbolize.h"
#include "stack/symbols/symbolize-int.h"
#include "util/xmalloc.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* work queued, a module read, stop */
	struct sym_module **mods;	/* by module id; each entry stays put */
	size_t nmods;
	size_t queued;			/* modules in SM_QUEUED */
	int started, stop, off;		/* off: no thread (refused or unwanted) */
	pthread_t thread;
	uint64_t read_ahead;		/* modules the thread read */
} st = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Under the lock: id's entry, made if missing. */
static struct sym_module *entry(uint32_t id)
{
	if (id >= st.nmods) {
		size_t n = st.nmods;

		st.mods = xgrowarray(st.mods, &n, (size_t)id + 1, sizeof(*st.mods));
		st.nmods = n;
	}
	if (!st.mods[id]) {
		st.mods[id] = xcalloc(1, sizeof(**st.mods));
		st.mods[id]->fd = -1;
	}
	return st.mods[id];
}

/* A queued module: what it was queued with, read (by whichever thread). */
static void read_queued(struct sym_module *sm)
{
	int fd = sm->fd;

	sm->fd = -1;
	if (sym_module_open(sm, sm->name, sm->path, sm->pid, fd))
		sym_module_read(sm);
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&st.lock);
	while (!st.stop) {
		struct sym_module *sm = NULL;

		for (size_t i = 0; st.queued && i < st.nmods && !sm; i++)
			if (st.mods[i] && st.mods[i]->state == SM_QUEUED)
				sm = st.mods[i];
		if (!sm) {
			pthread_cond_wait(&st.cond, &st.lock);
			continue;
		}
		sm->state = SM_BUSY;
		st.queued--;
		pthread_mutex_unlock(&st.lock);
		read_queued(sm);
		pthread_mutex_lock(&st.lock);
		sm->state = SM_IDLE;
		st.read_ahead++;
		pthread_cond_broadcast(&st.cond);
	}
	pthread_mutex_unlock(&st.lock);
	return NULL;
}

/* Under the lock: the thread, started once, every signal blocked in it. */
static int start(void)
{
	sigset_t all, old;
	const char *env;

	if (st.started || st.off)
		return st.started;
	env = getenv("MEMTAP_PREFETCH");
	if (env && strcmp(env, "0") == 0) {
		st.off = 1;
		return 0;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&st.thread, NULL, reader, NULL) == 0)
		st.started = 1;
	else
		st.off = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return st.started;
}

void symbolize_prefetch(uint32_t id)
{
	const struct module *m = module_get(id);
	struct sym_module *sm;

	if (!m || m->path[0] != '/')
		return;
	pthread_mutex_lock(&st.lock);
	sm = entry(id);
	if (!st.off && !sm->tried && sm->state == SM_IDLE && start()) {
		sm->fd = module_open(m);
		if (sm->fd >= 0) {
			sm->name = xstrdup(m->name);
			sm->path = xstrdup(m->path);
			sm->pid = m->pid;
			sm->state = SM_QUEUED;
			st.queued++;
			pthread_cond_broadcast(&st.cond);
		}
	}
	pthread_mutex_unlock(&st.lock);
}

struct sym_module *sym_store_get(const struct module *m)
{
	struct sym_module *sm;
	int queued = 0;

	pthread_mutex_lock(&st.lock);
	sm = entry(m->id);
	if (sm->state == SM_QUEUED) {
		/* not begun: read here, beside the thread's */
		sm->state = SM_IDLE;
		st.queued--;
		queued = 1;
	}
	while (sm->state == SM_BUSY)
		pthread_cond_wait(&st.cond, &st.lock);
	pthread_mutex_unlock(&st.lock);
	if (queued)
		read_queued(sm);
	else if (!sm->tried)
		sym_module_open(sm, m->name, m->path, m->pid,
				m->path[0] == '/' ? module_open(m) : -1);
	return sm;
}

uint64_t symbolize_read_ahead(void)
{
	uint64_t n;

	pthread_mutex_lock(&st.lock);
	n = st.read_ahead;
	pthread_mutex_unlock(&st.lock);
	return n;
}

void symbolize_release_all(void)
{
	pthread_mutex_lock(&st.lock);
	st.stop = 1;
	pthread_cond_broadcast(&st.cond);
	pthread_mutex_unlock(&st.lock);
	if (st.started)
		pthread_join(st.thread, NULL);
	for (size_t i = 0; i < st.nmods; i++) {
		struct sym_module *sm = st.mods[i];

		if (!sm)
			continue;
		sym_module_clear(sm);
		if (sm->fd >= 0)
			close(sm->fd);
		free(sm->name);
		free(sm->path);
		free(sm);
	}
	free(st.mods);
	st.mods = NULL;
	st.nmods = st.queued = 0;
	st.started = st.stop = st.off = 0;
	st.read_ahead = 0;
}

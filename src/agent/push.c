/*
 * push.c - the queue of profiles for Pyroscope and the thread that
 * sends them (push.h).
 *
 * The invariant is one ordered list: every profile not yet sent or
 * dropped is in it, oldest first, whether its body is in memory or in a
 * spool file (the list node keeps its query either way).  The sender
 * takes the head out of the list while it sends it, without the lock,
 * and puts it back at the head when the attempt is to be retried, so a
 * profile never overtakes an older one.  push_submit() appends, and when
 * the memory bound is reached writes the new profile to the spool
 * instead of keeping its body (or, without a spool, drops the oldest
 * waiting one).  At push_stop() the thread sends until the drain time is
 * up, or push_cut_short() is called, then writes what is left in memory
 * to the spool in list order; spool names carry the submission
 * sequence, so the next memtap reads them back in the same order.  A
 * thread that does not end when told (a name lookup, which nothing
 * cuts short) is left behind: push_stop() spools what waits itself and
 * frees nothing the thread may still touch.
 *
 * The thread's messages go through warn_msg() and info_msg(), one
 * write() of a buffer of their own each; the strerror() they quote is
 * thread-safe in glibc (2.32 and later) and musl.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/push.h"
#include "agent/push-spool.h"
#include "util/error.h"
#include "util/http-client.h"
#include "util/xmalloc.h"

struct item {
	struct item *next;
	uint64_t seq;
	int64_t until;
	char *query;
	void *body;		/* NULL: in the spool file of seq */
	size_t len;
	uint64_t file_size;	/* 0: no spool file */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	int started, stopping;
	double drain_deadline;	/* CLOCK_MONOTONIC */
	struct http_url url;
	char *tenant_header;
	double spool_max;
	int spool_fd;
	char *spool_dir;
	int cancel_fd;		/* readable: the drain time is up */
	struct item *head, **tail;
	struct item *inflight;	/* the one the thread sends now, out of the list */
	int abandoned;		/* push_stop() went on without the thread */
	uint64_t left_spooled, left_dropped;	/* not sent at exit */
	size_t mem_count, mem_bytes;
	uint64_t spool_bytes, next_seq;
	struct push_stats st;
	uint64_t warned[10];	/* statuses 0..639 already reported */
	int spool_warned;
} P = { .lock = PTHREAD_MUTEX_INITIALIZER, .spool_fd = -1, .cancel_fd = -1 };

/* push_cut_short()'s, for a signal handler: no lock */
static volatile sig_atomic_t cut;
static volatile sig_atomic_t cut_fd = -1;	/* P.cancel_fd while it is open */

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The CLOCK_REALTIME time s seconds from now, for the timed waits. */
static void realtime_in(double s, struct timespec *ts)
{
	if (s < 0)
		s = 0;
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += (time_t)s;
	ts->tv_nsec += (long)((s - (time_t)s) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static int64_t wall_now(void)
{
	return (int64_t)time(NULL);
}

/*
 * Copy s to *o, the characters Pyroscope's key syntax reserves made '_':
 * in a label name all but [A-Za-z0-9_], in the app name and label values
 * { } , = " and controls (and spaces in the app name).
 */
enum { CLEAN_APP, CLEAN_LABEL, CLEAN_VALUE };

static void put_clean(char **o, const char *s, int mode)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (mode == CLEAN_LABEL)
			c = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_' ? c : '_';
		else if (c < ' ' || c == 0x7f || (mode == CLEAN_APP && c == ' ') || c == '{' || c == '}' || c == ',' || c == '=' ||
			 c == '"')
			c = '_';
		*(*o)++ = c;
	}
}

static void put_pct(char **o, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = *s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			*(*o)++ = c;
		} else {
			*(*o)++ = '%';
			*(*o)++ = hex[c >> 4];
			*(*o)++ = hex[c & 15];
		}
	}
}

char *push_query(const char *name, const char *const *labels, int64_t from, int64_t until)
{
	size_t n = strlen(name) + 3;
	char *key, *k, *enc, *e, *q;

	for (size_t i = 0; labels && labels[i] && labels[i + 1]; i += 2)
		n += strlen(labels[i]) + strlen(labels[i + 1]) + 2;
	k = key = xmalloc(n + 1);
	put_clean(&k, name, CLEAN_APP);
	*k++ = '{';
	for (size_t i = 0; labels && labels[i] && labels[i + 1]; i += 2) {
		if (i)
			*k++ = ',';
		put_clean(&k, labels[i], CLEAN_LABEL);
		*k++ = '=';
		put_clean(&k, labels[i + 1], CLEAN_VALUE);
	}
	*k++ = '}';
	*k = '\0';
	e = enc = xmalloc(3 * strlen(key) + 1);
	put_pct(&e, key);
	*e = '\0';
	q = xasprintf("/ingest?name=%s&from=%" PRId64 "&until=%" PRId64
		      "&format=pprof&spyName=memtap", enc, from, until);
	free(key);
	free(enc);
	return q;
}

/* Free it, its body and its spool file; the lock is held. */
static void item_free(struct item *it)
{
	if (it->file_size && P.spool_fd >= 0) {
		spool_remove(P.spool_fd, it->seq);
		P.spool_bytes -= it->file_size;
	}
	if (it->body) {
		P.mem_count--;
		P.mem_bytes -= it->len;
	}
	free(it->body);
	free(it->query);
	free(it);
}

static void list_append(struct item *it)
{
	it->next = NULL;
	*P.tail = it;
	P.tail = &it->next;
}

static void list_unlink(struct item **pp)
{
	struct item *it = *pp;

	*pp = it->next;
	if (P.tail == &it->next)
		P.tail = pp;
}

/* The waiting profile at *pp goes unsent: counted as dropped. */
static void item_drop(struct item **pp)
{
	struct item *it = *pp;

	list_unlink(pp);
	item_free(it);
	P.st.dropped++;
	P.st.queued--;
}

/* Move it's body to the spool; 0, or -1 (it is left as it was). */
static int item_spool(struct item *it)
{
	int64_t size;

	/* room first: the oldest spooled profiles go */
	for (struct item **pp = &P.head; *pp && P.spool_bytes + it->len > PUSH_SPOOL_BYTES;) {
		if ((*pp)->file_size)
			item_drop(pp);
		else
			pp = &(*pp)->next;
	}
	size = spool_write(P.spool_fd, it->seq, it->query, it->until, it->body, it->len);
	if (size < 0) {
		if (!P.spool_warned++)
			warn_msg("push spool '%s': write: %s: profiles kept in memory or dropped",
				 P.spool_dir, strerror(errno));
		return -1;
	}
	it->file_size = size;
	P.spool_bytes += size;
	P.mem_count--;
	P.mem_bytes -= it->len;
	free(it->body);
	it->body = NULL;
	P.st.spooled++;
	return 0;
}

/* Drop every waiting profile older than spool_max; the lock is held. */
static void drop_expired(void)
{
	int64_t oldest = wall_now() - (int64_t)P.spool_max;

	for (struct item **pp = &P.head; *pp;) {
		if ((*pp)->until < oldest)
			item_drop(pp);
		else
			pp = &(*pp)->next;
	}
}

void push_submit(const void *pprof_gz, size_t len, const char *name, const char *const *labels,
		 int64_t from, int64_t until)
{
	struct item *it;

	pthread_mutex_lock(&P.lock);
	if (!P.started || P.stopping) {
		pthread_mutex_unlock(&P.lock);
		return;
	}
	drop_expired();
	if (until < wall_now() - (int64_t)P.spool_max) {
		P.st.dropped++;
		pthread_mutex_unlock(&P.lock);
		return;
	}
	it = xcalloc(1, sizeof(*it));
	it->seq = P.next_seq++;
	it->until = until;
	it->query = push_query(name, labels, from, until);
	it->body = xmalloc(len ? len : 1);
	memcpy(it->body, pprof_gz, len);
	it->len = len;
	P.mem_count++;
	P.mem_bytes += len;
	P.st.queued++;
	if (P.mem_count > PUSH_QUEUE_MAX || P.mem_bytes > PUSH_QUEUE_BYTES) {
		if (P.spool_fd < 0 || item_spool(it) < 0) {
			/* the oldest profile kept in memory goes */
			for (struct item **pp = &P.head; *pp; pp = &(*pp)->next) {
				if ((*pp)->body) {
					item_drop(pp);
					break;
				}
			}
			if (P.mem_count > PUSH_QUEUE_MAX || P.mem_bytes > PUSH_QUEUE_BYTES) {
				item_free(it);	/* bigger than the whole queue */
				P.st.dropped++;
				P.st.queued--;
				pthread_mutex_unlock(&P.lock);
				return;
			}
		}
	}
	list_append(it);
	pthread_cond_broadcast(&P.cond);
	pthread_mutex_unlock(&P.lock);
}

void push_get_stats(struct push_stats *s)
{
	pthread_mutex_lock(&P.lock);
	*s = P.st;
	pthread_mutex_unlock(&P.lock);
}

/* The first time status is seen; the lock is not held. */
static int first_time(int status)
{
	int first;

	if (status < 0 || status >= 640)
		return 0;
	pthread_mutex_lock(&P.lock);
	first = !(P.warned[status / 64] & 1ULL << (status % 64));
	P.warned[status / 64] |= 1ULL << (status % 64);
	pthread_mutex_unlock(&P.lock);
	return first;
}

enum outcome { SENT, DROPPED, RETRY };

/*
 * One attempt at it, without the lock: SENT, DROPPED (said why), or
 * RETRY with *wait the server's Retry-After (or -1).  drain_left: the
 * seconds left to drain at exit, or -1 when not stopping.
 */
static enum outcome send_item(struct item *it, double drain_left, double *wait, int *streak)
{
	const char *headers[3] = { "Content-Type: application/octet-stream", P.tenant_header, NULL };
	struct http_response r;
	char err[256];
	void *body = it->body;
	size_t len = it->len;
	double timeout = PUSH_TIMEOUT;
	enum outcome o;

	*wait = -1;
	if (it->until < wall_now() - (int64_t)P.spool_max)
		return DROPPED;
	if (!body) {
		body = spool_read(P.spool_fd, it->seq, &len);
		if (!body) {
			warn_msg("push spool '%s': profile %" PRIu64 " unreadable (%s): dropped",
				 P.spool_dir, it->seq, strerror(errno));
			return DROPPED;
		}
	}
	if (drain_left >= 0)
		timeout = drain_left < 0.1 ? 0.1 : drain_left < timeout ? drain_left : timeout;
	if (http_post(&P.url, it->query, headers, body, len, timeout, P.cancel_fd, &r, err,
		      sizeof(err)) < 0) {
		struct pollfd cancelled = { .fd = P.cancel_fd, .events = POLLIN };

		if (poll(&cancelled, 1, 0) <= 0 && !(*streak)++)	/* not cut short at exit */
			warn_msg("push: %s: retrying", err);
		o = RETRY;
	} else if (r.status >= 200 && r.status < 300) {
		if (*streak)
			info_msg("push to %s: sent again after %d failed attempt%s", P.url.hostport,
				 *streak, *streak == 1 ? "" : "s");
		*streak = 0;
		o = SENT;
	} else if (r.status == 429 || r.status >= 500) {
		if (!(*streak)++)
			warn_msg("push to %s: %d%s%s: retrying", P.url.hostport, r.status,
				 r.line[0] ? " " : "", r.line);
		*wait = r.retry_after;
		o = RETRY;
	} else {
		if (first_time(r.status)) {
			if (r.status == 401 || r.status == 403)
				warn_msg("push to %s: %d: credentials refused (the URL's user:pass or "
					 "the proxy's): profiles dropped", P.url.hostport, r.status);
			else
				warn_msg("push to %s: %d%s%s: profiles so answered are dropped",
					 P.url.hostport, r.status, r.line[0] ? " " : "", r.line);
		}
		o = DROPPED;
	}
	if (body != it->body)
		free(body);
	return o;
}

static double backoff(int k, unsigned *rnd)
{
	double d = PUSH_BACKOFF_MIN;

	while (k-- > 0 && d < PUSH_BACKOFF_MAX)
		d *= 2;
	if (d > PUSH_BACKOFF_MAX)
		d = PUSH_BACKOFF_MAX;
	return d * (0.5 + 0.5 * (rand_r(rnd) / (double)RAND_MAX));
}

/*
 * At exit, what still waits: to the spool, in order, or dropped; counted
 * in left_spooled and left_dropped.  The lock is held.
 */
static void leave_rest(void)
{
	while (P.head) {
		struct item *it = P.head;

		if (it->body && (P.spool_fd < 0 || item_spool(it) < 0)) {
			item_drop(&P.head);
			P.left_dropped++;
			continue;
		}
		/* spooled: the file stays for the next memtap */
		P.left_spooled++;
		list_unlink(&P.head);
		free(it->query);
		free(it);
	}
}

/*
 * The retry's wait, until until (CLOCK_MONOTONIC); the lock is held.
 * Stopping, it ends at once when it would outlast the drain time or the
 * wait is cut short: a poll of cancel_fd then, which push_cut_short()
 * writes from a signal handler, where a condition cannot be signalled.
 */
static void retry_wait(double until)
{
	while (mono_now() < until && !(P.stopping && (cut || until > P.drain_deadline))) {
		struct timespec ts;

		if (P.stopping) {
			struct pollfd pfd = { .fd = P.cancel_fd, .events = POLLIN };
			double left = until - mono_now();

			pthread_mutex_unlock(&P.lock);
			poll(&pfd, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
			pthread_mutex_lock(&P.lock);
			continue;
		}
		realtime_in(until - mono_now(), &ts);
		pthread_cond_timedwait(&P.cond, &P.lock, &ts);
	}
}

static void *sender(void *arg)
{
	unsigned rnd = (unsigned)time(NULL) ^ (unsigned)getpid();
	int k = 0, streak = 0;

	(void)arg;
	pthread_mutex_lock(&P.lock);
	for (;;) {
		struct item *it;
		enum outcome o;
		double wait, drain_left;

		/* cut short before push_stop(): nothing more is tried */
		while ((!P.head || cut) && !P.stopping)
			pthread_cond_wait(&P.cond, &P.lock);
		if (!P.head || (P.stopping && (cut || mono_now() >= P.drain_deadline)))
			break;
		it = P.head;
		list_unlink(&P.head);
		P.inflight = it;
		drain_left = P.stopping ? P.drain_deadline - mono_now() : -1;
		pthread_mutex_unlock(&P.lock);
		o = send_item(it, drain_left, &wait, &streak);
		pthread_mutex_lock(&P.lock);
		P.inflight = NULL;
		if (P.abandoned) {
			/* push_stop() did without this thread: it has it all */
			pthread_mutex_unlock(&P.lock);
			return NULL;
		}
		if (o != RETRY) {
			if (o == SENT)
				P.st.pushed++;
			else
				P.st.dropped++;
			P.st.queued--;
			item_free(it);
			k = 0;
			continue;
		}
		P.st.failures++;
		it->next = P.head;
		P.head = it;
		if (P.tail == &P.head)
			P.tail = &it->next;
		if (wait < 0)
			wait = backoff(k++, &rnd);
		if (wait > P.spool_max)
			wait = P.spool_max;
		double until = mono_now() + wait;

		retry_wait(until);
		if (P.stopping && mono_now() < until)
			break;
	}
	leave_rest();
	pthread_mutex_unlock(&P.lock);
	return NULL;
}

int push_start(const struct push_config *c, char *err, size_t errsize)
{
	struct spool_entry *e = NULL;
	size_t n = 0, ignored = 0;
	sigset_t all, old;
	int rc;

	if (P.started) {
		snprintf(err, errsize, "push: already started");
		return -1;
	}
	if (http_url_parse(c->url, &P.url, err, errsize) < 0)
		return -1;
	P.spool_max = c->spool_max > 0 ? c->spool_max : 3600;
	P.tenant_header = c->tenant ? xasprintf("X-Scope-OrgID: %s", c->tenant) : NULL;
	if (c->tenant)
		for (char *s = P.tenant_header; *s; s++)
			if ((unsigned char)*s < ' ' || *s == 0x7f)
				*s = '_';
	memset(&P.st, 0, sizeof(P.st));
	memset(P.warned, 0, sizeof(P.warned));
	P.spool_warned = 0;
	P.left_spooled = P.left_dropped = 0;
	cut = 0;
	P.head = NULL;
	P.tail = &P.head;
	P.next_seq = 1;
	P.spool_fd = -1;
	if (c->spool_dir) {
		P.spool_fd = spool_open(c->spool_dir, err, errsize);
		if (P.spool_fd < 0)
			goto fail;
		P.spool_dir = xstrdup(c->spool_dir);
		e = spool_scan(P.spool_fd, &n, &ignored);
		if (ignored)
			warn_msg("push spool '%s': %zu file%s that %s not memtap's spool files "
				 "ignored", c->spool_dir, ignored, ignored == 1 ? "" : "s",
				 ignored == 1 ? "is" : "are");
		for (size_t i = 0; i < n; i++) {
			struct item *it = xcalloc(1, sizeof(*it));

			it->seq = e[i].seq;
			it->until = e[i].until;
			it->query = e[i].query;
			it->file_size = e[i].size;
			P.spool_bytes += e[i].size;
			P.next_seq = e[i].seq + 1;
			P.st.queued++;
			list_append(it);
		}
		free(e);
		if (n)
			info_msg("push spool '%s': %zu profile%s left by an earlier memtap to send",
				 c->spool_dir, n, n == 1 ? "" : "s");
	}
	P.cancel_fd = eventfd(0, EFD_CLOEXEC);
	if (P.cancel_fd < 0) {
		snprintf(err, errsize, "push: eventfd: %s", strerror(errno));
		goto fail;
	}
	pthread_cond_init(&P.cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	P.stopping = 0;
	P.started = 1;
	rc = pthread_create(&P.thread, NULL, sender, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errsize, "push: pthread_create: %s", strerror(rc));
		P.started = 0;
		pthread_cond_destroy(&P.cond);
		goto fail;
	}
	cut_fd = P.cancel_fd;
	return 0;
fail:
	while (P.head) {
		struct item *it = P.head;

		list_unlink(&P.head);
		free(it->query);
		free(it);
	}
	if (P.spool_fd >= 0)
		close(P.spool_fd);
	P.spool_fd = -1;
	if (P.cancel_fd >= 0)
		close(P.cancel_fd);
	P.cancel_fd = -1;
	free(P.spool_dir);
	P.spool_dir = NULL;
	free(P.tenant_header);
	P.tenant_header = NULL;
	http_url_release(&P.url);
	memset(&P.st, 0, sizeof(P.st));
	P.spool_bytes = 0;
	return -1;
}

void push_cut_short(void)
{
	uint64_t one = 1;
	int fd = cut_fd;

	cut = 1;
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* an eventfd below its maximum always takes it */
	}
}

/*
 * Join the thread by limit (CLOCK_MONOTONIC), or within PUSH_CUT_GRACE
 * of push_cut_short(); 0 once joined, -1 when it still runs.
 */
static int join_by(double limit)
{
	int cut_seen = 0;

	for (;;) {
		struct timespec ts;
		double now = mono_now(), step;

		if (cut && !cut_seen) {
			cut_seen = 1;
			if (limit > now + PUSH_CUT_GRACE)
				limit = now + PUSH_CUT_GRACE;
		}
		if (now >= limit)
			return -1;
		/* in steps: a signal's cut does not end a join */
		step = limit - now < 0.05 ? limit - now : 0.05;
		realtime_in(step, &ts);
		if (!pthread_timedjoin_np(P.thread, NULL, &ts))
			return 0;
	}
}

/*
 * The thread has not ended when told (a name lookup in getaddrinfo(),
 * which nothing cuts short): what waits goes to the spool from here, the
 * profile it holds too (its body written out, which the thread may be
 * reading: neither changes it), and the thread is left to end with
 * memtap, nothing it touches freed.
 */
static void abandon(void)
{
	struct item *it;

	pthread_mutex_lock(&P.lock);
	P.abandoned = 1;
	it = P.inflight;
	if (it && (it->file_size || (P.spool_fd >= 0 &&
				     spool_write(P.spool_fd, it->seq, it->query, it->until,
						 it->body, it->len) >= 0))) {
		P.left_spooled++;
		P.st.spooled += !it->file_size;
	} else if (it) {
		P.left_dropped++;
		P.st.dropped++;
	}
	leave_rest();
	pthread_mutex_unlock(&P.lock);
	pthread_detach(P.thread);
	warn_msg("push to %s: the sender did not end when told (a name lookup?): left behind",
		 P.url.hostport);
}

/* What was not sent at exit, in a line each: spooled, dropped. */
static void say_left(void)
{
	const char *how = cut ? " (cut short)" : "";

	if (P.left_spooled)
		info_msg("push: %" PRIu64 " profile%s not sent at exit%s: left in the spool '%s' "
			 "for the next memtap", P.left_spooled, P.left_spooled == 1 ? "" : "s", how,
			 P.spool_dir);
	if (P.left_dropped)
		warn_msg("push: %" PRIu64 " profile%s not sent at exit%s: dropped (%s)",
			 P.left_dropped, P.left_dropped == 1 ? "" : "s", how,
			 P.spool_fd < 0 ? "no spool to keep it" : "the spool could not take it");
}

void push_stop(double drain_seconds)
{
	double deadline;
	uint64_t queued;
	int fd;

	pthread_mutex_lock(&P.lock);
	if (!P.started || P.abandoned) {
		pthread_mutex_unlock(&P.lock);
		return;
	}
	P.stopping = 1;
	P.drain_deadline = mono_now() + (drain_seconds > 0 ? drain_seconds : 0);
	deadline = P.drain_deadline;
	queued = P.st.queued;
	pthread_cond_broadcast(&P.cond);
	pthread_mutex_unlock(&P.lock);
	if (queued)
		verbose_msg("push: %" PRIu64 " profile%s to send before exit, for at most %g s",
			    queued, queued == 1 ? "" : "s", drain_seconds > 0 ? drain_seconds : 0);
	/* a request still running at the deadline is cut short */
	if (join_by(deadline + 0.1) < 0) {
		uint64_t one = 1;

		if (write(P.cancel_fd, &one, sizeof(one)) < 0) {
			/* an eventfd below its maximum always takes it */
		}
		if (join_by(mono_now() + PUSH_CUT_GRACE) < 0) {
			abandon();
			say_left();
			return;
		}
	}
	say_left();
	pthread_mutex_lock(&P.lock);
	P.started = 0;
	if (P.spool_fd >= 0)
		close(P.spool_fd);
	P.spool_fd = -1;
	/* no signal handler's write to the number once closed */
	fd = P.cancel_fd;
	cut_fd = -1;
	P.cancel_fd = -1;
	close(fd);
	free(P.spool_dir);
	P.spool_dir = NULL;
	free(P.tenant_header);
	P.tenant_header = NULL;
	http_url_release(&P.url);
	pthread_cond_destroy(&P.cond);
	P.spool_bytes = 0;
	P.mem_count = P.mem_bytes = 0;
	pthread_mutex_unlock(&P.lock);
}

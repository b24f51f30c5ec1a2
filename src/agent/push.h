/*
 * push.h - memtap agent's pushes to Grafana Pyroscope: each profile is
 * sent as POST {prefix}/ingest?name=NAME{labels}&from=&until=
 * &format=pprof&spyName=memtap with the gzipped pprof as its body, by a
 * thread of its own, in the order submitted.
 *
 * Lifecycle: push_start() once, push_submit() any number of times from
 * one thread (the agent's), push_stop() at exit; push_start() may be
 * called again after push_stop() (unless the thread was left behind).
 * push_get_stats() from any thread, push_cut_short() from a signal
 * handler.
 *
 * Delivery: 2xx is sent.  Connect errors, timeouts, 429 and 5xx are
 * retried, the profile kept at the head of the queue (none is sent before
 * an older one), after a backoff doubling from 0.5 s to 5 min with
 * jitter, or after the server's Retry-After.  Another 4xx drops the
 * profile (counted; one warning per status: 401/403 say the credentials
 * were refused, others quote the server's first body line).  A profile
 * whose interval ended more than spool_max seconds ago is dropped and
 * counted, wherever it waits.
 *
 * Queue: in memory up to PUSH_QUEUE_MAX profiles or PUSH_QUEUE_BYTES
 * bytes; past that a new profile goes to the spool directory, or without
 * one the oldest waiting profile is dropped.  The spool holds one file
 * per profile (memtap-push-SEQ.prof, SEQ in 20 digits so that name order
 * is submission order), at most PUSH_SPOOL_BYTES of them (the oldest
 * dropped past that), written to a temporary name and renamed; a spool
 * left by an earlier memtap is sent first.
 *
 * The thread blocks every signal, touches only this file's state, and
 * reports through util/error.h's warn_msg()/info_msg(), which format
 * into a buffer of their own and write it at once (safe from any thread).
 */
#ifndef MEMTAP_PUSH_H
#define MEMTAP_PUSH_H

#include <stddef.h>
#include <stdint.h>

enum {
	PUSH_QUEUE_MAX = 64,
	PUSH_QUEUE_BYTES = 64 << 20,
};
#define PUSH_SPOOL_BYTES (1ULL << 30)
#define PUSH_TIMEOUT 10.0		/* seconds for one request, connect included */
#define PUSH_BACKOFF_MIN 0.5
#define PUSH_BACKOFF_MAX 300.0
#define PUSH_EXIT_DRAIN 5.0		/* memtap agent's default --push-drain */
#define PUSH_CUT_GRACE 0.5		/* seconds the thread has to end once cut short */

struct push_config {
	const char *url;	/* http://host:port[/prefix]; /ingest is appended */
	const char *spool_dir;	/* where profiles wait while the server is down; NULL: memory only (bounded) */
	double spool_max;	/* seconds of profiles kept (default 3600): older ones dropped and counted */
	const char *tenant;	/* X-Scope-OrgID, or NULL */
};

/*
 * Validate the URL, create or check the spool directory (created 0700;
 * it must be owned by memtap's effective user and writable by no one
 * else), read what an earlier memtap left in it, and start the sender
 * thread.  0, or -1 with a one-line message in err.
 */
int push_start(const struct push_config *c, char *err, size_t errsize);

/*
 * Queue one profile: gzipped pprof bytes (copied), the app name and
 * labels ("service_name" is the name; labels: NULL-terminated name/value
 * pairs, e.g. {"hostname","h1","pid","42",NULL}), the interval
 * [from, until] in Unix seconds.  Never waits for the network: the
 * profile goes to the memory queue, or to a spool file when the sender
 * is behind.  Does nothing before push_start().
 */
void push_submit(const void *pprof_gz, size_t len, const char *name, const char *const *labels,
		 int64_t from, int64_t until);

/*
 * pushed: answered 2xx; failures: attempts to be retried (connect
 * errors, timeouts, 429, 5xx); dropped: profiles given up (other 4xx, too
 * old, queue or spool full, unreadable spool file, or left at exit
 * without a spool); spooled: profiles written to the spool; queued:
 * profiles waiting now, in memory or in the spool.
 */
struct push_stats {
	uint64_t pushed, failures, dropped, spooled, queued;
};
void push_get_stats(struct push_stats *s);	/* thread-safe */

/*
 * At exit: send what is queued for at most drain_seconds (a request
 * running then is cut short), or until push_cut_short(); spool the rest
 * (or drop and count it, without a spool or room in it), say so in a
 * line (spooled: info_msg(); dropped: warn_msg()), join the thread.  A
 * thread that has not ended PUSH_CUT_GRACE seconds after it was told
 * (in a name lookup) is left behind, with a warning: what waits is
 * spooled without it, the profile it holds too, and push_stop()
 * returns.  Returns within drain_seconds + 0.1 + 2 * PUSH_CUT_GRACE,
 * and within 2 * PUSH_CUT_GRACE of push_cut_short(), spool writes aside.
 */
void push_stop(double drain_seconds);

/*
 * End push_stop()'s sending now, or the next push_stop()'s at once:
 * nothing more is tried, what waits is spooled.  Async-signal-safe (a
 * write to an eventfd); does nothing before push_start().
 */
void push_cut_short(void);

/*
 * The request's path and query for one profile (allocated): name with
 * the characters Pyroscope's key syntax reserves ({ } , = " controls and
 * spaces) replaced by '_', label names cut to [A-Za-z0-9_], label values
 * likewise cleaned, the whole name parameter percent-encoded.
 */
char *push_query(const char *name, const char *const *labels, int64_t from, int64_t until);

#endif /* MEMTAP_PUSH_H */

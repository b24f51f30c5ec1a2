/*
 * agent.h - memtap agent (agent.c): a long-running mode that follows
 * the processes its selectors match (follow.h), across restarts, and
 * every interval serves what they hold to Prometheus (--metrics) and
 * pushes a profile to Pyroscope (--push).  man memtap, RUNNING AS AN
 * AGENT.
 */
#ifndef MEMTAP_AGENT_H
#define MEMTAP_AGENT_H

#include <stddef.h>

#include "agent/follow.h"

struct trace_config;

struct agent_config {
	struct selector *sels;
	size_t nsels;
	double poll;		/* --poll seconds between looks at /proc */
	double interval;	/* -i seconds: push period, growth and suspects' step */
	unsigned max_targets;	/* --max-targets */
	unsigned top;		/* --top: stack series per selector */
	const char *metrics;	/* --metrics [HOST:]PORT, or NULL */
	const char *push_url;	/* --push URL, or NULL */
	const char *service_name;	/* --service-name, or NULL: each selector's */
	const char **push_labels;	/* --push-label NAME=VALUE: name, value, ..., NULL */
	int push_pid;		/* --push-pid: a profile per process, label pid */
	const char *spool_dir;	/* --spool DIR, or NULL */
	double spool_max;	/* --spool-max seconds */
	const char *tenant;	/* --tenant: X-Scope-OrgID, or NULL */
	double push_drain;	/* --push-drain: seconds to send what waits at exit */
};

/*
 * Before tracer_init(): the listener and the push sender are started
 * (a one-line error and exit on failure: a port in use, a bad URL), and
 * tc gets the agent's hooks.
 */
void agent_setup(const struct agent_config *c, struct trace_config *tc);

/*
 * After tracer_init(): follow, serve, push, until a signal (or -d); the
 * exit status.  At the end: every target detached, then the last
 * interval (cut short) served and pushed like the others, then at most
 * push_drain seconds to send what waits, less when SIGTERM, SIGINT or
 * SIGQUIT comes again (agent_run() wraps cli's handlers of those:
 * a second one, or any after the detach, ends that time at once).
 */
int agent_run(void);

/* SIGHUP (async-signal-safe): look for processes again at once. */
void agent_request_reload(void);

#endif /* MEMTAP_AGENT_H */

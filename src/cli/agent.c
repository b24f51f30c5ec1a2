/*
 * agent.c - memtap agent's command line (cli/agent.h): the options it
 * adds to memtap's own, the ones it refuses, its defaults, and its run.
 * main() parses the common options with the agent's added (main.c).
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/push.h"
#include "cli/agent.h"
#include "cli/options.h"
#include "record/event.h"
#include "util/error.h"
#include "util/optparse.h"
#include "util/xmalloc.h"

enum {
	OPT_COMM = 512,
	OPT_EXE,
	OPT_CGROUP,
	OPT_POLL,
	OPT_MAX_TARGETS,
	OPT_METRICS,
	OPT_PUSH,
	OPT_SERVICE_NAME,
	OPT_PUSH_LABEL,
	OPT_PUSH_PID,
	OPT_PUSH_DRAIN,
	OPT_SPOOL,
	OPT_SPOOL_MAX,
	OPT_TENANT,
};

static const struct option agent_opts[] = {
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "exe", required_argument, NULL, OPT_EXE },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "poll", required_argument, NULL, OPT_POLL },
	{ "max-targets", required_argument, NULL, OPT_MAX_TARGETS },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "service-name", required_argument, NULL, OPT_SERVICE_NAME },
	{ "push-label", required_argument, NULL, OPT_PUSH_LABEL },
	{ "push-pid", no_argument, NULL, OPT_PUSH_PID },
	{ "push-drain", required_argument, NULL, OPT_PUSH_DRAIN },
	{ "spool", required_argument, NULL, OPT_SPOOL },
	{ "spool-max", required_argument, NULL, OPT_SPOOL_MAX },
	{ "tenant", required_argument, NULL, OPT_TENANT },
};
#define NAGENT_OPTS (sizeof(agent_opts) / sizeof(agent_opts[0]))

static struct agent_config ac = {
	.poll = 2,
	.interval = 10,
	.max_targets = 64,
	.top = 10,
	.spool_max = 3600,
	.push_drain = PUSH_EXIT_DRAIN,
};
static size_t nlabels;
static int push_drain_given;

#define AGENT_MAX_STACKS 50000

void agent_usage(void)
{
	printf("Usage: memtap agent [OPTIONS] SELECTOR...\n"
	       "Follow the processes that SELECTORs match, across restarts; serve what\n"
	       "they hold to Prometheus and push profiles to Pyroscope.\n"
	       "\n"
	       "Selectors (one or more, any mix):\n"
	       "  -p, --pid=PID[,PID...]  that process (not one given its number later)\n"
	       "      --comm=NAME         processes named NAME (/proc/PID/comm)\n"
	       "      --exe=PATH          processes running the program PATH\n"
	       "      --cgroup=PATH       processes in cgroup PATH or below it\n"
	       "                          (/system.slice/NAME.service)\n"
	       "Agent options:\n"
	       "  -i, --interval=SECONDS  push period; growth and leak suspects are\n"
	       "                          measured over it (default 10)\n"
	       "      --max-targets=N     follow at most N processes at once (default 64)\n"
	       "      --metrics=[HOST:]PORT\n"
	       "                          serve /metrics (Prometheus) on HOST (default\n"
	       "                          127.0.0.1), refreshed every second\n"
	       "      --poll=SECONDS      look for new processes every SECONDS (default 2)\n"
	       "      --push=URL          push a pprof profile every interval to Pyroscope\n"
	       "                          at URL (http://HOST:PORT), and the last one,\n"
	       "                          cut short, at exit\n"
	       "      --push-drain=SECONDS\n"
	       "                          at exit, send what waits for at most SECONDS\n"
	       "                          (default 5; a second SIGTERM ends it), then\n"
	       "                          spool it (--spool) or drop it\n"
	       "      --push-label=NAME=VALUE\n"
	       "                          a label of every pushed profile; repeatable\n"
	       "      --push-pid          a profile per process, with a label pid\n"
	       "      --service-name=NAME the pushed profiles' service_name (default:\n"
	       "                          the selector's name, program or unit)\n"
	       "      --spool=DIR         keep the profiles not sent yet in DIR\n"
	       "      --spool-max=SECONDS drop profiles older than SECONDS (default 3600)\n"
	       "      --tenant=ID         send X-Scope-OrgID: ID\n"
	       "      --top=N             stack series per selector (default 10, at most\n"
	       "                          100)\n"
	       "The tracing options of memtap (-e, --overhead, --sample, --min-size,\n"
	       "--max-size, --probe, --unwind, -d, -q, -v...) apply; its output options do\n"
	       "not.  See man memtap, RUNNING AS AN AGENT.\n");
}

struct option *agent_longopts(const struct option *base)
{
	static struct option all[128];
	size_t n = 0;

	while (base[n].name)
		n++;
	if (n + NAGENT_OPTS + 1 > sizeof(all) / sizeof(all[0]))
		error_msg_and_die("too many options for memtap agent's table");
	memcpy(all, base, n * sizeof(*all));
	memcpy(all + n, agent_opts, sizeof(agent_opts));
	return all;
}

void agent_defaults(void)
{
	opt.events = EV_SYSCALLS | EV_ALLOC;
	opt.interval = 10;
	opt.leaks = 1;
	opt.follow_forks = 1;
}

static void add_selector(enum sel_kind kind, const char *value)
{
	char err[512];

	ac.sels = xrealloc(ac.sels, (ac.nsels + 1) * sizeof(*ac.sels));
	if (selector_parse(&ac.sels[ac.nsels], kind, value, err, sizeof(err)) < 0)
		usage_error("%s", err);
	ac.nsels++;
}

static double seconds(const char *arg, const char *name, double lo)
{
	double v;

	if (parse_decimal(arg, &v) < 0 || !(v >= lo) || v > 1e8)
		usage_error("invalid value '%s' for %s (want decimal seconds >= %g)", arg, name, lo);
	return v;
}

int agent_option(int c, const char *arg)
{
	const char *eq;

	switch (c) {
	case OPT_COMM:
		add_selector(SEL_COMM, arg);
		return 1;
	case OPT_EXE:
		add_selector(SEL_EXE, arg);
		return 1;
	case OPT_CGROUP:
		add_selector(SEL_CGROUP, arg);
		return 1;
	case OPT_POLL:
		ac.poll = seconds(arg, "--poll", 0.1);
		return 1;
	case OPT_MAX_TARGETS:
		ac.max_targets = (unsigned)xparse_whole(arg, "--max-targets", 1, 100000);
		return 1;
	case OPT_METRICS:
		ac.metrics = arg;
		return 1;
	case OPT_PUSH:
		ac.push_url = arg;
		return 1;
	case OPT_SERVICE_NAME:
		if (!*arg || strlen(arg) > 200)
			usage_error("invalid value '%s' for --service-name (1 to 200 bytes)", arg);
		ac.service_name = arg;
		return 1;
	case OPT_PUSH_LABEL:
		eq = strchr(arg, '=');
		if (!eq || eq == arg || strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					       "0123456789_") != (size_t)(eq - arg) ||
		    (arg[0] >= '0' && arg[0] <= '9') || nlabels >= 24)
			usage_error("invalid value '%s' for --push-label (want NAME=VALUE, NAME of "
				    "letters, digits and _; at most 24 labels)", arg);
		ac.push_labels = xrealloc(ac.push_labels, (2 * nlabels + 3) * sizeof(char *));
		ac.push_labels[2 * nlabels] = xasprintf("%.*s", (int)(eq - arg), arg);
		ac.push_labels[2 * nlabels + 1] = eq + 1;
		ac.push_labels[2 * ++nlabels] = NULL;
		return 1;
	case OPT_PUSH_PID:
		ac.push_pid = 1;
		return 1;
	case OPT_PUSH_DRAIN:
		ac.push_drain = seconds(arg, "--push-drain", 0);
		push_drain_given = 1;
		return 1;
	case OPT_SPOOL:
		ac.spool_dir = arg;
		return 1;
	case OPT_SPOOL_MAX:
		ac.spool_max = seconds(arg, "--spool-max", 1);
		return 1;
	case OPT_TENANT:
		ac.tenant = arg;
		return 1;
	}
	return 0;
}

void agent_check(int argc, char **argv, int optind_)
{
	if (optind_ < argc)
		usage_error("memtap agent follows processes: it runs no command ('%s')",
			    argv[optind_]);
	for (size_t i = 0; i < opt.npids; i++) {
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", (int)opt.pids[i]);
		add_selector(SEL_PID, pid);
	}
	if (!ac.nsels)
		usage_error("memtap agent needs a selector: -p PID, --comm NAME, --exe PATH or "
			    "--cgroup PATH");
	if (opt.output || opt.record || opt.at_peak || opt.trace || opt.format >= 0)
		usage_error("memtap agent serves and pushes what it records: -o, -F, --record, "
			    "--at-peak and --trace are not its options");
	if (opt.syscalls == SYSCALLS_SECCOMP)
		usage_error("--syscalls=seccomp cannot be used with memtap agent: a seccomp "
			    "filter cannot be removed from a running process");
	if (opt.top > 100)
		usage_error("invalid value %d for --top with memtap agent (at most 100)", opt.top);
	if ((ac.service_name || nlabels || ac.push_pid || ac.spool_dir || ac.tenant ||
	     push_drain_given) && !ac.push_url)
		usage_error("--service-name, --push-label, --push-pid, --push-drain, --spool and "
			    "--tenant go with --push");
	if (!ac.metrics && !ac.push_url)
		warn_msg("neither --metrics nor --push: memtap agent records, but nothing "
			 "reads it (-v says what it follows)");
	/* sampled at a mean that keeps the records within 1% of the targets' CPU */
	if (!opt.overhead && !opt.exact && !(opt.sample_given && !opt.sample) &&
	    (opt.events & EV_ALLOC) && opt.probes != PROBES_INT3)
		opt.overhead = 1;
	/* days of new stacks: at most this many, then [other] */
	if (!opt.max_stacks)
		opt.max_stacks = AGENT_MAX_STACKS;
	ac.interval = opt.interval;
	ac.top = (unsigned)opt.top;
}

void agent_cli_setup(struct trace_config *tc)
{
	agent_setup(&ac, tc);
}

/*
 * main.c - memtap's command line: options, launching or attaching,
 * signals, and the report at the end.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/time.h>

#include "arch/arch.h"
#include "cli/agent.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/sampling.h"
#include "linux/features.h"
#include "linux/tfile.h"
#include "util/error.h"
#include "trace/memtap.h"
#include "util/optparse.h"
#include "util/outfile.h"
#include "report/output.h"
#include "stack/stacks.h"
#include "stack/unwind/unwind.h"
#include "probe/probes.h"
#include "trace/tracer.h"
#include "util/xmalloc.h"
#include "agent/agent.h"

struct options opt;
static FILE *out;		/* -o's file or stdout */
static struct trace_config trace_config;	/* the tracer's part of opt */
static uint64_t sample_mean;	/* allocator sampling (sampling.c), 0: every call */
static int agent;		/* memtap agent */

static void parse_pids(const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;

		if (parse_whole(tok, 1, 0x3fffffff, &v) < 0)
			usage_error("invalid PID '%s' in -p (want a decimal process id)", tok);
		for (size_t i = 0; i < opt.npids; i++)
			if (opt.pids[i] == (pid_t)v)
				usage_error("PID %ld given twice in -p", v);
		opt.pids = xrealloc(opt.pids, (opt.npids + 1) * sizeof(*opt.pids));
		opt.pids[opt.npids++] = (pid_t)v;
	}
	if (!opt.npids)
		usage_error("-p needs a PID");
	free(copy);
}

static void parse_events(const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL;

	opt.events = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int found = 0;

		if (!strcmp(tok, "syscalls")) {
			opt.events |= EV_SYSCALLS;
			continue;
		}
		if (!strcmp(tok, "alloc")) {
			opt.events |= EV_ALLOC;
			continue;
		}
		if (!strcmp(tok, "all")) {
			opt.events |= EV_SYSCALLS | EV_ALLOC;
			continue;
		}
		for (int k = 0; k < EV_NKINDS; k++)
			if (!strcmp(tok, event_kind_names[k])) {
				opt.events |= EV_BIT(k);
				found = 1;
			}
		if (!found)
			usage_error("unknown event '%s' in -e (known: brk, mmap, munmap, mremap, "
				    "malloc, calloc, realloc, reallocarray, free, posix_memalign, "
				    "aligned_alloc, memalign, valloc, pvalloc, probe, faults, "
				    "minor-faults, major-faults, mprotect, madvise, and the groups "
				    "syscalls, alloc, all)",
				    tok);
	}
	if (!opt.events)
		usage_error("-e needs at least one event");
	free(copy);
}

/* SIGALRM is caught and means nothing: memtap arms no alarm. */
static void on_signal(int sig)
{
	if (agent && sig == SIGHUP)
		agent_request_reload();
	else if (sig != SIGALRM)
		tracer_request_stop(sig);
}

static void setup_signals(int launch)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: interrupt waitpid */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	if (launch) {
		/* The terminal sends these to the command too: let it decide. */
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
	} else {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGQUIT, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
}

static void die_detach(void)
{
	tracer_detach_all();
}

/* The sink's part of the options (record/sink.h). */
static void sink_init_from_opt(void)
{
	struct sink_config c = {
		.events = opt.events,
		.min_size = opt.min_size,
		.max_size = opt.max_size,
		.leaks = opt.leaks,
		.trace = opt.trace,
		.unwind = opt.unwind,
		.max_depth = opt.max_depth,
		.max_stacks = opt.max_stacks ? opt.max_stacks : STACK_TABLE_DEFAULT_STACKS,
		.stack_size = opt.stack_size,
		.sample_mean = sample_mean,
	};

	sink_init(&c);
}

/* MEMTAP_MAX_INTERVALS, for the tests (memtap agent sets its own); 0: every one. */
static size_t max_intervals_env(void)
{
	const char *s = getenv("MEMTAP_MAX_INTERVALS");

	return s && *s ? (size_t)xparse_whole(s, "MEMTAP_MAX_INTERVALS", 0, 1000000000) : 0;
}

/* Is there a --probe without size=?  Its calls weigh nothing in bytes. */
static int unsized_probes(void)
{
	for (size_t i = 0; i < probes_count(); i++) {
		const struct probe *pr = probes_get(i);

		if (pr->role == PR_USER && pr->size_arg < 0)
			return 1;
	}
	return 0;
}

/* The reports' part of the options (record/report.h); out is open. */
static void report_init_from_opt(void)
{
	struct report_config c = {
		.out = out,
		.output = opt.output,
		.record = opt.record,
		.format = opt.format,
		.title = opt.title,
		.inverted = opt.inverted,
		.no_demangle = opt.no_demangle,
		.top = opt.top,
		.lines = opt.lines,
		.weight = opt.weight,
		.net = opt.net,
		.leaks = opt.leaks,
		.min_age = opt.min_age,
		.interval = opt.interval,
		.max_intervals = max_intervals_env(),
		.unsized_probes = unsized_probes(),
		.at_peak = opt.at_peak,
		.at_peak_step = opt.at_peak_step,
		.at_peak_pct = opt.at_peak_pct,
	};

	report_init(&c);
}

enum {
	OPT_MIN_SIZE = 256,
	OPT_PROBE,
	OPT_SYMBOL_PREFIX,
	OPT_SYSCALLS,
	OPT_TRACE,
	OPT_UNWIND,
	OPT_MAX_DEPTH,
	OPT_MAX_STACKS,
	OPT_STACK_SIZE,
	OPT_LINES,
	OPT_NO_DEMANGLE,
	OPT_TOP,
	OPT_WEIGHT,
	OPT_TITLE,
	OPT_INVERTED,
	OPT_MAX_SIZE,
	OPT_NET,
	OPT_LEAKS,
	OPT_MIN_AGE,
	OPT_RECORD,
	OPT_FAULT_PERIOD,
	OPT_PROBES,
	OPT_EXACT,
	OPT_SAMPLE,
	OPT_OVERHEAD,
	OPT_AT_PEAK,
	OPT_AT_PEAK_STEP,
	OPT_TRUST_FILES,
};

/* --at-peak-step: SIZE, or N% of the last peak written. */
static void parse_at_peak_step(const char *arg)
{
	size_t n = strlen(arg);
	char num[64];

	opt.at_peak_step_given = 1;
	opt.at_peak_step = 0;
	opt.at_peak_pct = 0;
	if (n > 1 && n <= sizeof(num) && arg[n - 1] == '%') {
		memcpy(num, arg, n - 1);
		num[n - 1] = '\0';
		if (parse_decimal(num, &opt.at_peak_pct) == 0 && opt.at_peak_pct >= 0 &&
		    opt.at_peak_pct <= 1e6)
			return;
	} else if (parse_size(arg, &opt.at_peak_step) == 0) {
		return;
	}
	usage_error("invalid step '%s' for --at-peak-step (want a size, e.g. 1M, or a "
		    "percent, e.g. 10%%)", arg);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "at-peak", required_argument, NULL, OPT_AT_PEAK },
		{ "at-peak-step", required_argument, NULL, OPT_AT_PEAK_STEP },
		{ "duration", required_argument, NULL, 'd' },
		{ "events", required_argument, NULL, 'e' },
		{ "exact", no_argument, NULL, OPT_EXACT },
		{ "fault-period", required_argument, NULL, OPT_FAULT_PERIOD },
		{ "follow-forks", no_argument, NULL, 'f' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "interval", required_argument, NULL, 'i' },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "leaks", no_argument, NULL, OPT_LEAKS },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "min-age", required_argument, NULL, OPT_MIN_AGE },
		{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
		{ "net", no_argument, NULL, OPT_NET },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "overhead", required_argument, NULL, OPT_OVERHEAD },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "probe", required_argument, NULL, OPT_PROBE },
		{ "probes", required_argument, NULL, OPT_PROBES },
		{ "quiet", no_argument, NULL, 'q' },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "symbol-prefix", required_argument, NULL, OPT_SYMBOL_PREFIX },
		{ "syscalls", required_argument, NULL, OPT_SYSCALLS },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "trust-files", no_argument, NULL, OPT_TRUST_FILES },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct option *opts = longopts;
	int c, status, nprobes = 0;
	struct outfile *output_file = NULL;
	enum syscalls_mode mode;
	int exec_stop;

	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	opt.events = EV_SYSCALLS;
	opt.unwind = UNWIND_DEFAULT;
	opt.max_depth = 64;
	opt.stack_size = STACK_SNAPSHOT_DEFAULT;
	opt.top = 10;
	opt.format = -1;
	opt.at_peak_pct = 10;
	if (argc > 1 && !strcmp(argv[1], "agent")) {
		agent = 1;
		argc--;
		argv++;
		agent_defaults();
		opts = agent_longopts(longopts);
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:d:e:fF:hi:o:p:qvV", opts, NULL)) != -1) {
		switch (c) {
		case OPT_AT_PEAK:
			opt.at_peak = optarg;
			break;
		case OPT_AT_PEAK_STEP:
			parse_at_peak_step(optarg);
			break;
		case 'd':
			if (parse_decimal(optarg, &opt.duration) < 0 || !(opt.duration > 0) ||
			    opt.duration > 1e8)
				usage_error("invalid duration '%s' for -d (want decimal seconds > 0)",
					    optarg);
			break;
		case 'e':
			parse_events(optarg);
			break;
		case 'f':
			opt.follow_forks = 1;
			break;
		case OPT_FAULT_PERIOD:
			opt.fault_period = (uint64_t)xparse_whole(optarg, "--fault-period", 1,
								  1000000000);
			break;
		case 'F':
			opt.format = output_format_parse(optarg);
			if (opt.format < 0)
				usage_error("invalid format '%s' for -F (want text, folded, svg, pprof, "
					    "json or html)", optarg);
			break;
		case 'h':
			if (agent)
				agent_usage();
			else
				usage();
			return 0;
		case 'i':
			if (parse_decimal(optarg, &opt.interval) < 0 || !(opt.interval >= 0.1) ||
			    opt.interval > 1e8)
				usage_error("invalid interval '%s' for -i (want decimal seconds >= 0.1)",
					    optarg);
			break;
		case OPT_MAX_SIZE:
			if (parse_size(optarg, &opt.max_size) < 0 || !opt.max_size)
				usage_error("invalid size '%s' for --max-size (e.g. 1M, 2G)", optarg);
			break;
		case OPT_NET:
			opt.net = 1;
			break;
		case OPT_LEAKS:
			opt.leaks = 1;
			break;
		case OPT_MIN_AGE:
			if (parse_decimal(optarg, &opt.min_age) < 0 || opt.min_age < 0 ||
			    opt.min_age > 1e9)
				usage_error("invalid age '%s' for --min-age (want decimal seconds)",
					    optarg);
			break;
		case OPT_INVERTED:
			opt.inverted = 1;
			break;
		case OPT_LINES:
			opt.lines = 1;
			break;
		case OPT_MAX_DEPTH:
			opt.max_depth = (int)xparse_whole(optarg, "--max-depth", 1, UNWIND_MAX_DEPTH);
			break;
		case OPT_MAX_STACKS:
			opt.max_stacks = (uint32_t)xparse_whole(optarg, "--max-stacks", 1,
								 1000000000);
			break;
		case OPT_NO_DEMANGLE:
			opt.no_demangle = 1;
			break;
		case OPT_STACK_SIZE: {
			uint64_t v;

			if (parse_size(optarg, &v) < 0 || v < 256 || v > 64 * 1024 * 1024)
				usage_error("invalid size '%s' for --stack-size (from 256 to 64M)",
					    optarg);
			opt.stack_size = (size_t)v;
			trace_config.fault_stack = (size_t)v;
			break;
		}
		case OPT_TITLE:
			opt.title = optarg;
			break;
		case OPT_TOP:
			opt.top = (int)xparse_whole(optarg, "--top", 1, 1000000);
			break;
		case OPT_UNWIND: {
			int k = !strcmp(optarg, "dwarf") ? UNWIND_LIBDW :
				!strcmp(optarg, "libunwind") ? UNWIND_DWARF :
				!strcmp(optarg, "fp") ? UNWIND_FP :
				!strcmp(optarg, "none") ? UNWIND_NONE : -1;

			if (k < 0)
				usage_error("invalid value '%s' for --unwind (want dwarf, libunwind, "
					    "fp or none)", optarg);
			opt.unwind = k;
			break;
		}
		case OPT_WEIGHT:
			opt.weight = weight_parse(optarg);
			if (opt.weight < 0)
				usage_error("invalid value '%s' for --weight (want bytes, count, peak or "
					    "released)", optarg);
			break;
		case OPT_MIN_SIZE:
			if (parse_size(optarg, &opt.min_size) < 0)
				usage_error("invalid size '%s' for --min-size (e.g. 4096, 64K, 128M, 1G)",
					    optarg);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case 'p':
			parse_pids(optarg);
			break;
		case OPT_PROBE:
			if (probes_add_user(optarg) < 0)
				usage_error("invalid probe '%s' (want SYMBOL[@OBJECT][:size=argN], "
					    "N from 0 to 5)", optarg);
			nprobes++;
			break;
		case OPT_PROBES:
			if (!strcmp(optarg, "detour"))
				opt.probes = PROBES_DETOUR;
			else if (!strcmp(optarg, "int3"))
				opt.probes = PROBES_INT3;
			else
				usage_error("invalid value '%s' for --probes (want detour or int3)",
					    optarg);
			break;
		case OPT_EXACT:
			opt.exact = 1;
			break;
		case OPT_SAMPLE:
			sampling_parse_sample(optarg);
			break;
		case OPT_OVERHEAD:
			sampling_parse_overhead(optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_RECORD:
			opt.record = optarg;
			break;
		case OPT_SYMBOL_PREFIX:
			opt.symbol_prefix = optarg;
			break;
		case OPT_SYSCALLS:
			if (!strcmp(optarg, "seccomp"))
				opt.syscalls = SYSCALLS_SECCOMP;
			else if (!strcmp(optarg, "ptrace"))
				opt.syscalls = SYSCALLS_PTRACE;
			else if (!strcmp(optarg, "breakpoints"))
				opt.syscalls = SYSCALLS_BREAKPOINTS;
			else
				usage_error("invalid value '%s' for --syscalls (want seccomp, "
					    "breakpoints or ptrace)", optarg);
			break;
		case OPT_TRACE:
			opt.trace = 1;
			break;
		case OPT_TRUST_FILES:
			tfile_trust_owner(1);
			break;
		case 'v':
			verbose++;
			break;
		case 'V':
			printf("memtap %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (agent && agent_option(c, optarg))
				break;
			if (optopt && optopt < 256)
				usage_error("invalid option '-%c'", optopt);
			usage_error("unrecognized option '%s'", argv[optind - 1]);
		}
	}
	if (agent)
		agent_check(argc, argv, optind);
	else if (optind < argc)
		opt.argv = argv + optind;
	if (opt.npids && opt.argv)
		usage_error("give either -p PID or a command, not both");
	if (!opt.npids && !opt.argv && !agent)
		usage_error("give -p PID or a command to run (memtap -- COMMAND)");
	if (opt.npids && !agent && opt.syscalls == SYSCALLS_SECCOMP)
		usage_error("--syscalls=seccomp cannot be used with -p: a seccomp filter cannot be "
			    "removed from a running process, which would be left with failing "
			    "memory syscalls after memtap detaches; use --syscalls=breakpoints "
			    "(the default) or --syscalls=ptrace");
	if (nprobes)
		opt.events |= EV_BIT(EV_PROBE);
	else if (opt.events & EV_BIT(EV_PROBE))
		usage_error("-e probe needs at least one --probe SYMBOL[@OBJECT][:size=argN]");

	if (opt.format < 0)
		opt.format = opt.output && output_format_from_path(opt.output) >= 0 ?
			output_format_from_path(opt.output) : FORMAT_TEXT;
	if (opt.format == FORMAT_PPROF && !opt.output && isatty(STDOUT_FILENO))
		usage_error("-F pprof writes gzip data: give -o FILE.pb.gz or redirect stdout");
	if (opt.max_size && opt.max_size < opt.min_size)
		usage_error("--max-size is below --min-size");
	if (opt.interval > 0 && opt.format == FORMAT_HTML && opt.output && strstr(opt.output, "%n"))
		usage_error("-i with -F html writes one page of every interval at the end: -o FILE "
			    "without %%n");
	if (opt.interval > 0 && opt.format != FORMAT_TEXT && opt.format != FORMAT_FOLDED &&
	    opt.format != FORMAT_HTML && !(opt.output && strstr(opt.output, "%n")))
		usage_error("-i with -F %s needs -o FILE with %%n (one file per interval)",
			    output_format_names[opt.format]);
	if (view_conflict(opt.weight, opt.net, opt.leaks))
		usage_error("%s", view_conflict(opt.weight, opt.net, opt.leaks));
	if (opt.weight == WEIGHT_PEAK && opt.interval > 0 && !opt.leaks)
		usage_error("--weight=peak with -i needs --leaks");
	if (opt.at_peak && opt.interval > 0 && !opt.leaks)
		usage_error("--at-peak with -i needs --leaks");
	if (opt.at_peak_step_given && !opt.at_peak)
		usage_error("--at-peak-step goes with --at-peak");
	if (opt.min_age > 0 && !opt.leaks)
		usage_error("--min-age goes with --leaks");
	if (opt.fault_period && !(opt.events & EV_FAULT_KINDS))
		usage_error("--fault-period goes with -e faults, minor-faults or major-faults");
	if (opt.fault_period > 1 && opt.exact)
		usage_error("--fault-period and --exact exclude each other");
	if (opt.leaks && opt.unwind == UNWIND_NONE)
		usage_error("--leaks needs stacks: not with --unwind=none");
	if (!unwind_kind_available(opt.unwind))
		usage_error("--unwind=%s is not available in this build", unwind_kind_name(opt.unwind));
	sample_mean = sampling_mean();
	sink_init_from_opt();
	if (opt.weight == WEIGHT_PEAK && !sink_held_known())
		usage_error("--weight=peak needs what is held: add --leaks");
	if (opt.at_peak && !sink_held_known())
		usage_error("--at-peak needs what is held: add --leaks");

	/* a build for no CPU (configure --with-arch=none) traces nothing */
	if (arch_supported() < 0)
		error_msg_and_die("tracing: not supported on this CPU (memtap built for arch %s)",
				  ARCH_NAME);

	/*
	 * Outputs are written beside their path and renamed over it when
	 * complete: found unwritable now, left alone if attaching fails.
	 */
	out = stdout;
	if (opt.output && strstr(opt.output, "%n") && opt.interval > 0) {
		/* numbered files are opened per interval; check the folder now */
		if (outfile_check(opt.output) < 0)
			error_msg_and_die("cannot open output file '%s': %s", opt.output,
					  strerror(errno));
	} else if (opt.output) {
		output_file = outfile_open(opt.output);
		if (!output_file)
			error_msg_and_die("cannot open output file '%s': %s", opt.output,
					  strerror(errno));
		out = outfile_stream(output_file);
	}

	if (opt.record && outfile_check(opt.record) < 0)
		error_msg_and_die("cannot open recording file '%s': %s", opt.record,
				  strerror(errno));
	if (opt.at_peak && outfile_check(opt.at_peak) < 0)
		error_msg_and_die("cannot open peak file '%s': %s", opt.at_peak, strerror(errno));
	output_set_path(opt.output);

	features_probe();
	if (verbose)
		features_print(stderr);
	if (!feature_has(F_SEIZE))
		error_msg_and_die("this kernel has no PTRACE_SEIZE, PTRACE_INTERRUPT and "
				  "PTRACE_LISTEN (Linux 3.4 and later have them): memtap cannot trace");
	mode = opt.syscalls;
	if (mode == SYSCALLS_AUTO)
		mode = opt.argv ? SYSCALLS_SECCOMP : SYSCALLS_BREAKPOINTS;
	/*
	 * In-target probes and faults read their rings at a command's
	 * execve: a filter that stops there (or PTRACE_SYSCALL if asked).
	 */
	exec_stop = ((opt.events & EV_FAULT_KINDS) &&
		     (mode == SYSCALLS_SECCOMP || mode == SYSCALLS_PTRACE)) ||
		    (mode == SYSCALLS_SECCOMP && opt.argv && (opt.events & EV_ALLOC) &&
		     opt.probes != PROBES_INT3 && seccomp_filter_available() &&
		     feature_has(F_EXITKILL));
	if (!(opt.events & EV_SYSCALL_STOPS) && mode != SYSCALLS_BREAKPOINTS && !exec_stop)
		mode = SYSCALLS_BREAKPOINTS;	/* nothing to stop syscalls for */
	if (mode == SYSCALLS_SECCOMP && opt.syscalls == SYSCALLS_AUTO &&
	    !(opt.events & EV_SYSCALL_STOPS) &&
	    (!seccomp_filter_available() || !feature_has(F_EXITKILL)))
		mode = SYSCALLS_BREAKPOINTS;	/* faults alone: not every syscall for execve */
	if (mode == SYSCALLS_SECCOMP && !seccomp_filter_available()) {
		if (opt.syscalls == SYSCALLS_SECCOMP)
			error_msg_and_die("--syscalls=seccomp: this kernel has no seccomp filter "
					  "support (CONFIG_SECCOMP_FILTER)");
		warn_msg("no seccomp filter support in this kernel: using PTRACE_SYSCALL, "
			 "which stops at every syscall");
		mode = SYSCALLS_PTRACE;
	}
	if (mode == SYSCALLS_SECCOMP && !feature_has(F_EXITKILL)) {
		/* killed, memtap would leave the command a filter and no tracer */
		if (opt.syscalls == SYSCALLS_SECCOMP)
			error_msg_and_die("--syscalls=seccomp: this kernel has no PTRACE_O_EXITKILL "
					  "(Linux 3.8): the command would keep memtap's filter, "
					  "and get ENOSYS, should memtap be killed");
		warn_msg("no PTRACE_O_EXITKILL in this kernel (Linux 3.8): using PTRACE_SYSCALL, "
			 "which stops at every syscall, not a filter the command would keep");
		mode = SYSCALLS_PTRACE;
	}
	trace_config = (struct trace_config){
		.events = opt.events,
		.syscalls = mode,
		.syscalls_given = opt.syscalls != SYSCALLS_AUTO,
		.follow_forks = opt.follow_forks,
		.npids = agent ? SIZE_MAX : opt.npids,
		.symbol_prefix = opt.symbol_prefix,
		.duration = opt.duration,
		.interval = opt.interval,
		.output = opt.output,
		.out = out,
		.trace = opt.trace,
		.fault_period = opt.fault_period ? opt.fault_period : 1,
		.fault_stack = trace_config.fault_stack,
		.fault_exact = opt.exact,
		.probes = opt.probes,
		.min_size = opt.min_size,
		.max_size = opt.max_size,
		.sample_mean = sample_mean,
		.overhead = opt.overhead,
		.leaks = opt.leaks,
	};
	if (agent)
		agent_cli_setup(&trace_config);
	tracer_init(&trace_config);
	report_init_from_opt();	/* after the probes are known */
	setup_signals(opt.argv != NULL);
	die_hook = die_detach;

	if (agent) {
		status = agent_run();
		die_hook = NULL;
		timers_stop();
		sink_release();
		return status;
	}
	if (opt.argv) {
		tracer_launch(opt.argv);
	} else {
		for (size_t i = 0; i < opt.npids; i++)
			tracer_attach(opt.pids[i]);
	}
	if (opt.trace)
		report_trace_header();

	status = tracer_run();
	die_hook = NULL;
	timers_stop();
	if (sink_recording())
		timers_final_report();
	if (verbose && opt.unwind != UNWIND_NONE)
		sink_print_costs(stops.code);
	sink_release();
	/* a failure exits 1 at once; an output gone already: -o is left as it was */
	if (output_file)
		output_commit(output_file);
	else if (!output_gone() && fflush(out) != 0)
		output_fail(out, NULL, errno);
	return output_gone() ? EXIT_RUNTIME : status;
}

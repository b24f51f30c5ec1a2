/*
 * options.h - memtap's parsed command line (main.c).  cli/ alone reads
 * it: it hands each layer its part at init (struct trace_config for
 * trace/, ...).
 */
#ifndef MEMTAP_OPTIONS_H
#define MEMTAP_OPTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "report/output.h"
#include "trace/tracer.h"

struct options {
	pid_t *pids;		/* -p, npids entries */
	size_t npids;
	char **argv;		/* the command after --, NULL-terminated */
	unsigned events;	/* EV_BIT() set of -e */
	enum syscalls_mode syscalls;
	uint64_t min_size;	/* --min-size: |weight| below this is dropped */
	double duration;	/* -d seconds, 0 = until the end */
	const char *output;	/* -o path or NULL for stdout */
	const char *record;	/* --record: the JSON recording, or NULL */
	int trace;		/* --trace */
	int unwind;		/* enum unwind_kind of --unwind */
	int max_depth;		/* --max-depth */
	uint32_t max_stacks;	/* --max-stacks */
	size_t stack_size;	/* --stack-size: bytes of stack copied */
	int lines;		/* --lines */
	int no_demangle;	/* --no-demangle */
	int top;		/* --top */
	int format;		/* enum out_format of -F */
	int weight;		/* enum weight (output.h) of --weight */
	const char *title;	/* --title */
	int inverted;		/* --inverted */
	double interval;	/* -i seconds, 0 = one report at the end */
	uint64_t max_size;	/* --max-size, 0 = no limit */
	int net;		/* --net: weigh by acquired - released */
	int leaks;		/* --leaks: weigh by what is still held */
	double min_age;		/* --min-age seconds, for --leaks */
	int follow_forks;	/* -f: -p follows fork children */
	const char *symbol_prefix;	/* --symbol-prefix: je_, _rjem_... */
	uint64_t fault_period;	/* --fault-period: sample one fault in N */
	int probes;		/* enum probes_mode of --probes */
	int exact;		/* --exact: every allocator call */
	uint64_t sample;	/* --sample: mean bytes between kept calls, 0: every call */
	int sample_given;	/* --sample was given */
	double overhead;	/* --overhead PERCENT, 0: none */
	const char *at_peak;	/* --at-peak: the profile of the last peak, or NULL */
	uint64_t at_peak_step;	/* --at-peak-step SIZE, 0: at_peak_pct */
	double at_peak_pct;	/* --at-peak-step N% (default 10) */
	int at_peak_step_given;	/* --at-peak-step was given */
};

extern struct options opt;

#endif /* MEMTAP_OPTIONS_H */

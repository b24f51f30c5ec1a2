/*
 * report.h - the reports of a run (report.c, profile-build.c): --trace
 * lines, the -i interval reports and the final report, built from the
 * sink's state as a struct profile and written by report/'s writers.
 *
 * What the reports need of the command line is set once by
 * report_init(); what they need of the tracer (its stop counts, how
 * syscalls were caught, probes never found) is passed with each report
 * in a struct run_info: the reports never reach for it.
 */
#ifndef MEMTAP_REPORT_H
#define MEMTAP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/event.h"

struct profile;
struct sink_proc;

/* Stop counts of the tracer, for the report and the I/O test. */
struct stop_counts {
	uint64_t total, seccomp, syscall, signal, event, group, breakpoint;
	uint64_t code;		/* syscalls stopped at for a code mapping only */
	/*
	 * How long threads stayed stopped by memtap: from the waitpid() that
	 * returned the stop to the ptrace request that resumed (or detached)
	 * the thread.  The longest, its thread and what kind of stop it was
	 * ("seccomp", "int3", "interrupt"...; NULL: none timed), and how many
	 * lasted over 1, 10 and 100 ms.
	 */
	uint64_t longest_ns;
	int longest_pid, longest_tid;
	const char *longest_kind;
	uint64_t over_ms[3];
	/* the longest while recording: every probe in, not detaching (-v only) */
	uint64_t longest_rec_ns;
	int longest_rec_tid;
	const char *longest_rec_kind;
};

/* What the tracer knows of the run, for one report. */
struct run_info {
	struct stop_counts stops;
	const char *syscall_source;	/* "seccomp", "ptrace", "breakpoints"... */
	uint64_t fault_period;		/* faults: one sampled in N; 0 = no faults */
	uint64_t sample_lo, sample_hi;	/* allocator calls sampled at means from lo
					   to hi bytes (--overhead); 0: none */
	const char *const *unfound;	/* --probe specs never found, nunfound */
	size_t nunfound;
	const char *const *notes;	/* what the tracer could not see (a
					   sentence each), nnotes */
	size_t nnotes;
};

/* The reports' part of the command line, set once. */
struct report_config {
	FILE *out;		/* the output (-o's file or stdout), opened */
	const char *output;	/* -o path, or NULL; with -i, "%n" numbers the files */
	const char *record;	/* --record: the JSON recording, or NULL */
	int format;		/* enum out_format of -F */
	const char *title;	/* --title */
	int inverted;		/* --inverted */
	int no_demangle;	/* --no-demangle */
	int top;		/* --top */
	int lines;		/* --lines */
	int weight;		/* enum weight (output.h) of --weight */
	int net;		/* --net */
	int leaks;		/* --leaks */
	double min_age;		/* --min-age seconds, for --leaks */
	double interval;	/* -i seconds, 0 = one report at the end */
	size_t max_intervals;	/* -i: intervals the timeline keeps, the last
				   ones (timeline.h); 0: every one */
	int unsized_probes;	/* a --probe without size=: count is the default */
	const char *at_peak;	/* --at-peak: the profile of the last peak, or NULL */
	uint64_t at_peak_step;	/* --at-peak-step SIZE: bytes past the last written */
	double at_peak_pct;	/* --at-peak-step N%: percent of it (when step is 0) */
};

void report_init(const struct report_config *c);
const struct report_config *report_config(void);

/*
 * --trace: the header line, and one line (and the stack) per event,
 * which report_init() has the sink call (sink_set_trace()).
 */
void report_trace_header(void);
void report_trace_event(const struct event *ev, uint32_t stack);

/* The one report at the end (or at -d in launch mode), without -i. */
void report_final(const struct run_info *ri);
/*
 * -i report n (from 1), of the events since the previous one; last: the
 * one at the end.  Written to the output, or to -o's file numbered n
 * (outputs that fail end the session: util/outfile.h).
 */
void report_write_interval(unsigned n, int last, const struct run_info *ri);
/*
 * An interval ends without a report of its own (memtap agent builds
 * its own with profile_build()): the next interval counts from now
 * (sink_proc_mark_interval()).
 */
void report_interval_done(void);

/*
 * --at-peak FILE: is there a peak (aggregate.h: of allocator blocks or
 * of mappings) that exceeds the last one written by more than the step?
 * Cheap: the tracer asks after every batch of events.
 * report_at_peak_write() writes its profile (all stacks, "peak_space"
 * the default value type) in the format of FILE's suffix, folded for
 * any other, replacing FILE whole (util/outfile.h).  A write that fails
 * says so once and ends --at-peak.
 */
int report_at_peak_pending(void);
void report_at_peak_write(const struct run_info *ri);

/* "exited with status 0", "killed by signal 9 (SIGKILL)", ... */
void proc_status_text(const struct sink_proc *p, char *buf, size_t size);
/*
 * The stack that acquired the most bytes so far, as a short "leaf <
 * caller < ..." text for the status line ("" when none).
 */
void report_top_stack(char *buf, size_t size);
/*
 * -i: the stacks that grew most (bytes acquired less released) in the
 * last interval written in which any grew (its number in *interval),
 * at most REPORT_LIVE_TOP, each a line of at
 * most REPORT_LIVE_WIDTH - 1 characters ("   1.0 MiB  malloc  leaf <
 * caller < ..."), ranked; lines point into static storage, valid until
 * the next interval.  Returns how many (0 before the first interval).
 */
#define REPORT_LIVE_TOP 5
#define REPORT_LIVE_WIDTH 256
size_t report_live_top(const char *lines[REPORT_LIVE_TOP], unsigned *interval);

/*
 * profile-build.c: the report model from the aggregates, at report
 * time: of the whole run, with the -i intervals (timeline.h) when there
 * are any; with interval, of the events since the last aggregate_mark().
 */
void profile_build(struct profile *prof, const struct run_info *ri, int interval);
/*
 * --leaks: the event name of held memory, "malloc", or "malloc
 * (inherited)" for what a fork child still holds of its parent's blocks
 * and ranges.  Static storage.
 */
#define HELD_INHERITED_SUFFIX " (inherited)"
const char *held_event_name(unsigned kind, int inherited);
/* The last component of a path ("libc.so.6"), or the path itself. */
const char *path_base_name(const char *path);

#endif /* MEMTAP_REPORT_H */

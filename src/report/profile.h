/*
 * profile.h - the report model: what every output format (folded, SVG
 * flame graph, pprof, JSON) is written from.
 *
 * It is built once, at report time, from the stack table and the
 * symbolizer; writers are pure functions of it (unit tested without
 * ptrace).  Its shape follows pprof's profile.proto so that the pprof
 * writer is a direct encoding: samples point at locations, locations at
 * a mapping and at lines, lines at functions.  Indexes are 0-based into
 * the arrays here (the pprof writer adds 1 to make ids).
 *
 * Ownership: the struct owns every array and string in it;
 * profile_release() frees them all.
 */
#ifndef MEMTAP_PROFILE_H
#define MEMTAP_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct prof_value_type {
	char *type;		/* "alloc_space", "mmap_space", "brk_space", ... */
	char *unit;		/* "bytes" or "count" */
};

struct prof_mapping {
	uint64_t start, limit, offset;	/* runtime range and file offset */
	char *file;		/* path of the mapped file, or "[unknown]" */
	char *build_id;		/* hex, or NULL */
};

struct prof_function {
	char *name;		/* demangled (unless --no-demangle) */
	char *system_name;	/* as in the symbol table */
	char *file;		/* source file, or NULL */
};

struct prof_line {
	size_t function;	/* index into functions */
	int64_t line;		/* 0 when unknown */
};

struct prof_location {
	uint64_t address;	/* runtime address (a pc; return addresses - 1) */
	size_t mapping;		/* index into mappings, or (size_t)-1 */
	size_t nlines;		/* inlined frames: lines[0] innermost */
	struct prof_line *lines;
};

struct prof_sample {
	size_t nlocs;
	size_t *locs;		/* indexes into locations, leaf first */
	int64_t *values;	/* one per value type */
	pid_t pid;
	char *comm;		/* process name, the root frame of folded output */
	char *event;		/* "brk", "mmap", "malloc", ... */
};

/*
 * What one traced process did: the text report's summary and the JSON
 * report's "processes".  events lists the event kinds selected (-e),
 * in the tracer's order, each with its totals.
 */
struct prof_event_totals {
	char *event;
	uint64_t calls, failed, acquired, released;
	uint64_t anon, file;	/* mmap: acquired bytes by mapping kind */
	/* fault kinds: samples (calls is the exact count), lost, throttles */
	int sampled;
	uint64_t samples, lost, throttles;
	/* of calls and acquired, the faults without a sample of their own
	   put on the stack sampled next to them, and their bytes */
	uint64_t neighbour, neighbour_bytes;
	/* with -e mprotect, madvise or faults: VmData change, resident
	   bytes given back (record/event.h) */
	int64_t data;
	uint64_t resident;
	/*
	 * Allocator calls probed by stubs: calls (PROF_COUNTED_CALLS) and
	 * acquired (PROF_COUNTED_BYTES, the bytes the successful calls
	 * asked) are what the stubs counted in the target, exact, where the
	 * stacks are sampled estimates.  0: all from the recorded events.
	 */
	int counted;
};
enum { PROF_COUNTED_CALLS = 1, PROF_COUNTED_BYTES = 2 };

struct prof_process {
	pid_t pid, ppid;
	char *comm;
	char *status;		/* "exited 0", "killed by SIGKILL", "detached", ... */
	int have_vm;		/* the vm_* figures are valid */
	uint64_t vm_size[2], vm_rss[2], vm_data[2];	/* at start, at end (bytes) */
	uint64_t left_size, left_data;	/* memtap's mappings left in it (stubs, ring) */
	size_t nevents;
	struct prof_event_totals *events;
	uint64_t filtered;	/* events left out by --min-size/--max-size */
	uint64_t unknown_frees;	/* frees of blocks not seen allocated */
	/* seen from its start: those were the allocator's own blocks,
	   their frees not among the calls (record/sink-proc.h) */
	int from_start;
	/* frees of addresses freed and not handed out since, the
	   allocator's own (record/freed.h): not among the calls */
	uint64_t refrees;
	uint64_t live_blocks, live_bytes;	/* allocator blocks not freed */
	/* of which a fork child still holds of its parent's (--leaks) */
	uint64_t inherited_blocks, inherited_bytes;
};

/* How the recording was made: the text summary's first line. */
struct prof_run {
	char *syscalls;		/* "seccomp", "ptrace", "breakpoints", "none" */
	uint64_t fault_period;	/* faults: one sampled in N; 0 = no faults */
	uint64_t sample_lo, sample_hi;	/* allocator calls sampled at these means; 0: none */
	uint64_t stops, stops_seccomp, stops_syscall, stops_breakpoint,
		 stops_signal, stops_other;
	/* the longest a thread stayed stopped by memtap (record/report.h's
	   stop_counts), NULL kind: not known; stops over 1, 10, 100 ms */
	uint64_t longest_stop_ns;
	int longest_stop_pid, longest_stop_tid;
	char *longest_stop_kind;
	uint64_t stops_over_ms[3];
	int stacks;		/* stacks were unwound (not --unwind=none) */
	int held;		/* inuse_* values are what was held at the end */
	uint64_t stacks_folded;	/* new stacks counted on [other]: the cap was reached */
	char **unfound;		/* --probe specs never found, nunfound of them */
	size_t nunfound;
	char **notes;		/* what the tracer could not see, a sentence each */
	size_t nnotes;
};

/*
 * The highest bytes held at once in the run (the "peak_space" values
 * are what each stack held then), of allocator blocks (PROF_PEAK_ALLOC)
 * and of mappings (PROF_PEAK_MAPS: brk, mmap, mremap), over every
 * process; bytes 0: none known.
 */
enum { PROF_PEAK_ALLOC, PROF_PEAK_MAPS, PROF_NPEAKS };
extern const char *const prof_peak_names[PROF_NPEAKS];	/* "alloc", "mappings" */

struct prof_peak {
	uint64_t bytes;
	int64_t nanos;		/* since the start of the run */
};

struct profile {
	struct prof_value_type *types;
	size_t ntypes;
	size_t default_type;	/* index of the type outputs show by default */
	struct prof_mapping *mappings;
	size_t nmappings;
	struct prof_function *functions;
	size_t nfunctions;
	struct prof_location *locations;
	size_t nlocations;
	struct prof_sample *samples;
	size_t nsamples;
	struct prof_process *processes;	/* may be empty */
	size_t nprocesses;
	int have_run;		/* run is filled (a recording of a run) */
	struct prof_run run;
	int64_t time_nanos;	/* wall clock at start */
	int64_t duration_nanos;
	/*
	 * -i runs: every interval, in order (struct prof_interval); none
	 * otherwise.  intervals_held: the changes' held figures are known
	 * (--leaks), else they are 0.
	 */
	struct prof_interval *intervals;
	size_t nintervals;
	int intervals_held;
	struct prof_peak peaks[PROF_NPEAKS];
};

/*
 * One stack's figures in one interval: the calls and bytes acquired and
 * released in it, and the bytes it held at its end.  A sample that is
 * not among an interval's changes had no event in it and holds what it
 * held at the end of the previous one (0 before the first).
 */
struct prof_change {
	size_t sample;		/* index into the profile's samples */
	uint64_t calls, acquired, released, held;
};

/* /proc/PID/status of one process at an interval's end (bytes). */
struct prof_vm_point {
	pid_t pid;
	uint64_t rss, size, data;
};

struct prof_interval {
	int64_t end_nanos;	/* since the start of the run */
	int64_t captured;	/* held bytes of every stack at its end (with
				   intervals_held), else acquired - released
				   bytes of the run so far */
	size_t nvm;
	struct prof_vm_point *vm;	/* processes alive at its end */
	size_t nchanges;
	struct prof_change *changes;	/* in order of sample */
};

void profile_release(struct profile *p);
/*
 * Sort an interval's changes by sample and merge those of one sample
 * (calls and bytes summed; held is the sample's, the same in each).
 */
void profile_interval_merge(struct prof_interval *pi);

#endif /* MEMTAP_PROFILE_H */

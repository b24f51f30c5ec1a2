/*
 * output.h - the output writers (folded stacks, SVG flame graph, pprof,
 * JSON), the folded stack set they share, `memtap diff`, and the
 * helpers that build a struct profile (include/profile.h).
 *
 * Every writer is a pure function of (profile, options): it reads the
 * profile, never changes it, writes to f and returns 0, or -1 with errno
 * set (a write error, or EINVAL for a value index out of range).  A
 * writer does not close f and does not fflush it beyond what its
 * encoding needs; the caller checks ferror()/fclose() as usual.
 */
#ifndef MEMTAP_OUTPUT_H
#define MEMTAP_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "report/profile.h"

/* When the event kind ("malloc", "brk", ...) becomes the root frame. */
enum out_event_frame {
	OUT_EVENT_AUTO,		/* only when the samples mix several kinds */
	OUT_EVENT_NEVER,
	OUT_EVENT_ALWAYS,
};

/*
 * Options of the writers.  Zero-initialized options (or o == NULL) are
 * the defaults: value type p->default_type, demangled names, comm root
 * frames, event root frames when kinds are mixed, 1200 pixel wide SVG.
 */
struct output_options {
	/*
	 * Value type: value_index - 1, or 0 for p->default_type.  Folded
	 * and SVG weigh frames by it; pprof and JSON write every type and
	 * name this one as the default.
	 */
	size_t value_index;
	const char *title;	/* SVG title; NULL: "Memory growth" */
	const char *subtitle;	/* SVG second line, or NULL */
	int inverted;		/* SVG: icicle graph, roots at the top */
	double min_width;	/* SVG: omit frames narrower (pixels); 0: 0.1 */
	int width;		/* SVG: image width in pixels; 0: 1200 */
	int no_demangle;	/* frames show system_name, not name */
	int no_comm;		/* no process-name root frame */
	enum out_event_frame event_frame;
	/*
	 * Differential SVG/folded (memtap diff): base_index - 1 is the value
	 * type of the "before" profile; value_index is "after".  0: off.
	 */
	size_t base_index;
	int top;		/* text: stacks per event; 0: 10 */
	/*
	 * SVG: a page-fault graph (write_svg() sets it when every sample
	 * is of a fault kind): the palette and background of Brendan
	 * Gregg's page-fault flame graphs (flamegraph.pl --colors=mem).
	 */
	int faults;
};

/* Writers.  See the file comments of src/out-*.c for each format. */
int write_folded(FILE *f, const struct profile *p, const struct output_options *o);
int write_svg(FILE *f, const struct profile *p, const struct output_options *o);
int write_pprof(FILE *f, const struct profile *p, const struct output_options *o);
int write_json(FILE *f, const struct profile *p, const struct output_options *o);
/*
 * A profile for Grafana Pyroscope's /ingest (format=pprof): gzipped
 * pprof with the sample types inuse_space and alloc_space only (bytes;
 * period type space/bytes; 0 where p has no such type), within
 * Pyroscope's default limits: samples with both values 0 left out, at
 * most PPROF_PYRO_MAX_SAMPLES of them (the heaviest by inuse then alloc;
 * the others summed into one sample whose single frame is "[other]"),
 * stacks cut to PPROF_PYRO_MAX_DEPTH frames (the leaf side kept), no
 * sample labels.  0, or -1 with errno.
 */
enum { PPROF_PYRO_MAX_SAMPLES = 16000, PPROF_PYRO_MAX_DEPTH = 1000 };
int pprof_write_pyroscope(FILE *f, const struct profile *p);
/*
 * The timeline page (out-html.c): one self-contained HTML file, the
 * memory of an -i recording over time, its heaviest stacks, the flame
 * graph of any range of intervals, the leak suspects; without intervals
 * the flame graph of the run and a note saying so.
 */
int write_html(FILE *f, const struct profile *p, const struct output_options *o);
/*
 * The text report (out-text.c): write_text() is the summary of the run
 * and its processes (write_text_summary()) followed, when stacks were
 * unwound, by the heaviest stacks of each event kind
 * (write_text_stacks(), o->top of them).
 */
int write_text(FILE *f, const struct profile *p, const struct output_options *o);
int write_text_summary(FILE *f, const struct profile *p);
int write_text_stacks(FILE *f, const struct profile *p, const struct output_options *o);
/* The frames of location loc, one line each, indented as in the text. */
void text_print_location(FILE *f, const struct profile *p, size_t loc, int mangled);

/*
 * Leak suspects (suspects.c), from the intervals of an -i recording:
 * per sample its held bytes at each interval's end (or, when held
 * memory was not known, its acquired less released bytes so far), the
 * least-squares slope of that series over the interval index, and the
 * rule that tells a leak from a cache that fills and stops and a batch
 * that rises and falls (man memtap, LEAK SUSPECTS):
 *
 *   the slope is above 0; it grew in at least 3 intervals; a line fits
 *   its running maximum (the most held so far) with R^2 >= 0.7 (rising
 *   all along, in steps or not); that maximum's slope over the last half
 *   of the intervals is at least half its slope over all of them (still
 *   rising); and it never gave back more than a quarter of the highest
 *   it held (the largest fall from a high).  late_slope is that last
 *   half's slope.
 *
 * profile_suspects() fills *out (malloc'd, the caller frees) with the
 * samples whose series rose at all, suspects first, each group by
 * slope, and returns their number (0 and *out NULL without intervals).
 * err is the relative uncertainty (one standard deviation) of the slope
 * when allocator calls were sampled (record/sample.h's model), else 0.
 * write_suspects() writes the text section ("" without intervals).
 */
struct suspect {
	size_t sample;
	int suspect;
	double slope;		/* bytes per interval */
	double per_hour;	/* bytes per hour */
	double late_slope;	/* the running maximum's, over the last half */
	size_t grew;		/* intervals in which it grew, of nintervals */
	uint64_t high, end;	/* the most it held, what it held at the end */
	uint64_t gave_back;	/* its largest fall from a high */
	double err;
};

size_t profile_suspects(const struct profile *p, struct suspect **out);
/*
 * The same rule on one series, y[i] held at the end of interval i: 1
 * when it is a suspect (r->slope: bytes per interval), else 0.
 */
int series_suspect(const double *y, size_t n, struct suspect *r);
int write_suspects(FILE *f, const struct profile *p, const struct output_options *o);

/*
 * Views: what stacks are weighed by.  --weight gives enum weight,
 * --net and --leaks the flags.  view_conflict() returns the usage error
 * of an impossible combination ("--net and --weight=count exclude each
 * other"), or NULL.  view_type() names the value type the view selects:
 * "bytes" (acquired: growth), "count", "released", "net", "inuse_space"
 * or "inuse_objects", "peak_space" (WEIGHT_PEAK: what each stack held at
 * the peak; --leaks only says it is known); WEIGHT_DEFAULT means bytes, or count when
 * count_default is set (--probe without size=) and neither --net nor
 * --leaks is.
 */
enum weight { WEIGHT_DEFAULT, WEIGHT_BYTES, WEIGHT_COUNT, WEIGHT_RELEASED, WEIGHT_PEAK };

int weight_parse(const char *s);	/* enum weight, or -1 */
const char *view_conflict(int weight, int net, int leaks);
const char *view_type(int weight, int net, int leaks, int count_default);

/*
 * What `memtap diff` does (its command line: cli/diff.c): read BEFORE
 * and AFTER (folded stacks or JSON recordings, weighed by value type
 * type, NULL = each one's default) and write to output (NULL = stdout,
 * through outfile_write()) the differential folded stacks, or with svg
 * a differential flame graph drawn with o.  Returns 0, or -1 after one
 * error line.
 */
int diff_files(const char *before, const char *after, const char *type, int svg,
	       const struct output_options *o, const char *output);

enum out_format {
	FORMAT_TEXT,
	FORMAT_FOLDED,
	FORMAT_SVG,
	FORMAT_PPROF,
	FORMAT_JSON,
	FORMAT_HTML,
};

/*
 * Output formats by name ("text", "folded", "svg", "pprof", "json",
 * "html": the order of enum out_format), and by the suffix of a file
 * name (.txt, .folded, .svg, .pb.gz or .pprof, .json, .html).  Both
 * return the index in output_format_names, or -1.
 */
extern const char *const output_format_names[6];
int output_format_parse(const char *name);
int output_format_from_path(const char *path);

/*
 * Recordings (recording.c): the JSON report read back into a profile.
 * recording_parse() reads text[0..len) (name is for messages),
 * recording_read() the rest of stream f, recording_load() the file
 * path ("-": standard input), all bounded
 * (json-read.h).  They fill a zeroed p and return 0, or print one error
 * line naming the file and return -1 with p released.
 * report_recording() is what `memtap report` does (its command line:
 * cli/report.c): load the recording at path, choose the view of weight
 * (enum weight), net and leaks (checked by view_conflict() first), and
 * write it in format (enum out_format) to output (NULL = stdout), or
 * with suspects only its leak suspects (write_suspects(): a recording
 * of an -i run); returns 0, or -1 after one error line.
 */
int recording_parse(const char *name, const char *text, size_t len, struct profile *p);
int recording_read(const char *name, FILE *f, struct profile *p);
int recording_load(const char *path, struct profile *p);
int report_recording(const char *path, int format, int weight, int net, int leaks,
		     int suspects, const struct output_options *o, const char *output);

/*
 * Folded stack sets: the intermediate form of the folded, SVG and diff
 * outputs.  A stack is one string "root;...;leaf" (frames never contain
 * ';' or control characters) with a weight (value) and, in a
 * differential set, the weight before (base).
 *
 * Lifecycle: zero-initialize (FOLDED_SET_INIT), fill with
 * folded_set_add() / folded_set_from_profile() / folded_set_parse(),
 * then folded_set_finish() to sort and merge; folded_set_release() frees
 * the strings and the array.  The set owns every stack string.
 */
/* a + b, held at the int64 limits (read inputs can have any values) */
static inline int64_t int64_add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return a < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

struct folded_stack {
	char *stack;
	int64_t value;
	int64_t base;
};

struct folded_set {
	struct folded_stack *stacks;
	size_t n;
	size_t alloc;
	const char *unit;	/* "bytes", "count", ...: borrowed */
	int diff;		/* base is meaningful */
};

#define FOLDED_SET_INIT { NULL, 0, 0, "bytes", 0 }

/* Append a stack (copied).  Duplicates are merged by folded_set_finish(). */
void folded_set_add(struct folded_set *s, const char *stack, int64_t value,
		    int64_t base);
/*
 * Append one stack per sample of p, weighed as o says (value index,
 * root frames, names); frames expand inline levels, outermost first.
 * Returns 0, or -1 with errno EINVAL for a bad value index.
 */
int folded_set_from_profile(struct folded_set *s, const struct profile *p,
			    const struct output_options *o);
/*
 * Limits of folded_set_parse(), so that no input (/dev/zero, a stream
 * that never ends) makes it grow without bound: bytes of a line, bytes
 * of an input, stacks (lines) of an input.
 */
#define FOLDED_MAX_LINE (1024 * 1024)
#define FOLDED_MAX_INPUT (256ULL * 1024 * 1024)
#define FOLDED_MAX_STACKS 4000000
/*
 * Read folded lines "stack N" (or "stack A B" into base and value when
 * s->diff) from f.  Blank lines are skipped; returns the number of
 * malformed lines skipped (>= 0), or -1 with errno: E2BIG for a line
 * longer than FOLDED_MAX_LINE, EFBIG for an input of more than
 * FOLDED_MAX_INPUT bytes or FOLDED_MAX_STACKS stacks, else a read error.
 * The stacks read before an error stay in s.
 */
long folded_set_parse(struct folded_set *s, FILE *f);
/*
 * Sort by frames (frame by frame, so that stacks sharing a prefix are
 * adjacent), sum the values of equal stacks, drop stacks whose value and
 * base are both 0 (and, outside diffs, negative sums: shrinking is not
 * drawn).
 */
void folded_set_finish(struct folded_set *s);
void folded_set_release(struct folded_set *s);

/*
 * Append the stacks of one `memtap diff` input, read from f (folded
 * stacks, or a JSON report when its first non-blank character is '{'),
 * to s: as values (after) or bases (before).  path names the input in
 * messages.  Folded inputs are read as a stream within the limits of
 * folded_set_parse(), JSON reports up to FOLDED_MAX_INPUT bytes.
 * Returns 0, or -1 after a one-line message.
 */
int diff_load(struct folded_set *s, const char *path, FILE *f, int after,
	      const struct output_options *o, const char *type);
/*
 * The folded stack of sample i of p ("comm;main;...;malloc", root
 * frames as o says, the event kind first when events is set), malloc'd:
 * the caller frees it.  folded_event_frames() tells whether o puts the
 * event kind first in p's stacks.
 */
int folded_event_frames(const struct profile *p, const struct output_options *o);
char *folded_sample_stack(const struct profile *p, size_t i, const struct output_options *o,
			  int events);
/* Write a finished set: "stack value" lines ("stack base value" in diffs). */
int folded_set_write(FILE *f, const struct folded_set *s);
/* Draw a finished set as an SVG flame graph (red/blue when s->diff). */
int svg_write_set(FILE *f, const struct folded_set *s,
		  const struct output_options *o);

/*
 * Text helpers shared by the writers.
 *
 * out_human_bytes() formats n as "512 bytes", "1.50 KiB", "2.00 GiB"
 * into buf (at least 32 bytes) and returns buf.
 * out_utf8_len() returns the length of the valid UTF-8 sequence at s
 * (1-4), or 0 when the byte at s does not start one: writers replace
 * such bytes so that XML and JSON stay well-formed.
 */
char *out_human_bytes(char *buf, size_t size, int64_t n);
/*
 * s as a JSON string ("null" for NULL), invalid UTF-8 as U+FFFD; with
 * html, '<', '>' and '&' as \u escapes too, so that the string can sit
 * inside an HTML <script> element ("</script>" cannot appear).
 */
void out_json_str(FILE *f, const char *s, int html);
size_t out_utf8_len(const char *s);

/*
 * Building a profile.
 *
 * Start from a zeroed struct profile.  Add the value types first (every
 * sample has one value per type), then mappings, functions, locations
 * and samples; each call copies its strings and returns the index of the
 * new entry, or of the existing equal entry (equal fields; NULL and ""
 * differ).  profile_add_sample() with the same locations, pid, comm and
 * event adds the values to the existing sample.
 *
 * The lookup index behind the de-duplication is kept beside the profile
 * and found by its address: do not move (memcpy) a profile while adding
 * to it.  profile_release() frees the profile and its index, and leaves
 * it zeroed, ready for reuse.  Arrays filled by hand before the first
 * profile_add_*() call are indexed at that call.
 */
size_t profile_add_value_type(struct profile *p, const char *type,
			      const char *unit);
size_t profile_add_mapping(struct profile *p, uint64_t start, uint64_t limit,
			   uint64_t offset, const char *file,
			   const char *build_id);
size_t profile_add_function(struct profile *p, const char *name,
			    const char *system_name, const char *file);
/*
 * lines[0] is the innermost inline level; lines[nlines-1] the function
 * that contains the address.  mapping is (size_t)-1 for none.
 */
size_t profile_add_location(struct profile *p, uint64_t address,
			    size_t mapping, const struct prof_line *lines,
			    size_t nlines);
/* locs: leaf first; values: p->ntypes of them. */
size_t profile_add_sample(struct profile *p, const size_t *locs, size_t nlocs,
			  const int64_t *values, pid_t pid, const char *comm,
			  const char *event);
/* Sum of value type t over every sample. */
int64_t profile_total(const struct profile *p, size_t t);
/* The index of the value type named type, or (size_t)-1. */
size_t profile_find_type(const struct profile *p, const char *type);

#endif /* MEMTAP_OUTPUT_H */

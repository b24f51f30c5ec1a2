/*
 * out-json.c - the JSON report: every sample with its symbolized frames
 * and its values, plus the totals per value type.
 *
 * Schema (version 1):
 *
 * {
 *   "format": "memtap-profile",
 *   "version": 2,
 *   "time_nanos": 1700000000000000000,     wall clock at start (ns)
 *   "duration_nanos": 5000000000,          recording time (ns)
 *   "default_type": "alloc_space",         type shown by default
 *   "value_types": [                       what each sample value means
 *     { "type": "alloc_space", "unit": "bytes", "total": 123456 }
 *   ],
 *   "processes": [                         per traced process (only in
 *     {                                    reports of a run)
 *       "pid": 1234, "ppid": 0, "comm": "server",
 *       "status": "exited 0",              or "killed by SIGTERM",
 *                                          "detached", "running"
 *       "vm": { "start": { "size": 1, "rss": 2, "data": 3 },
 *               "end": { ... } },          /proc/PID/status, bytes;
 *                                          null when not read
 *       "events": [ { "event": "mmap", "calls": 3, "failed": 0,
 *                     "acquired": 301989888, "released": 0 } ]
 *     }
 *   ],
 *   "samples": [
 *     {
 *       "pid": 1234,
 *       "comm": "server",                  process name, or null
 *       "event": "malloc",                 event kind, or null
 *       "values": [ 4096 ],                one per value_types entry
 *       "frames": [                        leaf first, one per inline
 *         {                                level (innermost first)
 *           "function": "parse_request",   demangled unless told not to;
 *                                          null when unknown
 *           "system_name": "parse_request",  symbol table name, or null
 *           "file": "src/parse.c",         source file, or null
 *           "line": 42,                    0 when unknown
 *           "address": "0x5581a3c0",       runtime pc (hex string: JSON
 *                                          numbers lose 64-bit precision)
 *           "module": "/usr/bin/server",   mapped file, or null
 *           "module_offset": "0x1a3c0",    address as a file offset
 *                                          (only when module is known)
 *           "inlined": false               true when inlined into the
 *         }                                next frame of the list
 *       ]
 *     }
 *   ]
 * }
 *
 * Version 2 adds what `memtap report` needs to write every other
 * format and view again from the JSON alone (the report model,
 * include/profile.h, exactly):
 *
 *   "run": { "syscalls": "seccomp", "stacks": true, "held": true,
 *            "stops": { "total": 18, "seccomp": 8, "syscall": 8,
 *                       "breakpoint": 0, "signal": 0, "other": 2 } },
 *   in "stops" of a run, when timed: "longest": { "ns": 81234, "pid": 7,
 *   "tid": 9, "kind": "seccomp" } (the longest a thread stayed stopped
 *   by memtap, from the waitpid() that returned the stop to its resume)
 *   and "over_ms": [a, b, c] (stops over 1, 10 and 100 ms);
 *   "probes_not_found": [ "sqlite3_malloc64" ],   --probe specs never
 *                                                 found (when any)
 *   per process: "filtered", "unknown_frees", "from_start" (1: seen
 *   from its start, every allocator call: its unknown frees are the
 *   allocator's own, not among the calls), "refrees" (frees of
 *   addresses freed and not handed out since, with --exact: the C
 *   library's at a thread's exit, not among the calls), "live_blocks",
 *   "live_bytes", "inherited_blocks", "inherited_bytes" (of the live
 *   blocks, those a fork child holds of its parent's); per event: "anon", "file";
 *   per fault event also "samples", "lost" (records lost: the ring was
 *   full) and "throttles" (the kernel's rate limit), "calls" being the
 *   exact count, and when not 0 "neighbour" and "neighbour_bytes": the
 *   faults without a sample of their own (lost) put on the stack sampled
 *   next to them, and their bytes (of "calls" and "acquired"); "fault_period": N beside "run" with fault events;
 *   "sample_mean": [LO, HI] beside "run" when allocator calls were
 *   sampled (the means in force, bytes; calls and bytes of their stacks
 *   are estimates);
 *   per allocator event "counted": "calls acquired" (or "calls") when
 *   its calls (and the bytes they acquired) were counted in the target,
 *   exact (the stacks sampled: estimates);
 *   per event "data" (the VmData change) and "resident" (resident bytes
 *   given back), when not 0 (with -e mprotect, madvise or faults);
 *   "mappings": [ { "start": "0x0", "limit": "0x0", "offset": "0x0",
 *                   "file": "/usr/bin/server", "build_id": "ab12" } ],
 *   "functions": [ { "name": "f", "system_name": "f", "file": null } ],
 *   "locations": [ { "address": "0x5581a3c0", "mapping": 0,
 *                    "lines": [ [ 3, 42 ] ] } ],  function index, line
 *   per sample: "locations": [ 0, 5, 7 ]          leaf first
 *   "peaks": { "alloc": { "bytes": 6291456, "nanos": 1500000 },
 *              "mappings": { ... } },       the highest bytes held at
 *                                      once (the "peak_space" values are
 *                                      what each stack held then) and
 *                                      when, since the start; a family
 *                                      that never held anything is left out
 *
 * Indexes are 0-based into those arrays; "mapping" is null for none.
 * "frames" stays, for readers of version 1.
 *
 * Version 3 is version 2 with the intervals of an -i run (a recording
 * without them stays version 2), one line each, in order:
 *
 *   "intervals_held": true,            the changes' held figures are
 *                                      known (--leaks), else all 0
 *   "intervals": [
 *     { "end_nanos": 500000000,        its end, since the start
 *       "captured": 1048576,           held bytes of every stack at its
 *                                      end (intervals_held), else bytes
 *                                      acquired less released so far
 *       "vm": [ [ 1234, RSS, SIZE, DATA ] ],   per process alive at its
 *                                      end: pid, VmRSS, VmSize, VmData
 *       "changes": [ [ 3, 10, 40960, 0, 40960 ] ] }
 *   ]
 *
 * A change is [ sample, calls, acquired, released, held ]: the sample's
 * index in "samples", the calls and bytes it acquired and released in
 * the interval, and what it held at the interval's end; changes are in
 * order of sample.  A sample absent from an interval's changes had no
 * event in it and held what it held at the end of the previous
 * interval (0 before the first): each interval is written as its
 * changes against the previous one.
 *
 * Strings are escaped as RFC 8259 requires; bytes that are not valid
 * UTF-8 become U+FFFD.  Values are JSON integers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "report/output.h"

void out_json_str(FILE *f, const char *s, int html)
{
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	putc('"', f);
	for (; *s; s += n) {
		unsigned char c = *s;

		n = 1;
		switch (c) {
		case '"':
			fputs("\\\"", f);
			continue;
		case '\\':
			fputs("\\\\", f);
			continue;
		case '\n':
			fputs("\\n", f);
			continue;
		case '\t':
			fputs("\\t", f);
			continue;
		case '\r':
			fputs("\\r", f);
			continue;
		case '\b':
			fputs("\\b", f);
			continue;
		case '\f':
			fputs("\\f", f);
			continue;
		case '<':
		case '>':
		case '&':
			if (!html)
				break;
			fprintf(f, "\\u%04x", c);
			continue;
		default:
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (!(n = out_utf8_len(s))) {
			fputs("\\ufffd", f);
			n = 1;
		} else {
			fwrite(s, 1, n, f);
		}
	}
	putc('"', f);
}

static void json_str(FILE *f, const char *s)
{
	out_json_str(f, s, 0);
}

static const char *pick_name(const struct prof_function *fn, int mangled)
{
	const char *a = mangled ? fn->system_name : fn->name;

	if (a && *a)
		return a;
	a = mangled ? fn->name : fn->system_name;
	return a && *a ? a : NULL;
}

static void json_frame(FILE *f, const struct profile *p,
		       const struct prof_location *l, const struct prof_line *ln,
		       int inlined, int mangled, int first)
{
	const struct prof_function *fn = NULL;
	const struct prof_mapping *m = NULL;

	if (ln && ln->function < p->nfunctions)
		fn = &p->functions[ln->function];
	if (l->mapping < p->nmappings)
		m = &p->mappings[l->mapping];
	fputs(first ? "\n        { " : ",\n        { ", f);
	fputs("\"function\": ", f);
	json_str(f, fn ? pick_name(fn, mangled) : NULL);
	fputs(", \"system_name\": ", f);
	json_str(f, fn ? fn->system_name : NULL);
	fputs(", \"file\": ", f);
	json_str(f, fn ? fn->file : NULL);
	fprintf(f, ", \"line\": %" PRId64 ", \"address\": \"0x%" PRIx64
		"\", \"module\": ", ln ? ln->line : 0, l->address);
	json_str(f, m ? m->file : NULL);
	if (m)
		fprintf(f, ", \"module_offset\": \"0x%" PRIx64 "\"",
			l->address - m->start + m->offset);
	fprintf(f, ", \"inlined\": %s }", inlined ? "true" : "false");
}

static void json_sample(FILE *f, const struct profile *p,
			const struct prof_sample *s, int mangled, int first)
{
	size_t i, k;
	int nframes = 0;

	fprintf(f, "%s    {\n      \"pid\": %ld,\n      \"comm\": ",
		first ? "" : ",\n", (long)s->pid);
	json_str(f, s->comm);
	fputs(",\n      \"event\": ", f);
	json_str(f, s->event);
	fputs(",\n      \"values\": [", f);
	for (i = 0; i < p->ntypes; i++)
		fprintf(f, "%s%" PRId64, i ? ", " : " ", s->values[i]);
	fputs(p->ntypes ? " ],\n      \"locations\": [" : "],\n      \"locations\": [", f);
	for (i = 0; i < s->nlocs; i++)
		fprintf(f, "%s%zu", i ? ", " : " ", s->locs[i]);
	fputs(s->nlocs ? " ],\n      \"frames\": [" : "],\n      \"frames\": [", f);
	for (i = 0; i < s->nlocs; i++) {
		const struct prof_location *l;

		if (s->locs[i] >= p->nlocations)
			continue;
		l = &p->locations[s->locs[i]];
		if (!l->nlines) {
			json_frame(f, p, l, NULL, 0, mangled, !nframes++);
			continue;
		}
		for (k = 0; k < l->nlines; k++)
			json_frame(f, p, l, &l->lines[k], k + 1 < l->nlines,
				   mangled, !nframes++);
	}
	fputs(nframes ? "\n      ]\n    }" : "]\n    }", f);
}

static void json_vm(FILE *f, const struct prof_process *pr, int i)
{
	fprintf(f, "{ \"size\": %" PRIu64 ", \"rss\": %" PRIu64 ", \"data\": %" PRIu64 " }",
		pr->vm_size[i], pr->vm_rss[i], pr->vm_data[i]);
}

static void json_processes(FILE *f, const struct profile *p)
{
	fputs("\n  \"processes\": [", f);
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		fprintf(f, "%s\n    { \"pid\": %d, \"ppid\": %d, \"comm\": ", i ? "," : "",
			(int)pr->pid, (int)pr->ppid);
		json_str(f, pr->comm);
		fputs(", \"status\": ", f);
		json_str(f, pr->status);
		fputs(",\n      \"vm\": ", f);
		if (pr->have_vm) {
			fputs("{ \"start\": ", f);
			json_vm(f, pr, 0);
			fputs(", \"end\": ", f);
			json_vm(f, pr, 1);
			if (pr->left_size)
				fprintf(f, ", \"left\": { \"size\": %" PRIu64 ", \"data\": %" PRIu64
					" }", pr->left_size, pr->left_data);
			fputs(" }", f);
		} else {
			fputs("null", f);
		}
		fprintf(f, ",\n      \"filtered\": %" PRIu64 ", \"unknown_frees\": %" PRIu64
			", \"from_start\": %d, \"refrees\": %" PRIu64
			", \"live_blocks\": %" PRIu64 ", \"live_bytes\": %" PRIu64
			",\n      \"inherited_blocks\": %" PRIu64 ", \"inherited_bytes\": %" PRIu64,
			pr->filtered, pr->unknown_frees, pr->from_start, pr->refrees, pr->live_blocks,
			pr->live_bytes, pr->inherited_blocks, pr->inherited_bytes);
		fputs(",\n      \"events\": [", f);
		for (size_t k = 0; k < pr->nevents; k++) {
			const struct prof_event_totals *e = &pr->events[k];

			fputs(k ? ",\n        { \"event\": " : "\n        { \"event\": ", f);
			json_str(f, e->event);
			fprintf(f, ", \"calls\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"acquired\": %"
				PRIu64 ", \"released\": %" PRIu64 ", \"anon\": %" PRIu64 ", \"file\": %"
				PRIu64, e->calls, e->failed, e->acquired, e->released, e->anon,
				e->file);
			if (e->data || e->resident)
				fprintf(f, ", \"data\": %" PRId64 ", \"resident\": %" PRIu64, e->data,
					e->resident);
			if (e->sampled)
				fprintf(f, ", \"samples\": %" PRIu64 ", \"lost\": %" PRIu64
					", \"throttles\": %" PRIu64, e->samples, e->lost, e->throttles);
			if (e->neighbour)
				fprintf(f, ", \"neighbour\": %" PRIu64 ", \"neighbour_bytes\": %" PRIu64,
					e->neighbour, e->neighbour_bytes);
			if (e->counted)
				fprintf(f, ", \"counted\": \"%s\"", e->counted & PROF_COUNTED_BYTES ?
					"calls acquired" : "calls");
			fputs(" }", f);
		}
		fputs(pr->nevents ? "\n      ] }" : "] }", f);
	}
	fputs("\n  ],", f);
}

static void json_hex(FILE *f, const char *key, uint64_t v)
{
	fprintf(f, "\"%s\": \"0x%" PRIx64 "\"", key, v);
}

static void json_run(FILE *f, const struct prof_run *r)
{
	fputs("\n  \"run\": { \"syscalls\": ", f);
	json_str(f, r->syscalls);
	fprintf(f, ", \"stacks\": %s, \"held\": %s,\n    \"stops\": { \"total\": %" PRIu64
		", \"seccomp\": %" PRIu64 ", \"syscall\": %" PRIu64 ", \"breakpoint\": %" PRIu64
		", \"signal\": %" PRIu64 ", \"other\": %" PRIu64,
		r->stacks ? "true" : "false", r->held ? "true" : "false", r->stops,
		r->stops_seccomp, r->stops_syscall, r->stops_breakpoint, r->stops_signal,
		r->stops_other);
	if (r->longest_stop_kind) {
		fprintf(f, ",\n      \"longest\": { \"ns\": %" PRIu64 ", \"pid\": %d, \"tid\": %d, "
			"\"kind\": ", r->longest_stop_ns, r->longest_stop_pid, r->longest_stop_tid);
		json_str(f, r->longest_stop_kind);
		fprintf(f, " },\n      \"over_ms\": [%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]",
			r->stops_over_ms[0], r->stops_over_ms[1], r->stops_over_ms[2]);
	}
	fputs(" }", f);
	if (r->stacks_folded)
		fprintf(f, ",\n    \"stacks_folded\": %" PRIu64, r->stacks_folded);
	fputs(" },", f);
	if (r->fault_period)
		fprintf(f, "\n  \"fault_period\": %" PRIu64 ",", r->fault_period);
	if (r->sample_lo)
		fprintf(f, "\n  \"sample_mean\": [%" PRIu64 ", %" PRIu64 "],", r->sample_lo,
			r->sample_hi);
	if (r->nunfound) {
		fputs("\n  \"probes_not_found\": [", f);
		for (size_t i = 0; i < r->nunfound; i++) {
			fputs(i ? ", " : " ", f);
			json_str(f, r->unfound[i]);
		}
		fputs(" ],", f);
	}
	if (r->nnotes) {
		fputs("\n  \"not_seen\": [", f);
		for (size_t i = 0; i < r->nnotes; i++) {
			fputs(i ? ", " : " ", f);
			json_str(f, r->notes[i]);
		}
		fputs(" ],", f);
	}
}

/* "peaks": each family's peak, when any held anything. */
static void json_peaks(FILE *f, const struct profile *p)
{
	int n = 0;

	for (int i = 0; i < PROF_NPEAKS; i++) {
		if (!p->peaks[i].bytes)
			continue;
		fprintf(f, "%s\"%s\": { \"bytes\": %" PRIu64 ", \"nanos\": %" PRId64 " }",
			n++ ? ", " : "\n  \"peaks\": { ", prof_peak_names[i], p->peaks[i].bytes,
			p->peaks[i].nanos);
	}
	if (n)
		fputs(" },", f);
}

/* The tables the samples' "locations" point into. */
static void json_tables(FILE *f, const struct profile *p)
{
	size_t i, k;

	fputs("\n  \"mappings\": [", f);
	for (i = 0; i < p->nmappings; i++) {
		const struct prof_mapping *m = &p->mappings[i];

		fputs(i ? ",\n    { " : "\n    { ", f);
		json_hex(f, "start", m->start);
		fputs(", ", f);
		json_hex(f, "limit", m->limit);
		fputs(", ", f);
		json_hex(f, "offset", m->offset);
		fputs(", \"file\": ", f);
		json_str(f, m->file);
		fputs(", \"build_id\": ", f);
		json_str(f, m->build_id);
		fputs(" }", f);
	}
	fputs(p->nmappings ? "\n  ],\n  \"functions\": [" : "],\n  \"functions\": [", f);
	for (i = 0; i < p->nfunctions; i++) {
		const struct prof_function *fn = &p->functions[i];

		fputs(i ? ",\n    { \"name\": " : "\n    { \"name\": ", f);
		json_str(f, fn->name);
		fputs(", \"system_name\": ", f);
		json_str(f, fn->system_name);
		fputs(", \"file\": ", f);
		json_str(f, fn->file);
		fputs(" }", f);
	}
	fputs(p->nfunctions ? "\n  ],\n  \"locations\": [" : "],\n  \"locations\": [", f);
	for (i = 0; i < p->nlocations; i++) {
		const struct prof_location *l = &p->locations[i];

		fputs(i ? ",\n    { " : "\n    { ", f);
		json_hex(f, "address", l->address);
		if (l->mapping < p->nmappings)
			fprintf(f, ", \"mapping\": %zu, \"lines\": [", l->mapping);
		else
			fputs(", \"mapping\": null, \"lines\": [", f);
		for (k = 0; k < l->nlines; k++)
			fprintf(f, "%s[ %zu, %" PRId64 " ]", k ? ", " : " ", l->lines[k].function,
				l->lines[k].line);
		fputs(l->nlines ? " ] }" : "] }", f);
	}
	fputs(p->nlocations ? "\n  ]," : "],", f);
}

/* Version 3: the intervals, one line each. */
static void json_intervals(FILE *f, const struct profile *p)
{
	fprintf(f, "\n  \"intervals_held\": %s,\n  \"intervals\": [",
		p->intervals_held ? "true" : "false");
	for (size_t i = 0; i < p->nintervals; i++) {
		const struct prof_interval *pi = &p->intervals[i];

		fprintf(f, "%s\n    { \"end_nanos\": %" PRId64 ", \"captured\": %" PRId64
			", \"vm\": [", i ? "," : "", pi->end_nanos, pi->captured);
		for (size_t k = 0; k < pi->nvm; k++)
			fprintf(f, "%s[%d,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", k ? "," : "",
				(int)pi->vm[k].pid, pi->vm[k].rss, pi->vm[k].size, pi->vm[k].data);
		fputs("], \"changes\": [", f);
		for (size_t k = 0; k < pi->nchanges; k++) {
			const struct prof_change *c = &pi->changes[k];

			fprintf(f, "%s[%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
				k ? "," : "", c->sample, c->calls, c->acquired, c->released,
				c->held);
		}
		fputs("] }", f);
	}
	fputs(p->nintervals ? "\n  ]," : "],", f);
}

int write_json(FILE *f, const struct profile *p, const struct output_options *o)
{
	int mangled = o && o->no_demangle;
	size_t i, deftype;

	deftype = o && o->value_index ? o->value_index - 1 : p->default_type;
	if (p->ntypes && deftype >= p->ntypes) {
		errno = EINVAL;
		return -1;
	}
	fprintf(f, "{\n  \"format\": \"memtap-profile\",\n  \"version\": %d,\n"
		"  \"time_nanos\": %" PRId64 ",\n  \"duration_nanos\": %" PRId64
		",\n  \"default_type\": ", p->nintervals ? 3 : 2, p->time_nanos,
		p->duration_nanos);
	json_str(f, p->ntypes ? p->types[deftype].type : NULL);
	fputs(",\n  \"value_types\": [", f);
	for (i = 0; i < p->ntypes; i++) {
		fputs(i ? ",\n    { \"type\": " : "\n    { \"type\": ", f);
		json_str(f, p->types[i].type);
		fputs(", \"unit\": ", f);
		json_str(f, p->types[i].unit);
		fprintf(f, ", \"total\": %" PRId64 " }", profile_total(p, i));
	}
	fputs(p->ntypes ? "\n  ]," : "],", f);
	if (p->have_run)
		json_run(f, &p->run);
	if (p->nprocesses)
		json_processes(f, p);
	json_peaks(f, p);
	json_tables(f, p);
	if (p->nintervals)
		json_intervals(f, p);
	fputs("\n  \"samples\": [", f);
	for (i = 0; i < p->nsamples; i++) {
		if (!i)
			putc('\n', f);
		json_sample(f, p, &p->samples[i], mangled, !i);
	}
	fputs(p->nsamples ? "\n  ]\n}\n" : "]\n}\n", f);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

/*
 * out-json.c - the JSON report: every sample with its symbolized frames
 * and its values, plus the totals per value type.
 *
 * Schema (version 1):
 *
 * {
 *   "format": "memtap-profile",
 *   "version": 1,
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
 * Strings are escaped as RFC 8259 requires; bytes that are not valid
 * UTF-8 become U+FFFD.  Values are JSON integers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "output.h"

static void json_str(FILE *f, const char *s)
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
	fputs(p->ntypes ? " ],\n      \"frames\": [" : "],\n      \"frames\": [", f);
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
			fputs(" }", f);
		} else {
			fputs("null", f);
		}
		fputs(",\n      \"events\": [", f);
		for (size_t k = 0; k < pr->nevents; k++) {
			const struct prof_event_totals *e = &pr->events[k];

			fputs(k ? ",\n        { \"event\": " : "\n        { \"event\": ", f);
			json_str(f, e->event);
			fprintf(f, ", \"calls\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"acquired\": %"
				PRIu64 ", \"released\": %" PRIu64 " }", e->calls, e->failed, e->acquired,
				e->released);
		}
		fputs(pr->nevents ? "\n      ] }" : "] }", f);
	}
	fputs("\n  ],", f);
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
	fprintf(f, "{\n  \"format\": \"memtap-profile\",\n  \"version\": 1,\n"
		"  \"time_nanos\": %" PRId64 ",\n  \"duration_nanos\": %" PRId64
		",\n  \"default_type\": ", p->time_nanos, p->duration_nanos);
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
	if (p->nprocesses)
		json_processes(f, p);
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

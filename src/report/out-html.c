/*
 * out-html.c - the timeline page: one self-contained HTML file (no
 * network, no external script, style or font) that shows an -i
 * recording.
 *
 * The file holds the recording's figures as JSON in a
 * <script type="application/json"> element, and memtap's own script
 * (html-page.js, built into html-page.inc as a C string) that draws
 * from them, in SVG:
 *
 *   - VmRSS and VmSize (summed over the processes alive at each
 *     interval's end) and the captured bytes, over time;
 *   - the held bytes of the heaviest stacks at each interval's end, as
 *     stacked areas (the bytes acquired in each interval when the
 *     recording has no held figures);
 *   - the flame graph of the selected intervals (click or drag on a
 *     chart; the whole run at first): each stack weighed by the sum of
 *     its changes over them (acquired, released or net bytes), so the
 *     page's numbers are the recording's;
 *   - the leak suspects (profile_suspects()), each a link that marks
 *     its stack in the flame graph and the areas;
 *   - a search by function name that highlights frames.
 *
 * Data (every string through out_json_str(..., 1): '<', '>' and '&'
 * are \u escapes, so no name can end the script element):
 *
 *   { "title": TEXT, "type": VALUE TYPE, "unit": UNIT, "held": BOOL,
 *     "stacks": [FOLDED STACK of each sample, root first],
 *     "whole": [each sample's value of the default type],
 *     "intervals": [[end_nanos, captured, rss, size,
 *                    [[sample, calls, acquired, released, held], ...]], ...],
 *     "suspects": [[sample, suspect, slope, per_hour, grew, end,
 *                   gave_back, err], ...] }
 *
 * Without intervals the page has the flame graph of the run (by the
 * default value type, "whole") and a note that says how to record
 * intervals.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/output.h"

/* The most suspects (and stacks that rose) the table lists. */
#define HTML_MAX_SUSPECTS 25

static const char page_script[] =
#include "report/html-page.inc"
	;

static const char page_style[] =
"body { font-family: Verdana, sans-serif; font-size: 13px; margin: 12px 20px; color: #222; }\n"
"h1 { font-size: 19px; margin: 4px 0; }\n"
"h2 { font-size: 15px; margin: 16px 0 6px; }\n"
"svg { display: block; max-width: 100%; user-select: none; }\n"
"svg text { font-family: Verdana, sans-serif; font-size: 11px; fill: #333; }\n"
".chart { cursor: crosshair; background: #fafafa; border: 1px solid #ddd; margin-bottom: 6px; }\n"
".sel { fill: rgba(60,110,220,0.15); stroke: rgb(60,110,220); stroke-width: 1; pointer-events: none; }\n"
".area.mark { stroke: #000; stroke-width: 2; }\n"
"#flame { background: linear-gradient(#f4f4f4, #e2ecf6); border: 1px solid #ddd; }\n"
"#flame g { cursor: pointer; }\n"
"#flame g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
"#flame text { pointer-events: none; font-size: 12px; fill: #000; }\n"
"#flame .parent { opacity: 0.5; }\n"
"#flame .mark rect { stroke: #000; stroke-width: 2; }\n"
"#bar { margin: 8px 0; display: flex; gap: 14px; align-items: center; flex-wrap: wrap; }\n"
"#search { width: 16em; }\n"
"#details { min-height: 1.3em; margin: 4px 0; font-family: monospace; }\n"
"#note { background: #fff6d6; border: 1px solid #e6d38a; padding: 6px 10px; }\n"
"table { border-collapse: collapse; }\n"
"th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; }\n"
"td.stack { text-align: left; font-family: monospace; }\n"
"tr.no { color: #888; }\n"
".hide { display: none; }\n";

/* s as HTML text. */
static void html_text(FILE *f, const char *s)
{
	size_t k;

	for (; *s; s += k) {
		k = 1;
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			continue;
		case '<':
			fputs("&lt;", f);
			continue;
		case '>':
			fputs("&gt;", f);
			continue;
		case '"':
			fputs("&quot;", f);
			continue;
		default:
			break;
		}
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			putc('?', f);
		} else if (!(k = out_utf8_len(s))) {
			fputs("\xef\xbf\xbd", f);
			k = 1;
		} else {
			fwrite(s, 1, k, f);
		}
	}
}

/* A finite double for JSON (NaN and infinities are not JSON). */
static double json_finite(double v)
{
	return isfinite(v) ? v : 0;
}

static void data_stacks(FILE *f, const struct profile *p, const struct output_options *o,
			size_t t)
{
	int events = folded_event_frames(p, o);

	fputs(",\n\"stacks\": [", f);
	for (size_t i = 0; i < p->nsamples; i++) {
		char *s = folded_sample_stack(p, i, o, events);

		fputs(i ? ",\n" : "\n", f);
		out_json_str(f, s, 1);
		free(s);
	}
	fputs("],\n\"whole\": [", f);
	for (size_t i = 0; i < p->nsamples; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", t < p->ntypes ? p->samples[i].values[t] : 0);
	fputs("]", f);
}

static void data_intervals(FILE *f, const struct profile *p)
{
	fputs(",\n\"intervals\": [", f);
	for (size_t i = 0; i < p->nintervals; i++) {
		const struct prof_interval *pi = &p->intervals[i];
		uint64_t rss = 0, size = 0;

		for (size_t k = 0; k < pi->nvm; k++) {
			rss += pi->vm[k].rss;
			size += pi->vm[k].size;
		}
		fprintf(f, "%s\n[%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",[", i ? "," : "",
			pi->end_nanos, pi->captured, rss, size);
		for (size_t k = 0; k < pi->nchanges; k++) {
			const struct prof_change *c = &pi->changes[k];

			fprintf(f, "%s[%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
				k ? "," : "", c->sample, c->calls, c->acquired, c->released, c->held);
		}
		fputs("]]", f);
	}
	fputs("]", f);
}

static void data_suspects(FILE *f, const struct profile *p)
{
	struct suspect *sus;
	size_t n = profile_suspects(p, &sus);

	fputs(",\n\"suspects\": [", f);
	for (size_t i = 0; i < n && i < HTML_MAX_SUSPECTS; i++) {
		const struct suspect *r = &sus[i];

		fprintf(f, "%s\n[%zu,%d,%.3f,%.1f,%zu,%" PRIu64 ",%" PRIu64 ",%.4f]", i ? "," : "",
			r->sample, r->suspect, json_finite(r->slope), json_finite(r->per_hour), r->grew,
			r->end, r->gave_back, json_finite(r->err));
	}
	fputs("]", f);
	free(sus);
}

int write_html(FILE *f, const struct profile *p, const struct output_options *o)
{
	struct output_options defaults = { 0 };
	const char *title;
	size_t t;

	if (!o)
		o = &defaults;
	t = o->value_index ? o->value_index - 1 : p->default_type;
	if (o->value_index && t >= p->ntypes) {
		errno = EINVAL;
		return -1;
	}
	title = o->title ? o->title : "memtap timeline";
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
	html_text(f, title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1 id=\"title\">", page_style);
	html_text(f, title);
	fputs("</h1>\n<div id=\"summary\"></div>\n<p id=\"note\" class=\"hide\"></p>\n"
	      "<div id=\"charts\"></div>\n"
	      "<div id=\"bar\"><span id=\"range\"></span><button id=\"whole\">Whole run</button>"
	      "<label id=\"weighing\">Flame graph of <select id=\"weight\">"
	      "<option value=\"acquired\">bytes acquired</option>"
	      "<option value=\"released\">bytes released</option>"
	      "<option value=\"net\">net bytes (acquired - released)</option></select></label>"
	      "<input id=\"search\" type=\"search\" placeholder=\"Search functions (regexp)\">"
	      "<span id=\"matched\"></span><button id=\"unzoom\" class=\"hide\">Reset zoom</button>"
	      "</div>\n<div id=\"total\"></div>\n<svg id=\"flame\"></svg>\n<div id=\"details\"> </div>\n"
	      "<h2 id=\"suspects-title\">Leak suspects</h2>\n<table id=\"suspects\"></table>\n"
	      "<script type=\"application/json\" id=\"data\">\n{\"title\": ", f);
	out_json_str(f, title, 1);
	fputs(", \"type\": ", f);
	out_json_str(f, t < p->ntypes ? p->types[t].type : "bytes", 1);
	fputs(", \"unit\": ", f);
	out_json_str(f, t < p->ntypes ? p->types[t].unit : "bytes", 1);
	fprintf(f, ", \"held\": %s", p->intervals_held ? "true" : "false");
	data_stacks(f, p, o, t);
	data_intervals(f, p);
	data_suspects(f, p);
	fprintf(f, "}\n</script>\n<script>\n%s</script>\n</body>\n</html>\n", page_script);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

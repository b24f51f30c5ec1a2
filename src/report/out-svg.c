/*
 * out-svg.c - a self-contained, interactive SVG flame graph.
 *
 * Layout.  The folded set, sorted frame by frame, is walked once: a
 * frame opens where a stack's prefix first differs from the previous
 * stack's and closes when a later stack leaves it, so each frame gets
 * a start offset and a width in value units (bytes) and stacks sharing
 * a prefix share its frames.  The root frame "all" spans the total.
 * A frame of value v is v / total of the drawing width wide; frames
 * narrower than the minimum width are left out with everything above
 * them (their children are narrower still).  Depth grows upwards, or
 * downwards in an icicle graph (inverted).
 *
 * Each frame is a <g> carrying its offset, value and depth (data-o,
 * data-v, data-d; data-b holds the base value of a differential graph),
 * a <title> "name (human size, share of total)" shown as the tool tip, a
 * <rect> and a <text> holding as much of the name as fits.  The embedded
 * script lays frames out again from those numbers when zooming (click a
 * frame; "Reset Zoom"), highlights the frames matching a search
 * (regular expression, or substring when the term is not a valid
 * expression; "Search", Ctrl-F) and shows the share of the total they
 * cover, counting nested matches once.
 *
 * Colours: a memory palette of greens and blues, picked by a hash of
 * the frame name so that a function keeps its colour across graphs; a
 * graph of page faults alone takes flamegraph.pl's --colors=mem palette
 * and green background exactly, as Gregg's page-fault flame graphs.  A
 * differential graph (set->diff) colours each frame by its growth from
 * base to value instead: red grew, blue shrank, white unchanged,
 * deeper for a larger share of the largest change; widths show value.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/events.h"
#include "report/output.h"
#include "util/xmalloc.h"

#define FRAME_H 16		/* pixels per depth level */
#define FONT_SIZE 12
#define CHAR_W (FONT_SIZE * 0.59)	/* mean Verdana glyph width */
#define PAD_X 10
#define PAD_TOP 50		/* title, buttons */
#define PAD_BOTTOM 34		/* details line */

struct frame {
	const char *name;	/* into the set's strings, not terminated */
	size_t len;
	int depth;
	int64_t start, value, base;
};

struct frames {
	struct frame *v;
	size_t n, alloc;
	int maxdepth;
};

char *out_human_bytes(char *buf, size_t size, int64_t n)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB",
					     "PiB", "EiB" };
	double v = n < 0 ? -(double)n : (double)n;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, size, "%" PRId64 " bytes", n);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%s%.2f %s", n < 0 ? "-" : "", v, units[u]);
	return buf;
}

/* "1.50 KiB" for bytes, "12 count" for other units. */
static char *human(char *buf, size_t size, int64_t n, const char *unit)
{
	if (!unit || !strcmp(unit, "bytes"))
		return out_human_bytes(buf, size, n);
	snprintf(buf, size, "%" PRId64 " %s", n, unit);
	return buf;
}

/* Write n bytes of s as XML character data. */
static void xml_text(FILE *f, const char *s, size_t n)
{
	const char *end = s + n;
	size_t k;

	while (s < end) {
		unsigned char c = *s;

		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				putc('?', f);
				break;
			}
			k = out_utf8_len(s);
			if (!k || s + k > end) {
				fputs("\xef\xbf\xbd", f);	/* U+FFFD */
				break;
			}
			fwrite(s, 1, k, f);
			s += k;
			continue;
		}
		s++;
	}
}

/* A unit name inside the script's CDATA: letters, digits, '_' only. */
static void js_word(FILE *f, const char *s)
{
	for (; *s; s++)
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_')
			putc(*s, f);
}

static void xml_str(FILE *f, const char *s)
{
	xml_text(f, s, strlen(s));
}

/* Characters (not bytes) in s[0..n): invalid bytes count as one. */
static size_t char_count(const char *s, size_t n, size_t *bytes_of_first,
			 size_t first)
{
	size_t i = 0, chars = 0, k;

	while (i < n) {
		if (chars == first)
			*bytes_of_first = i;
		k = out_utf8_len(s + i);
		i += k && i + k <= n ? k : 1;
		chars++;
	}
	if (chars <= first)
		*bytes_of_first = n;
	return chars;
}

/* Write the part of the name that fits in w pixels (the script's fit()). */
static void fitted_text(FILE *f, const struct frame *fr, double w)
{
	double room = floor((w - 6) / CHAR_W);
	size_t keep = 0, chars;

	if (room < 3)
		return;
	chars = char_count(fr->name, fr->len, &keep, (size_t)room - 2);
	if (chars <= (size_t)room) {
		xml_text(f, fr->name, fr->len);
		return;
	}
	xml_text(f, fr->name, keep);
	fputs("..", f);
}

static uint32_t name_hash(const char *s, size_t n, uint32_t h)
{
	while (n--) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

static void frame_colour(char *buf, size_t size, const struct frame *fr,
			 int diff, double maxdelta, int faults)
{
	if (diff) {
		double r = maxdelta > 0 ?
			fabs((double)fr->value - (double)fr->base) / maxdelta : 0;
		int c = 245 - (int)(200 * (r > 1 ? 1 : r));

		if (fr->value > fr->base)
			snprintf(buf, size, "rgb(255,%d,%d)", c, c);
		else if (fr->value < fr->base)
			snprintf(buf, size, "rgb(%d,%d,255)", c, c);
		else
			snprintf(buf, size, "rgb(245,245,245)");
		return;
	}
	uint32_t h1 = name_hash(fr->name, fr->len, 2166136261u);
	uint32_t h2 = name_hash(fr->name, fr->len, h1 ^ 0x5bd1e995u);
	double a = (h1 >> 8) / 16777216.0, b = (h2 >> 8) / 16777216.0;

	if (faults) {
		/* flamegraph.pl, type "mem": r 0, g 190 + 50 v2, b 210 v1 */
		snprintf(buf, size, "rgb(0,%d,%d)", 190 + (int)(50 * a), (int)(210 * b));
		return;
	}
	snprintf(buf, size, "rgb(%d,%d,%d)", (int)(40 * b),
		 160 + (int)(75 * a), 70 + (int)(150 * b));
}

static void add_frame(struct frames *fs, const char *name, size_t len,
		      int depth, int64_t start, int64_t value, int64_t base)
{
	struct frame *fr;

	fs->v = xgrowarray(fs->v, &fs->alloc, fs->n + 1, sizeof(*fs->v));
	fr = &fs->v[fs->n++];
	fr->name = name;
	fr->len = len;
	fr->depth = depth;
	fr->start = start;
	fr->value = value;
	fr->base = base;
	if (depth > fs->maxdepth)
		fs->maxdepth = depth;
}

struct open_frame {
	const char *name;
	size_t len;
	int64_t start, base;
};

/*
 * Lay the set out into frames, keeping those at least min_units wide.
 * The set is sorted frame by frame (folded_set_finish()).
 */
static void layout(const struct folded_set *s, struct frames *fs,
		   int64_t total, int64_t total_base, double min_units)
{
	struct open_frame *open = NULL;
	size_t nopen = 0, cap = 0, i, k;
	int64_t x = 0;

	add_frame(fs, "all", 3, 0, 0, total, total_base);
	for (i = 0; i <= s->n; i++) {
		const char *p = i < s->n ? s->stacks[i].stack : "";
		int64_t v = i < s->n && s->stacks[i].value > 0 ?
			    s->stacks[i].value : 0;

		/* frames shared with the open ones */
		for (k = 0; k < nopen && *p; k++) {
			const char *e = strchr(p, ';');
			size_t len = e ? (size_t)(e - p) : strlen(p);

			if (len != open[k].len || memcmp(p, open[k].name, len))
				break;
			p += len + (e ? 1 : 0);
			if (!e)
				p = "";
		}
		/* close the others, deepest first */
		while (nopen > k) {
			struct open_frame *o = &open[--nopen];

			if ((double)(x - o->start) >= min_units && x > o->start)
				add_frame(fs, o->name, o->len, (int)nopen + 1,
					  o->start, x - o->start, o->base);
		}
		if (i == s->n)
			break;
		/* open the new ones */
		while (*p) {
			const char *e = strchr(p, ';');
			size_t len = e ? (size_t)(e - p) : strlen(p);

			open = xgrowarray(open, &cap, nopen + 1, sizeof(*open));
			open[nopen].name = p;
			open[nopen].len = len;
			open[nopen].start = x;
			open[nopen].base = 0;
			nopen++;
			p = e ? e + 1 : p + len;
		}
		for (k = 0; k < nopen; k++)
			open[k].base = int64_add_sat(open[k].base, s->stacks[i].base);
		x = int64_add_sat(x, v);
	}
	free(open);
}

static const char script[] =
"\"use strict\";\n"
"var frames = [], zoomed = null, lastTerm = \"\";\n"
"function el(id) { return document.getElementById(id); }\n"
"function human(n) {\n"
"\tvar units = [\"KiB\", \"MiB\", \"GiB\", \"TiB\", \"PiB\", \"EiB\"];\n"
"\tvar v = Math.abs(n), u = -1;\n"
"\tif (UNIT !== \"bytes\")\n"
"\t\treturn n + \" \" + UNIT;\n"
"\tif (v < 1024)\n"
"\t\treturn n + \" bytes\";\n"
"\twhile (v >= 1024 && u < 5) { v /= 1024; u++; }\n"
"\treturn (n < 0 ? \"-\" : \"\") + v.toFixed(2) + \" \" + units[u];\n"
"}\n"
"function pct(n) { return (TOTAL > 0 ? 100 * n / TOTAL : 0).toFixed(2) + \"%\"; }\n"
"function fit(name, w) {\n"
"\tvar room = Math.floor((w - 6) / CHAR_W), chars = Array.from(name);\n"
"\tif (room < 3)\n"
"\t\treturn \"\";\n"
"\tif (chars.length <= room)\n"
"\t\treturn name;\n"
"\treturn chars.slice(0, room - 2).join(\"\") + \"..\";\n"
"}\n"
"function place(f, x, w) {\n"
"\tf.rect.setAttribute(\"x\", x.toFixed(2));\n"
"\tf.rect.setAttribute(\"width\", w.toFixed(2));\n"
"\tf.text.setAttribute(\"x\", (x + 3).toFixed(2));\n"
"\tf.text.textContent = fit(f.name, w);\n"
"}\n"
"function zoom(z) {\n"
"\tvar lo = z.o, hi = z.o + z.v, avail = WIDTH - 2 * PAD_X;\n"
"\tframes.forEach(function (f) {\n"
"\t\tvar fhi = f.o + f.v;\n"
"\t\tif (f.d < z.d && f.o <= lo && fhi >= hi) {\n"
"\t\t\tf.g.classList.add(\"parent\");\n"
"\t\t\tf.g.classList.remove(\"hide\");\n"
"\t\t\tplace(f, PAD_X, avail);\n"
"\t\t} else if (f.d >= z.d && f.o >= lo && fhi <= hi) {\n"
"\t\t\tf.g.classList.remove(\"parent\");\n"
"\t\t\tf.g.classList.remove(\"hide\");\n"
"\t\t\tplace(f, PAD_X + (f.o - lo) / z.v * avail, f.v / z.v * avail);\n"
"\t\t} else {\n"
"\t\t\tf.g.classList.add(\"hide\");\n"
"\t\t}\n"
"\t});\n"
"\tzoomed = z;\n"
"\tel(\"unzoom\").classList.toggle(\"hide\", z.d === 0);\n"
"}\n"
"function unzoom() {\n"
"\tif (frames.length)\n"
"\t\tzoom(frames[0]);\n"
"\tzoomed = null;\n"
"}\n"
"function search(term) {\n"
"\tvar re = null, hits = [], sum = 0, end = -1;\n"
"\ttry { re = new RegExp(term); } catch (e) { re = null; }\n"
"\tframes.forEach(function (f) {\n"
"\t\tvar hit = f.d > 0 && (re ? re.test(f.name) : f.name.indexOf(term) >= 0);\n"
"\t\tf.rect.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : f.fill);\n"
"\t\tf.g.classList.toggle(\"match\", hit);\n"
"\t\tif (hit)\n"
"\t\t\thits.push(f);\n"
"\t});\n"
"\thits.sort(function (a, b) { return a.o - b.o || a.d - b.d; });\n"
"\thits.forEach(function (f) {\n"
"\t\tif (f.o >= end) { sum += f.v; end = f.o + f.v; }\n"
"\t});\n"
"\tlastTerm = term;\n"
"\tel(\"matched\").textContent = \"Matched: \" + pct(sum) + \" (\" + human(sum) + \")\";\n"
"\tel(\"matched\").classList.remove(\"hide\");\n"
"\tel(\"unsearch\").classList.remove(\"hide\");\n"
"\treturn sum;\n"
"}\n"
"function unsearch() {\n"
"\tframes.forEach(function (f) {\n"
"\t\tf.rect.setAttribute(\"fill\", f.fill);\n"
"\t\tf.g.classList.remove(\"match\");\n"
"\t});\n"
"\tel(\"matched\").classList.add(\"hide\");\n"
"\tel(\"unsearch\").classList.add(\"hide\");\n"
"}\n"
"function askSearch() {\n"
"\tvar term = window.prompt(\"Search frames (regular expression or substring)\", lastTerm);\n"
"\tif (term)\n"
"\t\tsearch(term);\n"
"}\n"
"function init() {\n"
"\tvar gs = document.querySelectorAll(\"#frames > g\");\n"
"\tArray.prototype.forEach.call(gs, function (g) {\n"
"\t\tvar title = g.querySelector(\"title\").textContent;\n"
"\t\tvar f = { g: g, rect: g.querySelector(\"rect\"), text: g.querySelector(\"text\"),\n"
"\t\t\to: Number(g.getAttribute(\"data-o\")), v: Number(g.getAttribute(\"data-v\")),\n"
"\t\t\td: Number(g.getAttribute(\"data-d\")), title: title,\n"
"\t\t\tname: title.substring(0, title.lastIndexOf(\" (\")) };\n"
"\t\tf.fill = f.rect.getAttribute(\"fill\");\n"
"\t\tframes.push(f);\n"
"\t\tg.addEventListener(\"click\", function () { zoom(f); });\n"
"\t\tg.addEventListener(\"mouseover\", function () { el(\"details\").textContent = f.title; });\n"
"\t\tg.addEventListener(\"mouseout\", function () { el(\"details\").textContent = \" \"; });\n"
"\t});\n"
"\tel(\"unzoom\").addEventListener(\"click\", unzoom);\n"
"\tel(\"search\").addEventListener(\"click\", askSearch);\n"
"\tel(\"unsearch\").addEventListener(\"click\", unsearch);\n"
"\twindow.addEventListener(\"keydown\", function (e) {\n"
"\t\tif ((e.ctrlKey && e.key === \"f\") || e.key === \"F3\") {\n"
"\t\t\te.preventDefault();\n"
"\t\t\taskSearch();\n"
"\t\t} else if (e.key === \"Escape\") {\n"
"\t\t\tunsearch();\n"
"\t\t}\n"
"\t});\n"
"\twindow.memtap = { zoom: zoom, unzoom: unzoom, search: search, unsearch: unsearch,\n"
"\t\tframes: frames };\n"
"}\n"
"window.addEventListener(\"load\", init);\n";

static const char style[] =
"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
"#title { font-size: 17px; text-anchor: middle; }\n"
"#subtitle { text-anchor: middle; fill: rgb(110,110,110); }\n"
"#search, #unsearch, #matched { text-anchor: end; }\n"
"#frames g { cursor: pointer; }\n"
"#frames g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
"#frames text { pointer-events: none; }\n"
".button { cursor: pointer; }\n"
".button:hover { text-decoration: underline; }\n"
".parent { opacity: 0.5; }\n"
".hide { display: none; }\n";

static void write_frame(FILE *f, const struct frame *fr, double x, double y,
			double w, int64_t total, const char *unit, int diff,
			double maxdelta, int faults)
{
	char buf[64], colour[40];

	frame_colour(colour, sizeof(colour), fr, diff, maxdelta, faults);
	fprintf(f, "<g data-o=\"%" PRId64 "\" data-v=\"%" PRId64
		"\" data-d=\"%d\"", fr->start, fr->value, fr->depth);
	if (diff)
		fprintf(f, " data-b=\"%" PRId64 "\"", fr->base);
	fputs("><title>", f);
	xml_text(f, fr->name, fr->len);
	fprintf(f, " (%s, %.2f%%", human(buf, sizeof(buf), fr->value, unit),
		total > 0 ? 100.0 * fr->value / total : 0.0);
	if (diff) {
		int64_t d = int64_add_sat(fr->value, fr->base == INT64_MIN ? INT64_MAX : -fr->base);

		fprintf(f, "; %s%s", d > 0 ? "+" : "",
			human(buf, sizeof(buf), d, unit));
		if (fr->base > 0)
			fprintf(f, ", %+.2f%%", 100.0 * d / fr->base);
		else if (fr->value > 0)
			fputs(", new", f);
	}
	fprintf(f, ")</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\""
		" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/>"
		"<text x=\"%.2f\" y=\"%.1f\">", x, y, w, FRAME_H - 1, colour,
		x + 3, y + 10.5);
	fitted_text(f, fr, w);
	fputs("</text></g>\n", f);
}

int svg_write_set(FILE *f, const struct folded_set *s,
		  const struct output_options *o)
{
	struct output_options defaults = { 0 };
	struct frames fs = { NULL, 0, 0, 0 };
	int64_t total = 0, total_base = 0;
	double avail, min_w, maxdelta = 0;
	const char *title;
	int width, height, top, i;
	size_t k;

	if (!o)
		o = &defaults;
	width = o->width > 2 * PAD_X + 10 ? o->width : 1200;
	min_w = o->min_width > 0 ? o->min_width : 0.1;
	avail = width - 2 * PAD_X;
	title = o->title ? o->title :
		s->diff ? "Differential memory flame graph" :
		"Memory growth flame graph";
	for (k = 0; k < s->n; k++) {
		if (s->stacks[k].value > 0)
			total = int64_add_sat(total, s->stacks[k].value);
		total_base = int64_add_sat(total_base, s->stacks[k].base);
	}
	if (total > 0)
		layout(s, &fs, total, total_base, min_w * total / avail);
	for (k = 1; k < fs.n; k++) {
		double d = fabs((double)fs.v[k].value - (double)fs.v[k].base);

		if (d > maxdelta)
			maxdelta = d;
	}
	top = PAD_TOP + (o->subtitle ? FRAME_H : 0);
	height = top + (fs.n ? fs.maxdepth + 1 : 1) * FRAME_H + PAD_BOTTOM;

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\""
		" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, height, width, height);
	fprintf(f, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", style);
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var WIDTH = %d, PAD_X = %d, CHAR_W = %.4f, TOTAL = %" PRId64
		", UNIT = \"", width, PAD_X, CHAR_W, total);
	js_word(f, s->unit ? s->unit : "bytes");
	fprintf(f, "\";\n%s]]></script>\n", script);
	fprintf(f, "<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\""
		" x2=\"0\" y2=\"1\"><stop stop-color=\"%s\" offset=\"5%%\"/>"
		"<stop stop-color=\"%s\" offset=\"95%%\"/></linearGradient></defs>\n",
		o->faults && !s->diff ? "#eef2ee" : "#f4f4f4",
		s->diff ? "#f4f4f4" : o->faults ? "#e0ffe0" : "#e2ecf6");
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\""
		" fill=\"url(#background)\"/>\n", width, height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">", width / 2);
	xml_str(f, title);
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">",
			width / 2, 24 + FRAME_H);
		xml_str(f, o->subtitle);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"24\">"
		"Reset Zoom</text>\n", PAD_X);
	fprintf(f, "<text id=\"search\" class=\"button\" x=\"%d\" y=\"24\">"
		"Search</text>\n", width - PAD_X);
	fprintf(f, "<text id=\"unsearch\" class=\"button hide\" x=\"%d\" y=\"24\">"
		"Reset Search</text>\n", width - PAD_X - 60);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", PAD_X,
		height - 12);
	fprintf(f, "<text id=\"matched\" class=\"hide\" x=\"%d\" y=\"%d\"> </text>\n",
		width - PAD_X, height - 12);
	if (!fs.n)
		fprintf(f, "<text id=\"empty\" x=\"%d\" y=\"%d\">No samples</text>\n",
			PAD_X, top + 12);
	fputs("<g id=\"frames\">\n", f);
	for (k = 0; k < fs.n; k++) {
		const struct frame *fr = &fs.v[k];
		double x = PAD_X + avail * fr->start / total;
		double w = avail * fr->value / total;
		double y;

		i = fr->depth;
		if (o->inverted)
			y = top + i * FRAME_H;
		else
			y = height - PAD_BOTTOM - (i + 1) * FRAME_H;
		write_frame(f, fr, x, y, w, total, s->unit, s->diff, maxdelta, o->faults);
	}
	fputs("</g>\n</svg>\n", f);
	free(fs.v);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* The default title of a graph of value type t: what its widths are. */
static const char *type_title(const struct profile *p, size_t t)
{
	static const struct { const char *type, *title; } titles[] = {
		{ "released", "Memory released flame graph" },
		{ "net", "Net memory growth flame graph" },
		{ "inuse_space", "Memory held at the end flame graph" },
		{ "inuse_objects", "Blocks held at the end flame graph" },
		{ "count", "Calls flame graph" },
	};

	for (size_t i = 0; t < p->ntypes && i < sizeof(titles) / sizeof(titles[0]); i++)
		if (!strcmp(p->types[t].type, titles[i].type))
			return titles[i].title;
	return NULL;
}

/* Is every sample of p of a fault kind (and one at least)? */
static int fault_graph(const struct profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		const char *e = p->samples[i].event;

		if (!e || !ev_name_is_fault(e))
			return 0;
		n++;
	}
	return n > 0;
}

int write_svg(FILE *f, const struct profile *p, const struct output_options *o)
{
	struct folded_set s = FOLDED_SET_INIT;
	struct output_options oo = { 0 };
	int ret;

	if (o)
		oo = *o;
	oo.faults = fault_graph(p);
	if (!oo.title)
		oo.title = type_title(p, oo.value_index ? oo.value_index - 1 : p->default_type);
	if (!oo.title && oo.faults)
		oo.title = "Page fault flame graph";
	if (folded_set_from_profile(&s, p, &oo) < 0)
		return -1;
	folded_set_finish(&s);
	ret = svg_write_set(f, &s, &oo);
	folded_set_release(&s);
	return ret;
}

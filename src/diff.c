/*
 * diff.c - `memtap diff BEFORE AFTER`: compare two recordings.
 *
 * Inputs are folded stacks ("stack N" lines, as `memtap -F folded`
 * writes them) or JSON reports (`memtap -F json`, recognized by their
 * first non-blank character '{').  The output is either the difffolded
 * format, "stack before after" per distinct stack (flamegraph.pl and
 * `memtap diff` draw it), or a differential SVG flame graph drawn by
 * out-svg.c: frame widths show AFTER, colours the change (red grew,
 * blue shrank).
 *
 * JSON reports are read back into a struct profile (one value type, the
 * one chosen by --type or the report's default) so that their frames
 * are named exactly as the folded writer names them.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "output.h"
#include "xmalloc.h"

static void diff_usage(FILE *f)
{
	fprintf(f,
"Usage: memtap diff [OPTIONS] BEFORE AFTER\n"
"Compare two recordings of memtap: folded stacks (-F folded) or JSON\n"
"reports (-F json).\n"
"\n"
"  -F, --format=FORMAT     folded (default): \"stack before after\" lines;\n"
"                          svg: a differential flame graph, widths from AFTER,\n"
"                          red where memory grew, blue where it shrank\n"
"  -h, --help              show this help and exit\n"
"      --inverted          SVG: icicle graph (roots at the top)\n"
"      --min-width=PIXELS  SVG: omit frames narrower than PIXELS (0.1)\n"
"      --no-comm           JSON inputs: no process-name root frame\n"
"      --no-demangle       JSON inputs: symbol names as in the binary\n"
"  -o, --output=FILE       write to FILE instead of stdout\n"
"      --subtitle=TEXT     SVG: second title line\n"
"  -t, --type=TYPE         JSON inputs: value type to compare (alloc_space,\n"
"                          mmap_space, ...; default: the report's default)\n"
"      --title=TEXT        SVG: title\n"
"      --width=PIXELS      SVG: image width (1200)\n"
"\n"
"Examples:\n"
"  memtap diff before.folded after.folded > growth.folded\n"
"  memtap diff -F svg -o growth.svg before.json after.json\n");
}

/*
 * A small JSON reader, enough for memtap's own reports: a tree of
 * values; numbers are kept as int64 (the report has no fractions).
 */
enum jtype { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	int64_t num;
	char *str;		/* J_STR */
	struct jval *items;	/* J_ARR, J_OBJ */
	char **keys;		/* J_OBJ */
	size_t n;
};

struct jparser {
	const char *s, *end;
	int depth;
};

static void jval_release(struct jval *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		jval_release(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

static void skip_ws(struct jparser *j)
{
	while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' ||
				 *j->s == '\n' || *j->s == '\r'))
		j->s++;
}

static int hex4(const char *s, unsigned *u)
{
	int i;

	*u = 0;
	for (i = 0; i < 4; i++) {
		char c = s[i];

		*u <<= 4;
		if (c >= '0' && c <= '9')
			*u |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*u |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*u |= c - 'A' + 10;
		else
			return -1;
	}
	return 0;
}

static void put_utf8(char **o, unsigned c)
{
	char *p = *o;

	if (c < 0x80) {
		*p++ = c;
	} else if (c < 0x800) {
		*p++ = 0xc0 | c >> 6;
		*p++ = 0x80 | (c & 0x3f);
	} else if (c < 0x10000) {
		*p++ = 0xe0 | c >> 12;
		*p++ = 0x80 | ((c >> 6) & 0x3f);
		*p++ = 0x80 | (c & 0x3f);
	} else {
		*p++ = 0xf0 | c >> 18;
		*p++ = 0x80 | ((c >> 12) & 0x3f);
		*p++ = 0x80 | ((c >> 6) & 0x3f);
		*p++ = 0x80 | (c & 0x3f);
	}
	*o = p;
}

/* Parse a string at j->s (on the opening quote) into a new buffer. */
static char *parse_string(struct jparser *j)
{
	const char *s = j->s + 1, *q = s;
	char *buf, *o;
	unsigned u, lo;

	/* its end first: escapes never make a string longer */
	while (q < j->end && *q != '"')
		q += *q == '\\' && q + 1 < j->end ? 2 : 1;
	if (q >= j->end)
		return NULL;
	buf = o = xmalloc((size_t)(q - s) + 1);
	while (s < q) {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		if (++s >= j->end)
			goto bad;
		switch (*s++) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (j->end - s < 4 || hex4(s, &u) < 0)
				goto bad;
			s += 4;
			if (u >= 0xd800 && u < 0xdc00 && j->end - s >= 6 &&
			    s[0] == '\\' && s[1] == 'u' && !hex4(s + 2, &lo) &&
			    lo >= 0xdc00 && lo < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			} else if (u >= 0xd800 && u < 0xe000) {
				u = 0xfffd;
			}
			put_utf8(&o, u);
			break;
		default:
			goto bad;
		}
	}
	if (s != q)
		goto bad;
	*o = '\0';
	j->s = s + 1;
	return buf;
bad:
	free(buf);
	return NULL;
}

static int parse_value(struct jparser *j, struct jval *v);

static int parse_container(struct jparser *j, struct jval *v, int obj)
{
	size_t alloc = 0, kalloc = 0;
	char close = obj ? '}' : ']';

	v->type = obj ? J_OBJ : J_ARR;
	j->s++;
	skip_ws(j);
	if (j->s < j->end && *j->s == close) {
		j->s++;
		return 0;
	}
	for (;;) {
		char *key = NULL;

		skip_ws(j);
		if (obj) {
			if (j->s >= j->end || *j->s != '"' ||
			    !(key = parse_string(j)))
				return -1;
			skip_ws(j);
			if (j->s >= j->end || *j->s != ':') {
				free(key);
				return -1;
			}
			j->s++;
			v->keys = xgrowarray(v->keys, &kalloc, v->n + 1,
					     sizeof(*v->keys));
			v->keys[v->n] = key;
		}
		v->items = xgrowarray(v->items, &alloc, v->n + 1,
				      sizeof(*v->items));
		v->n++;
		if (parse_value(j, &v->items[v->n - 1]) < 0)
			return -1;
		skip_ws(j);
		if (j->s < j->end && *j->s == ',') {
			j->s++;
			continue;
		}
		if (j->s < j->end && *j->s == close) {
			j->s++;
			return 0;
		}
		return -1;
	}
}

static int parse_value(struct jparser *j, struct jval *v)
{
	char *e;
	int ret;

	skip_ws(j);
	if (j->s >= j->end)
		return -1;
	switch (*j->s) {
	case '{':
	case '[':
		if (++j->depth > 64)
			return -1;
		ret = parse_container(j, v, *j->s == '{');
		j->depth--;
		return ret;
	case '"':
		v->type = J_STR;
		v->str = parse_string(j);
		return v->str ? 0 : -1;
	case 'n':
		v->type = J_NULL;
		ret = j->end - j->s >= 4 && !memcmp(j->s, "null", 4);
		j->s += 4;
		return ret ? 0 : -1;
	case 't':
		v->type = J_TRUE;
		ret = j->end - j->s >= 4 && !memcmp(j->s, "true", 4);
		j->s += 4;
		return ret ? 0 : -1;
	case 'f':
		v->type = J_FALSE;
		ret = j->end - j->s >= 5 && !memcmp(j->s, "false", 5);
		j->s += 5;
		return ret ? 0 : -1;
	default:
		v->type = J_NUM;
		errno = 0;
		v->num = strtoll(j->s, &e, 10);
		if (e == j->s || errno)
			return -1;
		/* fractions and exponents: not in memtap reports, skip */
		while (e < j->end && strchr("0123456789.eE+-", *e))
			e++;
		j->s = e;
		return 0;
	}
}

static const struct jval *jget(const struct jval *obj, const char *key,
			       enum jtype type)
{
	size_t i;

	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i].type == type ? &obj->items[i] : NULL;
	return NULL;
}

static const char *jstr(const struct jval *obj, const char *key)
{
	const struct jval *v = jget(obj, key, J_STR);

	return v ? v->str : NULL;
}

static uint64_t jhex(const struct jval *obj, const char *key)
{
	const char *s = jstr(obj, key);

	return s ? strtoull(s, NULL, 16) : 0;
}

/*
 * Rebuild one sample's locations: frames come leaf first, the inline
 * levels of a location innermost first, each but the last "inlined".
 */
static int add_json_sample(struct profile *p, const struct jval *sm,
			   size_t t)
{
	const struct jval *values = jget(sm, "values", J_ARR);
	const struct jval *frames = jget(sm, "frames", J_ARR);
	const struct jval *pid = jget(sm, "pid", J_NUM);
	struct prof_line *lines = NULL;
	size_t nlines = 0, alines = 0, *locs = NULL, nlocs = 0, alocs = 0, i;
	int64_t value;

	if (!values || t >= values->n || values->items[t].type != J_NUM ||
	    !frames)
		return -1;
	value = values->items[t].num;
	for (i = 0; i < frames->n; i++) {
		const struct jval *fr = &frames->items[i];
		const char *fn = jstr(fr, "function");
		const char *module = jstr(fr, "module");
		const struct jval *line = jget(fr, "line", J_NUM);
		size_t mapping = (size_t)-1;
		uint64_t address = jhex(fr, "address");

		if (fn) {
			lines = xgrowarray(lines, &alines, nlines + 1,
					   sizeof(*lines));
			lines[nlines].function = profile_add_function(p, fn,
				jstr(fr, "system_name"), jstr(fr, "file"));
			lines[nlines].line = line ? line->num : 0;
			nlines++;
		}
		if (jget(fr, "inlined", J_TRUE))
			continue;
		if (module) {
			/* module-relative: the folded writer's offsets */
			mapping = profile_add_mapping(p, 0, 0, 0, module, NULL);
			address = jhex(fr, "module_offset");
		}
		locs = xgrowarray(locs, &alocs, nlocs + 1, sizeof(*locs));
		locs[nlocs++] = profile_add_location(p, address, mapping,
						     lines, nlines);
		nlines = 0;
	}
	profile_add_sample(p, locs, nlocs, &value, pid ? (pid_t)pid->num : 0,
			   jstr(sm, "comm"), jstr(sm, "event"));
	free(lines);
	free(locs);
	return 0;
}

/* Read a JSON report into p (one value type). */
static int load_json(const char *path, const char *text, size_t len,
		     struct profile *p, const char *type)
{
	struct jparser j = { text, text + len, 0 };
	struct jval root = { 0 };
	const struct jval *types, *samples, *ty;
	size_t t, i;
	int ret = -1;

	if (parse_value(&j, &root) < 0) {
		error_msg("'%s': not a valid JSON report near byte %zu", path,
			  (size_t)(j.s - text));
		goto out;
	}
	types = jget(&root, "value_types", J_ARR);
	samples = jget(&root, "samples", J_ARR);
	if (!types || !samples) {
		error_msg("'%s': no value_types or samples: not a memtap JSON"
			  " report", path);
		goto out;
	}
	if (!type)
		type = jstr(&root, "default_type");
	for (t = 0; t < types->n; t++)
		if (type && jstr(&types->items[t], "type") &&
		    !strcmp(jstr(&types->items[t], "type"), type))
			break;
	if (t == types->n) {
		error_msg("'%s': no value type '%s'", path, type ? type : "");
		goto out;
	}
	ty = &types->items[t];
	profile_add_value_type(p, type, jstr(ty, "unit") ? jstr(ty, "unit") :
			       "bytes");
	for (i = 0; i < samples->n; i++) {
		if (add_json_sample(p, &samples->items[i], t) < 0) {
			error_msg("'%s': sample %zu is malformed", path, i);
			goto out;
		}
	}
	ret = 0;
out:
	jval_release(&root);
	return ret;
}

/*
 * Read the rest of f (a JSON report) into a NUL-terminated buffer, at
 * most FOLDED_MAX_INPUT bytes.
 */
static char *read_rest(const char *path, FILE *f, size_t *len)
{
	size_t cap = 65536, n = 0, r;
	char *buf = xmalloc(cap);

	while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n > FOLDED_MAX_INPUT) {
			error_msg("'%s': larger than %llu MiB, the limit of memtap diff inputs",
				  path, FOLDED_MAX_INPUT >> 20);
			free(buf);
			return NULL;
		}
		if (cap - n - 1 == 0)
			buf = xrealloc(buf, cap *= 2);
	}
	if (ferror(f)) {
		perror_msg("cannot read '%s'", path);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The first character of f that is not white space, put back; or EOF. */
static int peek_nonblank(FILE *f)
{
	uint64_t n = 0;
	int c;

	while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		if (++n > FOLDED_MAX_INPUT) {
			errno = EFBIG;
			return EOF;
		}
	if (c != EOF)
		ungetc(c, f);
	else if (!ferror(f))
		errno = 0;
	return c;
}

int diff_load(struct folded_set *s, const char *path, FILE *f, int after,
	      const struct output_options *o, const char *type)
{
	struct profile p = { 0 };
	size_t len, first = s->n, i;
	char *text = NULL;
	long bad;
	int c, ret = -1;

	c = peek_nonblank(f);
	if (c == EOF && errno) {
		if (errno == EFBIG)
			error_msg("'%s': larger than %llu MiB, the limit of memtap diff inputs",
				  path, FOLDED_MAX_INPUT >> 20);
		else
			perror_msg("cannot read '%s'", path);
		goto out;
	}
	if (c == '{') {
		struct output_options po = *o;

		po.value_index = 0;
		po.base_index = 0;
		static char unit[32];

		text = read_rest(path, f, &len);
		if (!text || load_json(path, text, len, &p, type) < 0 ||
		    folded_set_from_profile(s, &p, &po) < 0)
			goto out;
		/* s->unit pointed into p, which goes away */
		snprintf(unit, sizeof(unit), "%s", s->unit);
		s->unit = unit;
	} else {
		bad = folded_set_parse(s, f);
		if (bad < 0) {
			if (errno == E2BIG)
				error_msg("'%s': a line is longer than %d MiB: not folded stacks",
					  path, FOLDED_MAX_LINE >> 20);
			else if (errno == EFBIG)
				error_msg("'%s': more than %llu MiB or %d stacks, the limits of "
					  "memtap diff inputs", path, FOLDED_MAX_INPUT >> 20,
					  FOLDED_MAX_STACKS);
			else
				perror_msg("cannot read '%s'", path);
			goto out;
		}
		if (bad)
			warn_msg("'%s': %ld lines are not \"stack count\": skipped",
				 path, bad);
	}
	if (!after)
		for (i = first; i < s->n; i++) {
			s->stacks[i].base = s->stacks[i].value;
			s->stacks[i].value = 0;
		}
	ret = 0;
out:
	profile_release(&p);
	free(text);
	return ret;
}

/* Append the stacks of the file at path to s (see diff_load). */
static int load_input(struct folded_set *s, const char *path, int after,
		      const struct output_options *o, const char *type)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f) {
		perror_msg("cannot open '%s'", path);
		return -1;
	}
	ret = diff_load(s, path, f, after, o, type);
	fclose(f);
	return ret;
}

enum {
	OPT_INVERTED = 256,
	OPT_MIN_WIDTH,
	OPT_NO_COMM,
	OPT_NO_DEMANGLE,
	OPT_SUBTITLE,
	OPT_TITLE,
	OPT_WIDTH,
};

int diff_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "min-width", required_argument, NULL, OPT_MIN_WIDTH },
		{ "no-comm", no_argument, NULL, OPT_NO_COMM },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "output", required_argument, NULL, 'o' },
		{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "type", required_argument, NULL, 't' },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ NULL, 0, NULL, 0 },
	};
	struct output_options o = { 0 };
	struct folded_set s = FOLDED_SET_INIT;
	const char *output = NULL, *type = NULL;
	int svg = 0, c, ret = EXIT_RUNTIME;
	FILE *out = stdout;
	char *end;

	optind = 0;	/* glibc: start over, even after main()'s getopt */
	while ((c = getopt_long(argc, argv, "F:ho:t:", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (!strcmp(optarg, "svg"))
				svg = 1;
			else if (!strcmp(optarg, "folded"))
				svg = 0;
			else
				usage_error("diff: unknown format '%s' (folded or svg)",
					    optarg);
			break;
		case 'h':
			diff_usage(stdout);
			return 0;
		case OPT_INVERTED:
			o.inverted = 1;
			break;
		case OPT_MIN_WIDTH:
			o.min_width = strtod(optarg, &end);
			if (*end || o.min_width < 0)
				usage_error("diff: bad --min-width '%s'", optarg);
			break;
		case OPT_NO_COMM:
			o.no_comm = 1;
			break;
		case OPT_NO_DEMANGLE:
			o.no_demangle = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_SUBTITLE:
			o.subtitle = optarg;
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case 't':
			type = optarg;
			break;
		case OPT_WIDTH:
			o.width = (int)strtol(optarg, &end, 10);
			if (*end || o.width < 100 || o.width > 100000)
				usage_error("diff: bad --width '%s' (100 to 100000)",
					    optarg);
			break;
		default:
			usage_error("diff: bad option");
		}
	}
	if (argc - optind != 2)
		usage_error("diff: expected two files, BEFORE and AFTER");

	if (load_input(&s, argv[optind], 0, &o, type) < 0 ||
	    load_input(&s, argv[optind + 1], 1, &o, type) < 0)
		goto out;
	s.diff = 1;
	folded_set_finish(&s);

	if (output) {
		out = fopen(output, "we");
		if (!out) {
			perror_msg("cannot open output file '%s'", output);
			goto out;
		}
	}
	errno = 0;
	c = svg ? svg_write_set(out, &s, &o) : folded_set_write(out, &s);
	if ((out != stdout ? fclose(out) : fflush(out)) != 0)
		c = -1;
	if (c < 0) {
		perror_msg("cannot write %s", output ? output : "standard output");
		goto out;
	}
	ret = 0;
out:
	folded_set_release(&s);
	return ret;
}

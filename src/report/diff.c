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
 * JSON reports are recordings (recording.c), read back into a struct
 * profile and weighed by one value type, the one chosen by --type or
 * the recording's default, so that their frames are named exactly as
 * the folded writer names them.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/optparse.h"
#include "util/outfile.h"
#include "report/output.h"
#include "util/xmalloc.h"

static void diff_usage(FILE *f)
{
	fprintf(f,
"Usage: memtap diff [OPTIONS] BEFORE AFTER\n"
"Compare two recordings of memtap: folded stacks (-F folded) or JSON\n"
"reports (-F json, --record FILE).\n"
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
	size_t first = s->n, i;
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

		if (recording_read(path, f, &p) < 0)
			goto out;
		if (type && profile_find_type(&p, type) == (size_t)-1) {
			error_msg("'%s': no value type '%s'", path, type);
			goto out;
		}
		if (type)
			po.value_index = profile_find_type(&p, type) + 1;
		if (folded_set_from_profile(s, &p, &po) < 0)
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

/* The differential set and its options, for outfile_write(). */
struct diff_write {
	const struct folded_set *s;
	const struct output_options *o;
};

static int write_diff_svg(FILE *f, const void *arg)
{
	const struct diff_write *dw = arg;

	return svg_write_set(f, dw->s, dw->o);
}

static int write_diff_folded(FILE *f, const void *arg)
{
	const struct diff_write *dw = arg;

	return folded_set_write(f, dw->s);
}

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
	struct diff_write dw;
	int svg = 0, c, ret = EXIT_RUNTIME;

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
			if (parse_decimal(optarg, &o.min_width) < 0)
				usage_error("diff: invalid value '%s' for --min-width (want a "
					    "decimal number of pixels)", optarg);
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
			o.width = (int)xparse_whole(optarg, "diff --width", 100, 100000);
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

	dw.s = &s;
	dw.o = &o;
	if (outfile_write(output, svg ? write_diff_svg : write_diff_folded, &dw) < 0)
		goto out;
	ret = 0;
out:
	folded_set_release(&s);
	return ret;
}

/*
 * cli/diff.c - the command line of `memtap diff [OPTIONS] BEFORE AFTER`:
 * its options and usage; report/diff.c compares and writes.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/optparse.h"
#include "report/output.h"
#include "cli/cli.h"

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
	const char *output = NULL, *type = NULL;
	int svg = 0, c;

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

	if (diff_files(argv[optind], argv[optind + 1], type, svg, &o, output) < 0)
		return EXIT_RUNTIME;
	return 0;
}

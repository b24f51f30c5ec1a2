/*
 * cli/report.c - the command line of `memtap report [OPTIONS] RECORDING`:
 * its options and usage; report/recording.c reads and writes.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/optparse.h"
#include "report/output.h"
#include "cli/cli.h"

static void report_usage(void)
{
	printf(
"Usage: memtap report [OPTIONS] RECORDING\n"
"Write a recording (memtap --record FILE, or -F json) as a report again,\n"
"in any format and view, without the traced program.\n"
"\n"
"  -F, --format=FORMAT     text (default), folded, svg, pprof, json or html\n"
"                          (an -i recording's timeline page); also chosen by\n"
"                          -o FILE's suffix (.folded .svg .pb.gz .json .html)\n"
"  -h, --help              show this help and exit\n"
"      --inverted          svg: icicle graph, roots at the top\n"
"      --leaks             weigh stacks by what they still held at the end\n"
"      --net               weigh stacks by bytes acquired minus released\n"
"      --no-demangle       show C++ and Rust names as in the binary\n"
"  -o, --output=FILE       write to FILE instead of stdout\n"
"      --suspects          text: the leak suspects of an -i recording, stacks\n"
"                          whose held bytes rose steadily over the intervals\n"
"      --title=TEXT        svg: the title\n"
"      --top=N             text: the N heaviest stacks per event (default 10)\n"
"      --weight=WHAT       weigh stacks by bytes (acquired), count, released or\n"
"                          peak (held when the held bytes were highest)\n"
"Without --leaks, --net or --weight, the view of the recording's run.\n"
"\n"
"Examples:\n"
"  memtap --record run.json -p 1234 -d 60  record on the production host\n"
"  memtap report run.json                  the text report, anywhere\n"
"  memtap report --leaks -o held.svg run.json\n"
"  memtap -i 60 --leaks --record day.json -p 1234   a day, interval by interval\n"
"  memtap report --suspects day.json       the stacks that leak\n"
"  memtap report -o day.html day.json      its timeline, to look at in a browser\n");
}

enum {
	OPT_INVERTED = 256,
	OPT_LEAKS,
	OPT_NET,
	OPT_NO_DEMANGLE,
	OPT_SUSPECTS,
	OPT_TITLE,
	OPT_TOP,
	OPT_WEIGHT,
};

int report_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "leaks", no_argument, NULL, OPT_LEAKS },
		{ "net", no_argument, NULL, OPT_NET },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "output", required_argument, NULL, 'o' },
		{ "suspects", no_argument, NULL, OPT_SUSPECTS },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ NULL, 0, NULL, 0 },
	};
	struct output_options o = { 0 };
	const char *output = NULL;
	int c, format = -1, weight = 0, net = 0, leaks = 0, suspects = 0;

	optind = 0;	/* glibc: start over */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:F:ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			format = output_format_parse(optarg);
			if (format < 0)
				usage_error("report: invalid format '%s' for -F (want text, folded, "
					    "svg, pprof, json or html)", optarg);
			break;
		case 'h':
			report_usage();
			return 0;
		case OPT_INVERTED:
			o.inverted = 1;
			break;
		case OPT_LEAKS:
			leaks = 1;
			break;
		case OPT_SUSPECTS:
			suspects = 1;
			break;
		case OPT_NET:
			net = 1;
			break;
		case OPT_NO_DEMANGLE:
			o.no_demangle = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case OPT_TOP:
			o.top = (int)xparse_whole(optarg, "report --top", 1, 1000000);
			break;
		case OPT_WEIGHT:
			weight = weight_parse(optarg);
			if (weight < 0)
				usage_error("report: invalid value '%s' for --weight (want bytes, "
					    "count, released or peak)", optarg);
			break;
		case ':':
			usage_error("report: option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("report: unrecognized option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		usage_error("report: expected one recording file");
	if (format < 0)
		format = output && output_format_from_path(output) >= 0 ?
			 output_format_from_path(output) : 0;
	if (view_conflict(weight, net, leaks))
		usage_error("report: %s", view_conflict(weight, net, leaks));
	if (format == 3 && !output && isatty(STDOUT_FILENO))
		usage_error("report: -F pprof writes gzip data: give -o FILE.pb.gz or redirect "
			    "stdout");
	if (suspects && format != FORMAT_TEXT)
		usage_error("report: --suspects writes text: not with -F %s",
			    output_format_names[format]);
	if (report_recording(argv[optind], format, weight, net, leaks, suspects, &o, output) < 0)
		return EXIT_RUNTIME;
	return 0;
}

/*
 * sampling.c - which allocator calls the in-target probes keep: every
 * one (--exact), or one per so many bytes allocated on average
 * (--sample, adapted by --overhead; record/sample.h has the model).
 *
 * The default for allocator events with detours is sampling at
 * SAMPLE_MEAN_DEFAULT: a record costs memtap an unwind (microseconds),
 * which a program calling malloc millions of times a second cannot be
 * made to wait for, while the exact counters per function cost the
 * stubs nanoseconds.  Every call is kept instead when the numbers
 * asked for need each call: --exact, --trace (one line per call),
 * --probes=int3 (a stop per call anyway: nothing to save).  --leaks
 * samples too: the stubs follow each sampled block to its free (a set
 * of sampled pointers in the target), and the held bytes per stack are
 * estimates.
 */
#include "config.h"

#include <stdlib.h>

#include "cli/options.h"
#include "cli/sampling.h"
#include "record/sample.h"
#include "report/events.h"
#include "util/error.h"
#include "util/optparse.h"

void sampling_parse_sample(const char *arg)
{
	if (parse_size(arg, &opt.sample) < 0)
		usage_error("invalid size '%s' for --sample (e.g. 0, 4096, 512K, 2M)", arg);
	opt.sample_given = 1;
}

void sampling_parse_overhead(const char *arg)
{
	if (parse_decimal(arg, &opt.overhead) < 0 || !(opt.overhead > 0) || opt.overhead > 100)
		usage_error("invalid value '%s' for --overhead (want a percentage, > 0 and <= 100)",
			    arg);
}

uint64_t sampling_mean(void)
{
	int sampled = opt.sample_given ? opt.sample > 0 : !opt.exact;

	if (opt.sample_given && opt.sample > 0 && opt.exact)
		usage_error("--sample and --exact exclude each other");
	if (opt.overhead > 0 && !sampled)
		usage_error("--overhead adapts the sampling: not with --exact or --sample 0");
	if (opt.sample_given || opt.overhead > 0) {
		if (!(opt.events & EV_ALLOC))
			usage_error("--sample and --overhead go with allocator events (-e alloc, "
				    "malloc...)");
		if (opt.probes == PROBES_INT3)
			usage_error("--sample and --overhead need --probes=detour: with int3 every "
				    "call stops, and memtap keeps each");
	}
	if (!sampled || !(opt.events & EV_ALLOC) || opt.probes == PROBES_INT3 ||
	    (opt.trace && !opt.sample_given))
		return 0;
	return opt.sample_given ? opt.sample : SAMPLE_MEAN_DEFAULT;
}

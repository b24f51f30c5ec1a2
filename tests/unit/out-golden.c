/*
 * out-golden.c - write fixed profiles in every output format, for the
 * tests/out-*.test scripts to compare with tests/golden/ and to feed to
 * independent readers.
 *
 * Usage: out-golden FIXTURE FORMAT [OPTIONS]
 *   FIXTURE: basic (names needing escaping, 3 inline levels, unknown
 *            frames, merged samples), deep (a 200-frame stack), many
 *            (10,000 samples), empty (types, no sample), void (nothing)
 *   FORMAT:  folded, svg, pprof, json, or total (one "type total" line
 *            per value type)
 *   OPTIONS: --value N (1-based type), --inverted, --no-comm, --mangled,
 *            --events auto|always|never, --min-width PX, --width PX,
 *            --title T, --subtitle T
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/output.h"

static size_t line_loc(struct profile *p, uint64_t addr, size_t map,
		       size_t fn, int64_t line)
{
	struct prof_line l = { fn, line };

	return profile_add_location(p, addr, map, &l, 1);
}

static void sample(struct profile *p, const size_t *locs, size_t n,
		   int64_t v0, int64_t v1, pid_t pid, const char *comm,
		   const char *event)
{
	int64_t v[2] = { v0, v1 };

	profile_add_sample(p, locs, n, v, pid, comm, event);
}

static void fixture_basic(struct profile *p)
{
	size_t m0, m1, fmain, fhandle, fpush, fquote, fa, fb, fc, fmalloc,
	       fodd, fumlaut, fesc;
	size_t l_main, l_handle, l_push, l_inl, l_malloc, l_unk_libc, l_unk,
	       l_quote, l_odd, l_umlaut, l_esc;
	struct prof_line inl[3];

	profile_add_value_type(p, "alloc_space", "bytes");
	profile_add_value_type(p, "alloc_objects", "count");
	p->default_type = 0;
	p->time_nanos = 1700000000123456789LL;
	p->duration_nanos = 5000000000LL;

	m0 = profile_add_mapping(p, 0x400000, 0x500000, 0, "/usr/bin/server",
				 "0123456789abcdef");
	m1 = profile_add_mapping(p, 0x7f0000000000ULL, 0x7f0000100000ULL,
				 0x28000, "/usr/lib/x86_64-linux-gnu/libc.so.6",
				 NULL);

	fmain = profile_add_function(p, "main", "main", "server.c");
	fhandle = profile_add_function(p, "handle_request", "handle_request",
				       "server.c");
	fpush = profile_add_function(p,
		"std::vector<int, std::allocator<int> >::push_back(int const&)",
		"_ZNSt6vectorIiSaIiEE9push_backERKi",
		"/usr/include/c++/12/bits/stl_vector.h");
	fquote = profile_add_function(p, "parse \"quoted\" & <tagged>",
				      "parse_quoted", "parse.c");
	fa = profile_add_function(p, "inline_a", "inline_a", "inl.h");
	fb = profile_add_function(p, "inline_b", "inline_b", "inl.h");
	fc = profile_add_function(p, "inline_c", "inline_c", "inl.h");
	fmalloc = profile_add_function(p, "malloc", "malloc", NULL);
	fodd = profile_add_function(p, "odd;name\n\xff", "odd_name", NULL);
	fumlaut = profile_add_function(p, "gr\xc3\xb6\xc3\x9f" "e_\xc3\xa4",
				       "groesse", NULL);
	fesc = profile_add_function(p, "back\\slash\ttab/'apos'", "esc", NULL);

	l_main = line_loc(p, 0x401000, m0, fmain, 10);
	l_handle = line_loc(p, 0x401100, m0, fhandle, 20);
	l_push = line_loc(p, 0x401200, m0, fpush, 1200);
	inl[0].function = fc;	/* innermost */
	inl[0].line = 3;
	inl[1].function = fb;
	inl[1].line = 2;
	inl[2].function = fa;	/* contains the address */
	inl[2].line = 1;
	l_inl = profile_add_location(p, 0x401300, m0, inl, 3);
	l_malloc = line_loc(p, 0x7f0000001234ULL, m1, fmalloc, 0);
	l_unk_libc = profile_add_location(p, 0x7f0000005678ULL, m1, NULL, 0);
	l_unk = profile_add_location(p, 0xdeadbeef, (size_t)-1, NULL, 0);
	l_quote = line_loc(p, 0x401400, m0, fquote, 7);
	l_odd = line_loc(p, 0x401500, m0, fodd, 0);
	l_umlaut = line_loc(p, 0x401600, m0, fumlaut, 0);
	l_esc = line_loc(p, 0x401700, m0, fesc, 0);

	{
		size_t s0[] = { l_malloc, l_push, l_handle, l_main };
		size_t s1[] = { l_malloc, l_inl, l_handle, l_main };
		size_t s2[] = { l_unk_libc, l_quote, l_main };
		size_t s3[] = { l_unk };
		size_t s4[] = { l_malloc, l_odd, l_main };
		size_t s5[] = { l_malloc, l_umlaut, l_esc, l_main };
		size_t s8[] = { l_main };

		sample(p, s0, 4, 4096, 1, 100, "server", "malloc");
		sample(p, s1, 4, 1000, 10, 100, "server", "malloc");
		sample(p, s2, 3, 65536, 1, 100, "server", "mmap");
		sample(p, s3, 1, 8192, 2, 101, "worker<1>&", "malloc");
		sample(p, s4, 3, 100, 1, 100, "server", "malloc");
		sample(p, s5, 4, 200, 2, 100, "server", "malloc");
		/* merged into the first sample */
		sample(p, s0, 4, 4096, 1, 100, "server", "malloc");
		/* another pid: its own sample, the same folded line */
		sample(p, s0, 4, 50, 0, 102, "server", "malloc");
		/* weighs nothing in bytes */
		sample(p, s8, 1, 0, 1, 100, "server", "malloc");
	}
}

static void fixture_deep(struct profile *p)
{
	size_t locs[200], i, m;
	char name[16];

	profile_add_value_type(p, "mmap_space", "bytes");
	m = profile_add_mapping(p, 0x400000, 0x500000, 0, "/usr/bin/deep", NULL);
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "f%03zu", i);
		/* leaf first: f199 is the leaf, f000 the root */
		locs[199 - i] = line_loc(p, 0x401000 + i * 16, m,
			profile_add_function(p, name, name, "deep.c"),
			(int64_t)i + 1);
	}
	{
		int64_t v = 1234;

		profile_add_sample(p, locs, 200, &v, 7, "deep", "mmap");
		v = 10;
		/* the outer 100 frames only */
		profile_add_sample(p, locs + 100, 100, &v, 7, "deep", "mmap");
	}
}

static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

static void fixture_many(struct profile *p)
{
	size_t funcs[50], locs[20], i, k, m;
	uint32_t seed = 42;
	char name[16], comm[8];

	profile_add_value_type(p, "alloc_space", "bytes");
	profile_add_value_type(p, "alloc_objects", "count");
	m = profile_add_mapping(p, 0x400000, 0x500000, 0, "/usr/bin/many", NULL);
	for (i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "fn%02zu", i);
		funcs[i] = profile_add_function(p, name, name, "many.c");
	}
	for (i = 0; i < 10000; i++) {
		size_t depth = 1 + lcg(&seed) % 20;
		int64_t v[2];

		for (k = 0; k < depth; k++) {
			size_t fn = lcg(&seed) % 50;

			locs[k] = line_loc(p, 0x401000 + fn * 64, m, funcs[fn],
					   (int64_t)fn);
		}
		v[0] = 1 + lcg(&seed) % 100000;
		v[1] = 1;
		snprintf(comm, sizeof(comm), "w%u", (unsigned)(i % 4));
		profile_add_sample(p, locs, depth, v, 1000 + (pid_t)(i % 4),
				   comm, i % 3 ? "malloc" : "mmap");
	}
}

static void fixture_empty(struct profile *p)
{
	profile_add_value_type(p, "alloc_space", "bytes");
}

int main(int argc, char **argv)
{
	struct output_options o = { 0 };
	struct profile p = { 0 };
	const char *fixture, *format;
	int i, ret;

	if (argc < 3) {
		fprintf(stderr, "usage: out-golden FIXTURE FORMAT [OPTIONS]\n");
		return 99;
	}
	fixture = argv[1];
	format = argv[2];
	for (i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--inverted")) {
			o.inverted = 1;
		} else if (!strcmp(a, "--no-comm")) {
			o.no_comm = 1;
		} else if (!strcmp(a, "--mangled")) {
			o.no_demangle = 1;
		} else if (v && !strcmp(a, "--value")) {
			o.value_index = strtoul(v, NULL, 10);
			i++;
		} else if (v && !strcmp(a, "--events")) {
			o.event_frame = !strcmp(v, "always") ? OUT_EVENT_ALWAYS :
					!strcmp(v, "never") ? OUT_EVENT_NEVER :
					OUT_EVENT_AUTO;
			i++;
		} else if (v && !strcmp(a, "--min-width")) {
			o.min_width = strtod(v, NULL);
			i++;
		} else if (v && !strcmp(a, "--width")) {
			o.width = atoi(v);
			i++;
		} else if (v && !strcmp(a, "--title")) {
			o.title = v;
			i++;
		} else if (v && !strcmp(a, "--subtitle")) {
			o.subtitle = v;
			i++;
		} else {
			fprintf(stderr, "out-golden: bad option '%s'\n", a);
			return 99;
		}
	}

	if (!strcmp(fixture, "basic"))
		fixture_basic(&p);
	else if (!strcmp(fixture, "deep"))
		fixture_deep(&p);
	else if (!strcmp(fixture, "many"))
		fixture_many(&p);
	else if (!strcmp(fixture, "empty"))
		fixture_empty(&p);
	else if (strcmp(fixture, "void")) {
		fprintf(stderr, "out-golden: unknown fixture '%s'\n", fixture);
		return 99;
	}

	if (!strcmp(format, "folded")) {
		ret = write_folded(stdout, &p, &o);
	} else if (!strcmp(format, "svg")) {
		ret = write_svg(stdout, &p, &o);
	} else if (!strcmp(format, "pprof")) {
		ret = write_pprof(stdout, &p, &o);
	} else if (!strcmp(format, "json")) {
		ret = write_json(stdout, &p, &o);
	} else if (!strcmp(format, "total")) {
		size_t t;

		for (t = 0; t < p.ntypes; t++)
			printf("%s %" PRId64 "\n", p.types[t].type,
			       profile_total(&p, t));
		ret = 0;
	} else {
		fprintf(stderr, "out-golden: unknown format '%s'\n", format);
		return 99;
	}
	profile_release(&p);
	if (ret < 0) {
		perror("out-golden: write");
		return 1;
	}
	return fclose(stdout) ? 1 : 0;
}

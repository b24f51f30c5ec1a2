/*
 * profile-test.c - unit tests of the profile builder (src/report/profile.c)
 * and of the folded stack set (src/report/out-folded.c).  Prints one line per
 * check and "N passed, N failed"; exits 1 when a check fails.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/output.h"

static int passed, failed;

#define CHECK(cond) check(!!(cond), #cond, __LINE__)

static void check(int ok, const char *what, int line)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL line %d: %s\n", line, what);
}

static void test_dedup(void)
{
	struct profile p = { 0 };
	struct prof_line l1 = { 0, 5 }, l2 = { 0, 6 };
	size_t t, m, m2, f, f2, f3, f4, loc, loc2, loc3, s, s2, s3, i;
	size_t locs[2];
	int64_t v[2] = { 10, 1 };

	t = profile_add_value_type(&p, "alloc_space", "bytes");
	CHECK(t == 0);
	CHECK(profile_add_value_type(&p, "alloc_objects", "count") == 1);
	CHECK(profile_add_value_type(&p, "alloc_space", "bytes") == 0);
	CHECK(p.ntypes == 2);

	m = profile_add_mapping(&p, 0x1000, 0x2000, 0, "/bin/a", "ab");
	m2 = profile_add_mapping(&p, 0x1000, 0x2000, 0, "/bin/a", NULL);
	CHECK(m == 0 && m2 == 1);
	CHECK(profile_add_mapping(&p, 0x1000, 0x2000, 0, "/bin/a", "ab") == 0);

	f = profile_add_function(&p, "f", "f", "a.c");
	f2 = profile_add_function(&p, "f", "f", NULL);
	f3 = profile_add_function(&p, "f", "f", "");
	f4 = profile_add_function(&p, "f", "f", "a.c");
	CHECK(f == 0 && f2 == 1 && f3 == 2 && f4 == 0);
	CHECK(p.nfunctions == 3);
	CHECK(p.functions[1].file == NULL);
	CHECK(!strcmp(p.functions[2].file, ""));

	loc = profile_add_location(&p, 0x1010, m, &l1, 1);
	loc2 = profile_add_location(&p, 0x1010, m, &l2, 1);
	loc3 = profile_add_location(&p, 0x1010, m, &l1, 1);
	CHECK(loc == 0 && loc2 == 1 && loc3 == 0);
	CHECK(profile_add_location(&p, 0x1010, (size_t)-1, NULL, 0) == 2);
	CHECK(profile_add_location(&p, 0x1010, (size_t)-1, NULL, 0) == 2);

	locs[0] = loc;
	locs[1] = loc2;
	s = profile_add_sample(&p, locs, 2, v, 1, "a", "malloc");
	s2 = profile_add_sample(&p, locs, 2, v, 1, "a", "malloc");
	s3 = profile_add_sample(&p, locs, 2, v, 2, "a", "malloc");
	CHECK(s == 0 && s2 == 0 && s3 == 1);
	CHECK(profile_add_sample(&p, locs, 2, v, 1, "a", "mmap") == 2);
	CHECK(profile_add_sample(&p, locs, 1, v, 1, "a", "malloc") == 3);
	CHECK(profile_add_sample(&p, NULL, 0, v, 1, "a", "malloc") == 4);
	CHECK(profile_add_sample(&p, NULL, 0, v, 1, "a", "malloc") == 4);
	CHECK(p.samples[0].values[0] == 20 && p.samples[0].values[1] == 2);
	CHECK(profile_total(&p, 0) == 70);
	CHECK(profile_total(&p, 1) == 7);
	CHECK(profile_total(&p, 2) == 0);

	/* many entries: the index grows and still finds them */
	for (i = 0; i < 5000; i++) {
		char name[16];

		snprintf(name, sizeof(name), "g%zu", i);
		CHECK(profile_add_function(&p, name, NULL, NULL) == 3 + i);
	}
	for (i = 0; i < 5000; i += 7) {
		char name[16];

		snprintf(name, sizeof(name), "g%zu", i);
		if (profile_add_function(&p, name, NULL, NULL) != 3 + i)
			CHECK(!"re-adding g<i> gives its index");
	}
	CHECK(p.nfunctions == 5003);

	profile_release(&p);
	CHECK(p.nfunctions == 0 && p.functions == NULL && p.nsamples == 0);
	/* reusable after release, with a fresh index */
	CHECK(profile_add_function(&p, "f", "f", "a.c") == 0);
	profile_release(&p);
}

/* Arrays filled by hand, then extended through the helpers. */
static void test_hand_built(void)
{
	struct profile p = { 0 };

	p.functions = calloc(1, sizeof(*p.functions));
	p.functions[0].name = strdup("x");
	p.nfunctions = 1;
	CHECK(profile_add_function(&p, "x", NULL, NULL) == 0);
	CHECK(profile_add_function(&p, "y", NULL, NULL) == 1);
	CHECK(p.nfunctions == 2 && !strcmp(p.functions[0].name, "x"));
	profile_release(&p);
}

static void test_folded_set(void)
{
	struct folded_set s = FOLDED_SET_INIT;
	char text[] = "a;b 5\na;b!x 1\n\na;b;c 2\nbroken\na;b 3\nz -4\n"
		      "with space;[unknown] (lib.so+0x10) 7\r\n";
	FILE *f = fmemopen(text, strlen(text), "r");

	CHECK(folded_set_parse(&s, f) == 1);
	fclose(f);
	CHECK(s.n == 6);
	folded_set_finish(&s);
	/* frame order: "a;b" < "a;b;c" < "a;b!x"; negatives dropped */
	CHECK(s.n == 4);
	CHECK(s.n == 4 && !strcmp(s.stacks[0].stack, "a;b") &&
	      s.stacks[0].value == 8);
	CHECK(s.n == 4 && !strcmp(s.stacks[1].stack, "a;b;c"));
	CHECK(s.n == 4 && !strcmp(s.stacks[2].stack, "a;b!x"));
	CHECK(s.n == 4 &&
	      !strcmp(s.stacks[3].stack, "with space;[unknown] (lib.so+0x10)") &&
	      s.stacks[3].value == 7);
	folded_set_release(&s);

	/* differential: "stack before after" */
	{
		char dtext[] = "a;b 1 5\na;c 7\n";

		s.diff = 1;
		f = fmemopen(dtext, strlen(dtext), "r");
		CHECK(folded_set_parse(&s, f) == 0);
		fclose(f);
		folded_set_finish(&s);
		CHECK(s.n == 2 && s.stacks[0].base == 1 &&
		      s.stacks[0].value == 5);
		CHECK(s.n == 2 && s.stacks[1].base == 0 &&
		      s.stacks[1].value == 7);
		folded_set_release(&s);
	}
}

static void test_human(void)
{
	char buf[32];

	CHECK(!strcmp(out_human_bytes(buf, sizeof(buf), 0), "0 bytes"));
	CHECK(!strcmp(out_human_bytes(buf, sizeof(buf), 1023), "1023 bytes"));
	CHECK(!strcmp(out_human_bytes(buf, sizeof(buf), 1024), "1.00 KiB"));
	CHECK(!strcmp(out_human_bytes(buf, sizeof(buf), 1536), "1.50 KiB"));
	CHECK(!strcmp(out_human_bytes(buf, sizeof(buf), 3 << 20), "3.00 MiB"));
	CHECK(!strcmp(out_human_bytes(buf, sizeof(buf), -2048), "-2.00 KiB"));
	CHECK(!strcmp(out_human_bytes(buf, sizeof(buf), 1LL << 30), "1.00 GiB"));
}

static void test_utf8(void)
{
	CHECK(out_utf8_len("a") == 1);
	CHECK(out_utf8_len("\xc3\xa4") == 2);
	CHECK(out_utf8_len("\xe2\x82\xac") == 3);
	CHECK(out_utf8_len("\xf0\x9f\x98\x80") == 4);
	CHECK(out_utf8_len("\xff") == 0);
	CHECK(out_utf8_len("\xc0\x80") == 0);		/* overlong */
	CHECK(out_utf8_len("\xed\xa0\x80") == 0);	/* surrogate */
	CHECK(out_utf8_len("\xc3") == 0);		/* truncated */
}

/* Views: the value type each option combination selects. */
static void test_views(void)
{
	CHECK(!strcmp(view_type(WEIGHT_DEFAULT, 0, 0, 0), "bytes"));
	CHECK(!strcmp(view_type(WEIGHT_DEFAULT, 0, 0, 1), "count"));
	CHECK(!strcmp(view_type(WEIGHT_BYTES, 0, 0, 1), "bytes"));
	CHECK(!strcmp(view_type(WEIGHT_RELEASED, 0, 0, 0), "released"));
	CHECK(!strcmp(view_type(WEIGHT_DEFAULT, 1, 0, 1), "net"));
	CHECK(!strcmp(view_type(WEIGHT_DEFAULT, 0, 1, 1), "inuse_space"));
	CHECK(!strcmp(view_type(WEIGHT_COUNT, 0, 1, 0), "inuse_objects"));
	CHECK(view_conflict(WEIGHT_COUNT, 1, 0) != NULL);
	CHECK(view_conflict(WEIGHT_RELEASED, 0, 1) != NULL);
	CHECK(view_conflict(WEIGHT_DEFAULT, 1, 1) != NULL);
	CHECK(view_conflict(WEIGHT_BYTES, 1, 0) == NULL);
	CHECK(weight_parse("released") == WEIGHT_RELEASED);
	CHECK(weight_parse("Bytes") == -1);
	CHECK(output_format_from_path("x.pb.gz") == 3);
	CHECK(output_format_from_path("x.gz") == -1);
	CHECK(output_format_parse("json") == 4);
}

int main(void)
{
	test_dedup();
	test_hand_built();
	test_folded_set();
	test_human();
	test_utf8();
	test_views();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

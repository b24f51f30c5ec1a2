/*
 * prom-unit - report/out-prom.c: the exact exposition of a small input;
 * label values made of hostile strings (a quote, a newline, a
 * backslash, 10 KiB, bytes that are not UTF-8, control characters)
 * escaped, replaced and cut as the header says; and every line of the
 * output, hostile input included, matching the text format's grammar
 * (checked here, by a reader written from the format's description).
 * With an argument, the hostile exposition is written to that file too
 * (tests/prom-unit.test gives it to promtool).  Prints "ok" or what
 * failed.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/out-prom.h"
#include "unit-check.h"

static char *write_all(const struct prom_proc *p, size_t np, const struct prom_stack *s, size_t ns,
		       const struct prom_health *h)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	CHECK(prom_write(f, p, np, s, ns, h) == 0, "prom_write failed: %s", strerror(errno));
	fclose(f);
	return buf;
}

static const char golden[] =
	"# HELP memtap_process_rss_bytes Resident set size of a followed process (VmRSS), in bytes.\n"
	"# TYPE memtap_process_rss_bytes gauge\n"
	"memtap_process_rss_bytes{target=\"comm=redis-server\",pid=\"4242\",comm=\"redis-server\"} 10485760\n"
	"# HELP memtap_process_virtual_memory_bytes Virtual memory size of a followed process (VmSize), in bytes.\n"
	"# TYPE memtap_process_virtual_memory_bytes gauge\n"
	"memtap_process_virtual_memory_bytes{target=\"comm=redis-server\",pid=\"4242\",comm=\"redis-server\"} 18446744073709551615\n"
	"# HELP memtap_process_held_bytes Bytes a followed process holds now as memtap sees them.\n"
	"# TYPE memtap_process_held_bytes gauge\n"
	"memtap_process_held_bytes{target=\"comm=redis-server\",pid=\"4242\",comm=\"redis-server\"} 4096\n"
	"# HELP memtap_process_captured_bytes_total Bytes a followed process acquired, by event kind, as memtap captured them.\n"
	"# TYPE memtap_process_captured_bytes_total counter\n"
	"memtap_process_captured_bytes_total{target=\"comm=redis-server\",pid=\"4242\",comm=\"redis-server\",event=\"malloc\"} 123456789\n"
	"memtap_process_captured_bytes_total{target=\"comm=redis-server\",pid=\"4242\",comm=\"redis-server\",event=\"mmap\"} 0\n"
	"# HELP memtap_stack_held_bytes Bytes held now by the allocations of a stack.\n"
	"# TYPE memtap_stack_held_bytes gauge\n"
	"memtap_stack_held_bytes{target=\"comm=redis-server\",stack_id=\"00000000deadbeef\",frame=\"zmalloc\",event=\"malloc\"} 2048\n"
	"memtap_stack_held_bytes{target=\"comm=redis-server\",stack_id=\"ffffffffffffffff\",frame=\"[other]\",event=\"mmap\"} 0\n"
	"# HELP memtap_stack_growth_bytes_per_second Growth of the bytes a stack holds over the last interval, in bytes per second.\n"
	"# TYPE memtap_stack_growth_bytes_per_second gauge\n"
	"memtap_stack_growth_bytes_per_second{target=\"comm=redis-server\",stack_id=\"00000000deadbeef\",frame=\"zmalloc\",event=\"malloc\"} 0.10000000000000001\n"
	"memtap_stack_growth_bytes_per_second{target=\"comm=redis-server\",stack_id=\"ffffffffffffffff\",frame=\"[other]\",event=\"mmap\"} -Inf\n"
	"# HELP memtap_leak_suspect_slope_bytes_per_second Slope of the bytes a leak-suspect stack holds, in bytes per second.\n"
	"# TYPE memtap_leak_suspect_slope_bytes_per_second gauge\n"
	"memtap_leak_suspect_slope_bytes_per_second{target=\"comm=redis-server\",stack_id=\"00000000deadbeef\",frame=\"zmalloc\",event=\"malloc\"} 1000\n"
	"# HELP memtap_records_total Event records memtap has read.\n"
	"# TYPE memtap_records_total counter\n"
	"memtap_records_total 1000000\n"
	"# HELP memtap_lost_records_total Event records lost before memtap could read them.\n"
	"# TYPE memtap_lost_records_total counter\n"
	"memtap_lost_records_total 3\n"
	"# HELP memtap_stops_total Times memtap stopped a thread of a target.\n"
	"# TYPE memtap_stops_total counter\n"
	"memtap_stops_total 17\n"
	"# HELP memtap_cpu_seconds_total CPU time memtap itself has used, user and system, in seconds.\n"
	"# TYPE memtap_cpu_seconds_total counter\n"
	"memtap_cpu_seconds_total 1.5\n"
	"# HELP memtap_resident_memory_bytes Resident set size of memtap itself, in bytes.\n"
	"# TYPE memtap_resident_memory_bytes gauge\n"
	"memtap_resident_memory_bytes 8388608\n"
	"# HELP memtap_targets Processes memtap follows now.\n"
	"# TYPE memtap_targets gauge\n"
	"memtap_targets 1\n"
	"# HELP memtap_max_targets Most processes memtap follows at once.\n"
	"# TYPE memtap_max_targets gauge\n"
	"memtap_max_targets 64\n"
	"# HELP memtap_stacks Stacks memtap knows.\n"
	"# TYPE memtap_stacks gauge\n"
	"memtap_stacks 2\n"
	"# HELP memtap_stacks_folded_total Stacks folded into [other] to bound the series.\n"
	"# TYPE memtap_stacks_folded_total counter\n"
	"memtap_stacks_folded_total 5\n";

static const char golden_push[] =
	"# HELP memtap_push_profiles_total Profiles pushed to the profile store.\n"
	"# TYPE memtap_push_profiles_total counter\n"
	"memtap_push_profiles_total 7\n"
	"# HELP memtap_push_failures_total Pushes to the profile store that failed.\n"
	"# TYPE memtap_push_failures_total counter\n"
	"memtap_push_failures_total 2\n"
	"# HELP memtap_push_dropped_total Profiles dropped without being pushed.\n"
	"# TYPE memtap_push_dropped_total counter\n"
	"memtap_push_dropped_total 1\n"
	"# HELP memtap_push_spooled Profiles spooled on disk, waiting to be pushed.\n"
	"# TYPE memtap_push_spooled gauge\n"
	"memtap_push_spooled 4\n";

static void test_golden(void)
{
	static const struct prom_kind_bytes kinds[] = { { "malloc", 123456789 }, { "mmap", 0 } };
	struct prom_proc p = {
		.target = "comm=redis-server", .pid = 4242, .comm = "redis-server",
		.rss = 10485760, .vmsize = UINT64_MAX, .held = 4096, .nkinds = 2, .kinds = kinds,
	};
	struct prom_stack s[] = {
		{ "comm=redis-server", 0xdeadbeef, "zmalloc", "malloc", 2048, 0.1, 1000.0 },
		{ "comm=redis-server", UINT64_MAX, "[other]", "mmap", 0, -INFINITY, NAN },
	};
	struct prom_health h = {
		.records = 1000000, .lost = 3, .stops = 17, .cpu_seconds = 1.5, .rss = 8388608,
		.targets = 1, .max_targets = 64, .stacks = 2, .stacks_folded = 5,
		.pushed = 7, .push_failed = 2, .push_dropped = 1, .push_spooled = 4,
	};
	char *got, want[sizeof(golden) + sizeof(golden_push)];

	got = write_all(&p, 1, s, 2, &h);
	CHECK(got != NULL && strcmp(got, golden) == 0, "without push:\n%s\nwant:\n%s", got, golden);
	free(got);
	h.push = 1;
	snprintf(want, sizeof(want), "%s%s", golden, golden_push);
	got = write_all(&p, 1, s, 2, &h);
	CHECK(got != NULL && strcmp(got, want) == 0, "with push:\n%s", got);
	free(got);
	/* no health: the process and stack families only */
	got = write_all(&p, 1, s, 2, NULL);
	CHECK(got != NULL && strlen(got) == (size_t)(strstr(golden, "# HELP memtap_records_total") - golden) &&
	      strncmp(got, golden, strlen(got)) == 0, "without health:\n%s", got);
	free(got);
}

/* prom_label_value(in) must be want. */
static void check_label(const char *what, const char *in, const char *want)
{
	char buf[PROM_LABEL_BUF];

	prom_label_value(in, buf);
	CHECK(strcmp(buf, want) == 0, "%s: got \"%s\", want \"%s\"", what, buf, want);
}

/* The length of the value once the escapes are undone. */
static size_t unescaped_len(const char *v)
{
	size_t n = 0;

	for (; *v; v++, n++)
		if (*v == '\\')
			v++;
	return n;
}

static void test_labels(void)
{
	char big[10 * 1024 + 1], want[PROM_LABEL_BUF], buf[PROM_LABEL_BUF];
	char exact[PROM_LABEL_MAX + 1];

	check_label("plain", "zmalloc", "zmalloc");
	check_label("NULL", NULL, "");
	check_label("quote", "a\"b", "a\\\"b");
	check_label("newline", "a\nb", "a\\nb");
	check_label("backslash", "a\\b", "a\\\\b");
	check_label("all three", "\"\\\n", "\\\"\\\\\\n");
	check_label("control characters", "a\tb\rc\x1b" "d\x7f", "a?b?c?d?");
	check_label("C1 control", "a\xc2\x85z", "a?z");
	check_label("valid UTF-8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	check_label("stray continuation", "a\x80" "b", "a?b");
	check_label("lone lead byte", "a\xc3", "a?");
	check_label("cut sequence", "a\xe2\x82" "b", "a??b");
	check_label("overlong", "\xc0\xaf\xe0\x80\xaf", "?????");
	check_label("surrogate", "\xed\xa0\x80", "???");
	check_label("past U+10FFFF", "\xf4\x90\x80\x80", "????");
	check_label("0xff", "\xff\xfe", "??");

	/* exactly PROM_LABEL_MAX bytes: kept whole */
	memset(exact, 'x', PROM_LABEL_MAX);
	exact[PROM_LABEL_MAX] = '\0';
	check_label("128 bytes", exact, exact);
	/* one more: 125 bytes and "..." */
	memset(big, 'y', PROM_LABEL_MAX + 1);
	big[PROM_LABEL_MAX + 1] = '\0';
	memset(want, 'y', PROM_LABEL_MAX - 3);
	strcpy(want + PROM_LABEL_MAX - 3, "...");
	check_label("129 bytes", big, want);
	/* 10 KiB of quotes: 125 of them escaped, then "..." */
	memset(big, '"', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	prom_label_value(big, buf);
	CHECK(strlen(buf) == 2 * (PROM_LABEL_MAX - 3) + 3 && unescaped_len(buf) == PROM_LABEL_MAX &&
	      strcmp(buf + strlen(buf) - 3, "...") == 0, "10 KiB of quotes: \"%s\"", buf);
	/* 10 KiB of 3-byte characters: cut at a boundary (41 of them) */
	for (size_t i = 0; i + 3 < sizeof(big); i += 3)
		memcpy(big + i, "\xe2\x82\xac", 3);
	big[sizeof(big) - 1 - (sizeof(big) - 1) % 3] = '\0';
	prom_label_value(big, buf);
	CHECK(strlen(buf) == 41 * 3 + 3 && strcmp(buf + 123, "...") == 0 &&
	      memcmp(buf + 120, "\xe2\x82\xac", 3) == 0, "10 KiB of euro signs: %zu bytes", strlen(buf));
	/* 10 KiB of invalid bytes: 125 '?' and "..." */
	memset(big, 0xff, sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memset(want, '?', PROM_LABEL_MAX - 3);
	strcpy(want + PROM_LABEL_MAX - 3, "...");
	check_label("10 KiB of 0xff", big, want);
}

/* ---- a reader of the text format, version 0.0.4 ---- */

static int is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static int is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* A metric or label name at *p (colons only in a metric name); its end. */
static const char *parse_name(const char *p, int colons)
{
	if (!is_name_start((unsigned char)*p) || (!colons && *p == ':'))
		return NULL;
	while (is_name_char((unsigned char)*p) && (colons || *p != ':'))
		p++;
	return p;
}

/* A valid UTF-8 string of n bytes (the reader's own check). */
static int valid_utf8(const unsigned char *s, size_t n)
{
	while (n > 0) {
		size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 :
			     s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
		unsigned cp;

		if (len == 0 || len > n)
			return 0;
		cp = len == 1 ? s[0] : s[0] & (0x7f >> len);
		for (size_t i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		s += len;
		n -= len;
	}
	return 1;
}

/* A quoted label value at *p (past the quote); its end past the closing quote. */
static const char *parse_label_value(const char *p)
{
	const char *start = p;
	size_t raw = 0;

	for (; *p != '"'; p++, raw++) {
		if (*p == '\0' || *p == '\n')
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p != '\\' && *p != '"' && *p != 'n')
				return NULL;
		} else if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			return NULL;	/* not forbidden by the format, but by our bound */
		}
	}
	if (!valid_utf8((const unsigned char *)start, (size_t)(p - start)) || raw > PROM_LABEL_MAX)
		return NULL;
	return p + 1;
}

/* A sample value as Go's ParseFloat takes it (the forms we write). */
static int parse_value(const char *v)
{
	char *end;

	if (strcmp(v, "NaN") == 0 || strcmp(v, "+Inf") == 0 || strcmp(v, "-Inf") == 0)
		return 1;
	if (*v == '\0' || strspn(v, "0123456789+-.eE") != strlen(v))
		return 0;
	errno = 0;
	strtod(v, &end);
	return *end == '\0';
}

/*
 * Check every line of text: comments "# HELP name text" and "# TYPE name
 * type" (once per name, before its samples), samples "name{l="v",...}
 * value", a family's samples together.  Returns the number of bad lines.
 */
static int check_grammar(const char *text, int quiet)
{
	char types[64][128], cur[128] = "";
	size_t ntypes = 0;
	int bad = 0, lineno = 0;

	while (*text != '\0') {
		const char *nl = strchr(text, '\n');
		char line[1024];
		size_t len;
		const char *p, *e;
		int ok = 0;

		lineno++;
		if (nl == NULL) {
			printf("FAIL grammar: no newline at the end of line %d\n", lineno);
			return bad + 1;
		}
		len = (size_t)(nl - text);
		if (len >= sizeof(line)) {
			printf("FAIL grammar: line %d is %zu bytes\n", lineno, len);
			bad++;
			text = nl + 1;
			continue;
		}
		memcpy(line, text, len);
		line[len] = '\0';
		text = nl + 1;
		p = line;
		if (strncmp(p, "# HELP ", 7) == 0) {
			e = parse_name(p + 7, 1);
			ok = e != NULL && *e == ' ';
			for (const char *q = e ? e : p; ok && *q; q++)
				if (*q == '\\' && q[1] != '\\' && q[1] != 'n')
					ok = 0;
		} else if (strncmp(p, "# TYPE ", 7) == 0) {
			e = parse_name(p + 7, 1);
			ok = e != NULL && *e == ' ' && ntypes < 64 && (size_t)(e - p - 7) < sizeof(cur);
			if (ok) {
				const char *t = e + 1;

				ok = !strcmp(t, "counter") || !strcmp(t, "gauge") || !strcmp(t, "untyped") ||
				     !strcmp(t, "histogram") || !strcmp(t, "summary");
				snprintf(cur, sizeof(cur), "%.*s", (int)(e - p - 7), p + 7);
				for (size_t i = 0; i < ntypes; i++)
					if (strcmp(types[i], cur) == 0)
						ok = 0;	/* a second TYPE: the family was split */
				strcpy(types[ntypes++], cur);
			}
		} else if (*p != '#') {
			e = parse_name(p, 1);
			/* a sample of the family whose TYPE came last */
			ok = e != NULL && (size_t)(e - p) == strlen(cur) && strncmp(p, cur, strlen(cur)) == 0;
			p = e;
			if (ok && *p == '{') {
				p++;
				while (ok && *p != '}') {
					e = parse_name(p, 0);
					ok = e != NULL && e[0] == '=' && e[1] == '"';
					if (ok)
						p = parse_label_value(e + 2);
					ok = ok && p != NULL;
					if (ok && *p == ',')
						p++;
					else if (ok)
						ok = *p == '}';
				}
				if (ok)
					p++;
			}
			ok = ok && *p == ' ' && parse_value(p + 1);
		}
		if (!ok && !quiet)
			printf("FAIL grammar: line %d: %s\n", lineno, line);
		bad += !ok;
	}
	return bad;
}

static void test_grammar(const char *path)
{
	static const char *hostile[] = {
		"quote\"d", "new\nline", "back\\slash", NULL /* 10 KiB */, "\xff\xfe\xc3(\xed\xa0\x80",
		"ctl\x01\x1b[31m\r", "} 1\nfake_series 1\n# TYPE x gauge",
	};
	enum { NH = sizeof(hostile) / sizeof(hostile[0]) };
	char *big = malloc(10 * 1024 + 1);
	struct prom_kind_bytes kinds[NH];
	struct prom_proc p[NH];
	struct prom_stack s[NH];
	struct prom_health h = { .push = 1, .cpu_seconds = INFINITY };
	char *text;

	memset(big, 'f', 10 * 1024);
	memcpy(big + 5000, "\"\n\\\xff", 4);
	big[10 * 1024] = '\0';
	hostile[3] = big;
	for (size_t i = 0; i < NH; i++) {
		kinds[i] = (struct prom_kind_bytes){ hostile[i], i };
		p[i] = (struct prom_proc){ hostile[i], (pid_t)i + 1, hostile[(i + 1) % NH], i, i, i, 1, &kinds[i] };
		s[i] = (struct prom_stack){ hostile[(i + 2) % NH], i, hostile[i], hostile[(i + 3) % NH],
					    i, i % 2 ? NAN : -1.0 / 3, i % 3 ? NAN : 1e300 };
	}
	text = write_all(p, NH, s, NH, &h);
	CHECK(text != NULL && check_grammar(text, 0) == 0, "hostile labels: the output does not parse");
	CHECK(text != NULL && strstr(text, "\nfake_series") == NULL, "a label value began a line");
	if (path != NULL && text != NULL) {
		FILE *f = fopen(path, "w");

		CHECK(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
	}
	free(text);
	free(big);
	/* and the checker itself rejects what it must */
	CHECK(check_grammar("# TYPE a gauge\na{x=\"\n\"} 1\n", 1) > 0, "checker: newline in a value");
	CHECK(check_grammar("# TYPE a gauge\na{x=\"\\t\"} 1\n", 1) > 0, "checker: unknown escape");
	CHECK(check_grammar("# TYPE a gauge\na{x=\"\xff\"} 1\n", 1) > 0, "checker: invalid UTF-8");
	CHECK(check_grammar("# TYPE a gauge\nb 1\n", 1) > 0, "checker: a sample outside its family");
	CHECK(check_grammar("# TYPE a gauge\na 1x\n", 1) > 0, "checker: a bad value");
	CHECK(check_grammar("# TYPE a gauge\na{x=\"1\"} NaN\n", 1) == 0, "checker: a good line");
}

/* A write that fails: -1 and the write's errno. */
static void test_error(void)
{
	FILE *f = fopen("/dev/full", "w");
	struct prom_health h = { 0 };

	if (f == NULL)
		return;
	setvbuf(f, NULL, _IONBF, 0);
	errno = 0;
	CHECK(prom_write(f, NULL, 0, NULL, 0, &h) == -1 && errno == ENOSPC,
	      "a write to /dev/full: errno %d", errno);
	fclose(f);
}

int main(int argc, char **argv)
{
	test_golden();
	test_labels();
	test_grammar(argc > 1 ? argv[1] : NULL);
	test_error();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

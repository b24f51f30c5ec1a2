/*
 * parse-fuzz.c - feed generated garbage and mutations of valid inputs
 * to memtap's input parsers, and what they accept to the writers:
 * nothing may crash, leak or break a parser's contract.  Run in the
 * build with sanitizers, it finds memory errors too.
 *
 *   parse-fuzz [-q] [-s SEED] [-t SECONDS] [-n COUNT] [-i INDEX [-o FILE]]
 *              [-f FILE]... [PARSER...]
 *
 * Runs the named parsers (default: all: folded, diff, recording,
 * perfmap, jitdump) on inputs 0, 1, 2, ... for
 * SECONDS (default 3, and at least 200 inputs) or COUNT inputs.
 * -f adds FILE (a recording) to the valid inputs of the parsers that
 * read recordings.  Input i of a seed and files is always the same:
 * "-s SEED -i INDEX" with the same -f runs that one input again, "-o
 * FILE" writes it to FILE.  The seed (default: from the clock) is
 * printed first, then for each parser "NAME: N inputs, M read" (M: how
 * many it accepted), then "ok, N inputs".  A failure prints the seed,
 * the index of its input and what the parser printed.  Exit 0, or 1 on
 * a contract violation (sanitizers exit with their own status).
 *
 * The contract on messages: a parser refuses an input with one line on
 * standard error, "memtap: 'fuzz': why" (lowercase), after any
 * "memtap: warning: 'fuzz': ..." lines; an input it accepts gets
 * warnings at most.  The messages are checked, not shown; sanitizer
 * reports go to standard error, or nowhere with -q.
 *
 * Built with -DPARSE_FUZZ_LIBFUZZER and -fsanitize=fuzzer, the same
 * parsers run under libFuzzer instead (LLVMFuzzerTestOneInput).
 *
 * Add a parser: a function that parses one buffer (not NUL-terminated)
 * and returns READ or REFUSED, or BROKEN after printing what contract
 * it broke, and one row in parsers[] with the valid inputs its
 * mutations start from.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/output.h"
#include "report/profile.h"
#include "stack/runtimes/jitnames.h"
#include "stack/runtimes/jitnames-int.h"
#include "util/xmalloc.h"

/* ---- the parsers ---- */

enum { BROKEN = -1, REFUSED = 0, READ = 1 };

/* The name of every input in the parsers' messages. */
#define NAME "fuzz"

/* A read-only stream over data (fmemopen refuses an empty buffer). */
static FILE *open_data(const uint8_t *data, size_t len)
{
	if (!len)
		return fopen("/dev/null", "re");
	return fmemopen((void *)data, len, "r");
}

/* Every stack of s: a non-empty line without newline. */
static int check_set(const char *parser, const struct folded_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->stacks[i].stack[0] || strchr(s->stacks[i].stack, '\n')) {
			printf("%s: stack %zu is empty or holds a newline\n", parser, i);
			return -1;
		}
	return 0;
}

/*
 * folded_set_parse(), plain and differential, then finish and write.
 * It prints nothing; READ means a stack was read.
 */
static int parse_folded(const uint8_t *data, size_t len)
{
	int ret = 0, stacks = 0;

	for (int diff = 0; diff < 2 && !ret; diff++) {
		struct folded_set s = FOLDED_SET_INIT;
		FILE *f = open_data(data, len), *out;
		long bad;

		if (!f)
			return 0;	/* out of memory: not the parser's */
		s.diff = diff;
		errno = 0;
		bad = folded_set_parse(&s, f);
		fclose(f);
		if (bad < 0 && errno != E2BIG && errno != EFBIG) {
			printf("folded: -1 with errno %d (%s)\n", errno, strerror(errno));
			ret = -1;
		}
		if (!ret)
			ret = check_set("folded", &s);
		stacks |= s.n > 0;
		folded_set_finish(&s);
		if (!ret)
			ret = check_set("folded (finished)", &s);
		out = fopen("/dev/null", "we");
		if (out) {
			folded_set_write(out, &s);
			fclose(out);
		}
		folded_set_release(&s);
	}
	return ret < 0 ? BROKEN : stacks ? READ : REFUSED;
}

/* The writers of a differential set must take whatever was read. */
static int write_set(const struct folded_set *s)
{
	FILE *null = fopen("/dev/null", "we");
	int ret = 0;

	if (!null)
		return 0;
	if (svg_write_set(null, s, NULL) < 0 || folded_set_write(null, s) < 0)
		ret = -1;
	fclose(null);
	if (ret)
		printf("diff: a writer failed on a set it was given\n");
	return ret;
}

/* diff_load(): format detection, folded or JSON, as `memtap diff` reads. */
static int parse_diff_input(const uint8_t *data, size_t len)
{
	struct output_options o = { 0 };
	struct folded_set s = FOLDED_SET_INIT;
	int ret = 0, ok = 1;

	/* the same input before and after, the second time by another type */
	for (int after = 0; after < 2 && ok; after++) {
		FILE *f = open_data(data, len);

		if (!f)
			break;
		ok = diff_load(&s, NAME, f, after, &o, after ? "alloc_objects" : NULL) == 0;
		fclose(f);
	}
	if (ok) {
		s.diff = 1;
		ret = check_set("diff", &s);
		folded_set_finish(&s);
		if (!ret)
			ret = check_set("diff (finished)", &s);
		if (!ret)
			ret = write_set(&s);
	}
	folded_set_release(&s);
	return ret < 0 ? BROKEN : ok ? READ : REFUSED;
}

/* Every writer, for each value type, must take an accepted profile. */
static int write_profile(const struct profile *p)
{
	static int (*const writers[])(FILE *, const struct profile *,
				      const struct output_options *) = {
		write_text, write_folded, write_svg, write_pprof, write_json,
	};
	struct output_options o = { 0 };
	FILE *null = fopen("/dev/null", "we");
	int ret = 0;

	if (!null)
		return 0;
	for (size_t w = 0; w < sizeof(writers) / sizeof(writers[0]) && !ret; w++)
		for (size_t t = 0; t <= p->ntypes && t < 4 && !ret; t++) {
			o.value_index = t;
			if (writers[w](null, p, &o) < 0) {
				printf("recording: writer %zu failed on value type %zu\n", w, t);
				ret = -1;
			}
		}
	fclose(null);
	return ret;
}

/* recording_parse() (`memtap report`), then every writer. */
static int parse_recording(const uint8_t *data, size_t len)
{
	/* a copy of its exact size: reading past len is a sanitizer error */
	char *text = xmalloc(len ? len : 1);
	struct profile p;
	int ret = REFUSED;

	memcpy(text, data, len);
	if (recording_parse(NAME, text, len, &p) == 0) {
		ret = write_profile(&p) < 0 ? BROKEN : READ;
		FILE *null = fopen("/dev/null", "we");

		if (null && write_suspects(null, &p, NULL) < 0 && ret == READ) {
			printf("recording: write_suspects failed\n");
			ret = BROKEN;
		}
		if (null)
			fclose(null);
		profile_release(&p);
	}
	free(text);
	return ret;
}

/* ---- run-time code names: perf maps and jitdumps (stack/runtimes/jitnames-int.h) ---- */

struct mem {
	const uint8_t *data;
	size_t len;
};

static ssize_t mem_pread(void *arg, void *buf, size_t n, uint64_t off)
{
	const struct mem *m = arg;

	if (off >= m->len)
		return 0;
	if (n > m->len - off)
		n = (size_t)(m->len - off);
	memcpy(buf, m->data + off, n);
	return (ssize_t)n;
}

/* Every entry's name a string in the pool, every start named. */
static int check_table(const char *parser, struct jit_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct jit_entry *e = &t->e[i], *f;

		if (e->start >= e->end || e->name >= t->pool_len ||
		    strnlen(t->pool + e->name, t->pool_len - e->name) > JIT_NAME_MAX) {
			printf("%s: entry %zu: a bad range or name\n", parser, i);
			return -1;
		}
		f = jit_table_find(t, e->start);
		if (!f || f->start > e->start || f->end <= e->start) {
			printf("%s: entry %zu: its start is not named\n", parser, i);
			return -1;
		}
	}
	return 0;
}

/*
 * Read data whole, then again in two parts (as a file that grows): the
 * same ranges.  kind 0: a perf map, 1: a jitdump.
 */
static int read_jit(const char *parser, int kind, const uint8_t *data, size_t len, size_t *n)
{
	struct mem m = { data, len };
	struct jit_table t[2] = { { .what = "'" NAME "'" }, { .what = "'" NAME "'" } };
	size_t cut = len ? (size_t)(data[0] * 7919u + len / 3) % (len + 1) : 0;
	int ret = 0;

	for (int i = 0; i < 2; i++) {
		struct perfmap_state ms = { 0 };
		struct jitdump_state ds = { 0 };

		if (i) {
			if (kind)
				jitdump_read(&t[i], &ds, mem_pread, &m, cut, 0);
			else
				perfmap_read(&t[i], &ms, mem_pread, &m, cut, 0);
			t[i].warned = 0;
		}
		if (kind)
			jitdump_read(&t[i], &ds, mem_pread, &m, len, 1);
		else
			perfmap_read(&t[i], &ms, mem_pread, &m, len, 1);
		if (!ret)
			ret = check_table(parser, &t[i]);
	}
	if (!ret && t[0].n != t[1].n && t[0].n < JIT_MAX_ENTRIES) {
		printf("%s: %zu ranges read whole, %zu in two parts\n", parser, t[0].n, t[1].n);
		ret = -1;
	}
	if (!ret && t[0].n == t[1].n && t[0].rewrites != t[1].rewrites) {
		printf("%s: %" PRIu64 " rewrites read whole, %" PRIu64 " in two parts\n", parser,
		       t[0].rewrites, t[1].rewrites);
		ret = -1;
	}
	*n += t[0].n;
	jit_table_free(&t[0]);
	jit_table_free(&t[1]);
	return ret;
}

static int parse_perfmap(const uint8_t *data, size_t len)
{
	size_t n = 0;

	return read_jit("perfmap", 0, data, len, &n) < 0 ? BROKEN : READ;
}

/* The valid header of a jitdump. */
static const uint8_t jitdump_header[40] = { 0x44, 0x54, 0x69, 0x4a, 1, 0, 0, 0, 40 };

/*
 * The input as a jitdump; after a valid header; and, when it is hex
 * text (as the seeds are), the bytes it spells.
 */
static int parse_jitdump(const uint8_t *data, size_t len)
{
	uint8_t *buf = xmalloc(len / 2 + sizeof(jitdump_header) + 1);
	size_t n = 0, k = 0;
	int ret = read_jit("jitdump", 1, data, len, &n);

	for (size_t i = 0; i + 1 < len; i++) {
		int hi = data[i] >= 'a' && data[i] <= 'f' ? data[i] - 'a' + 10 :
			 data[i] >= '0' && data[i] <= '9' ? data[i] - '0' : -1;
		int lo = data[i + 1] >= 'a' && data[i + 1] <= 'f' ? data[i + 1] - 'a' + 10 :
			 data[i + 1] >= '0' && data[i + 1] <= '9' ? data[i + 1] - '0' : -1;

		if (hi >= 0 && lo >= 0) {
			buf[k++] = (uint8_t)(hi << 4 | lo);
			i++;
		}
	}
	if (!ret && k)
		ret = read_jit("jitdump", 1, buf, k, &n);
	if (!ret) {
		memcpy(buf, jitdump_header, sizeof(jitdump_header));
		memcpy(buf + sizeof(jitdump_header), data, len / 2);
		ret = read_jit("jitdump", 1, buf, sizeof(jitdump_header) + len / 2, &n);
	}
	free(buf);
	return ret < 0 ? BROKEN : READ;
}

static const char *const perfmap_seeds[] = {
	"7f0000001000 40 LazyCompile:*alloc /tmp/x.js:3\n"
	"7f0000001000 20 JS:~alloc /tmp/x.js:3:15\n"
	"0x7f0000000ff0 1000 py::alloc:/tmp/x.py\r\n"
	"7f0000002000 0 empty\n"
	"ffffffffffffffff 10 wraps\n"
	"garbage\n\n7f0000003000 8 void Alloc.run(int)",
	"1000 1000 a\n1800 1000 b\n1400 100 c\n1000 10000 d\n1000 1000 e\n",
	NULL
};

/* hex of jitdumps, made by make_jitdump_seeds() */
static char *jitdump_seed_text[4];
static const char *jitdump_seeds[5];

static void hex(char **s, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		*s += sprintf(*s, "%02x", ((const uint8_t *)p)[i]);
}

static void rec(char **s, uint32_t id, const void *body, size_t n, uint32_t total)
{
	uint64_t ts = 1;
	uint32_t head[2] = { id, total ? total : (uint32_t)(16 + n) };

	hex(s, head, 8);
	hex(s, &ts, 8);
	hex(s, body, n);
}

static void make_jitdump_seeds(void)
{
	struct {
		uint32_t pid, tid;
		uint64_t vma, addr, size, index;
		char name[16];
	} load = { 1, 1, 0x1000, 0x1000, 0x40, 1, "jit_fn" };
	struct {
		uint32_t pid, tid;
		uint64_t vma, old, new_, size, index;
	} move = { 1, 1, 0x2000, 0x1000, 0x2000, 0x40, 1 };
	struct {
		uint64_t addr, nr, e_addr;
		uint32_t line, discrim;
		char file[8];
	} dbg = { 0x1000, 1, 0x1000, 42, 0, "a.js" };
	struct {
		uint64_t size, hdr, mapped;
		uint8_t data[24];
	} uw = { 24, 8, 0, { 0 } };

	for (int i = 0; i < 4; i++) {
		char *s = jitdump_seed_text[i] = xmalloc(4096);

		hex(&s, jitdump_header, sizeof(jitdump_header));
		rec(&s, 2, &dbg, sizeof(dbg), 0);
		rec(&s, 4, &uw, sizeof(uw), 0);
		rec(&s, 0, &load, sizeof(load), 0);
		rec(&s, 1, &move, sizeof(move), 0);
		if (i == 1)
			rec(&s, 0, &load, sizeof(load), 0xffffffffu);	/* claims 4 GiB */
		if (i == 2)
			rec(&s, 0, &load, sizeof(load), 8);	/* below its own fields */
		if (i == 3)
			rec(&s, 3, NULL, 0, 0);	/* CODE_CLOSE */
		load.addr += 0x30;	/* overlapping */
		rec(&s, 0, &load, sizeof(load), 0);
		jitdump_seeds[i] = jitdump_seed_text[i];
	}
}

static const char *const folded_seeds[] = {
	"[malloc];server;main;handle_request;malloc 8242\n"
	"[malloc];server;main;back\\slash?tab/'apos';gr\xc3\xb6\xc3\x9f" "e;malloc 200\n"
	"[mmap];server;main;[unknown] (libc.so.6+0x29234) 4096\n",
	"app;main;cache 400 10\napp;main;load 100 100\r\napp;main;new_thing 0 30\n\n",
	"a;b;c 1\na;b 2\na 9223372036854775807\nb -9223372036854775808\n",
	"x 1 2 3\n  \t \nno_number\n;;; 5\n 7\n",
	NULL
};

static const char *const json_seeds[] = {
	"{\n  \"format\": \"memtap-profile\", \"version\": 1,\n"
	"  \"default_type\": \"alloc_space\",\n"
	"  \"value_types\": [ { \"type\": \"alloc_space\", \"unit\": \"bytes\", \"total\": 8192 },\n"
	"    { \"type\": \"alloc_objects\", \"unit\": \"count\", \"total\": 2 } ],\n"
	"  \"samples\": [ { \"pid\": 100, \"comm\": \"server\", \"event\": \"malloc\",\n"
	"      \"values\": [ 8192, 2 ], \"frames\": [\n"
	"        { \"function\": \"malloc\", \"system_name\": \"malloc\", \"file\": null, \"line\": 0,"
	" \"address\": \"0x7f0000001234\", \"module\": \"/usr/lib/libc.so.6\","
	" \"module_offset\": \"0x29234\", \"inlined\": false },\n"
	"        { \"function\": \"inl\\u00e4\\ud83d\\ude00\", \"system_name\": null, \"file\": \"a.c\","
	" \"line\": 3, \"address\": \"0x401200\", \"module\": null, \"inlined\": true },\n"
	"        { \"function\": null, \"system_name\": null, \"file\": null, \"line\": 0,"
	" \"address\": \"0xdeadbeef\", \"module\": null, \"inlined\": false } ] } ],\n"
	"  \"processes\": [ { \"pid\": 100, \"ppid\": 1, \"comm\": \"server\", \"status\": \"exited 0\","
	" \"vm\": null, \"events\": [] } ]\n}\n",
	/* version 3: the intervals of an -i run */
	"{\n  \"format\": \"memtap-profile\", \"version\": 3,\n"
	"  \"default_type\": \"bytes\",\n"
	"  \"value_types\": [ { \"type\": \"bytes\", \"unit\": \"bytes\", \"total\": 3072 },\n"
	"    { \"type\": \"count\", \"unit\": \"count\", \"total\": 3 } ],\n"
	"  \"run\": { \"syscalls\": \"seccomp\", \"stacks\": true, \"held\": true },\n"
	"  \"sample_mean\": [ 131072, 131072 ],\n"
	"  \"peaks\": { \"alloc\": { \"bytes\": 3072, \"nanos\": 400 },"
	" \"mappings\": { \"bytes\": 0, \"nanos\": 0 } },\n"
	"  \"mappings\": [], \"functions\": [ { \"name\": \"leak\", \"system_name\": \"leak\","
	" \"file\": null } ],\n"
	"  \"locations\": [ { \"address\": \"0x401000\", \"mapping\": null, \"lines\": [ [ 0, 0 ] ] } ],\n"
	"  \"intervals_held\": true,\n  \"intervals\": [\n"
	"    { \"end_nanos\": 100, \"captured\": 1024, \"vm\": [[100,4096,8192,4096]],"
	" \"changes\": [[0,1,1024,0,1024]] },\n"
	"    { \"end_nanos\": 200, \"captured\": 1024, \"vm\": [], \"changes\": [] },\n"
	"    { \"end_nanos\": 300, \"captured\": 2048, \"vm\": [], \"changes\": [[0,1,1024,0,2048],[1,0,0,0,0]] },\n"
	"    { \"end_nanos\": 400, \"captured\": 3072, \"vm\": [], \"changes\": [[0,1,1024,0,3072]] } ],\n"
	"  \"samples\": [ { \"pid\": 100, \"comm\": \"t\", \"event\": \"malloc\","
	" \"values\": [ 3072, 3 ], \"locations\": [ 0 ] },\n"
	"    { \"pid\": 100, \"comm\": \"t\", \"event\": \"free\", \"values\": [ 0, 0 ],"
	" \"locations\": [] } ]\n}\n",
	NULL
};

static const char *const *const diff_seeds[] = { folded_seeds, json_seeds, NULL };

struct parser {
	const char *name;
	int (*parse)(const uint8_t *data, size_t len);
	const char *const *const *seeds;	/* lists of valid inputs */
	int files;		/* the -f files are valid inputs too */
	int messages;		/* it prints why it refuses an input */
};

static const char *const *const folded_only[] = { folded_seeds, NULL };
static const char *const *const json_only[] = { json_seeds, NULL };

static const char *const *const perfmap_only[] = { perfmap_seeds, NULL };
static const char *const *const jitdump_only[] = { jitdump_seeds, NULL };

static const struct parser parsers[] = {
	{ "folded", parse_folded, folded_only, 0, 0 },
	{ "diff", parse_diff_input, diff_seeds, 1, 1 },
	{ "recording", parse_recording, json_only, 1, 1 },
	{ "perfmap", parse_perfmap, perfmap_only, 0, 1 },
	{ "jitdump", parse_jitdump, jitdump_only, 0, 1 },
};

/* The contents of the -f files, NULL-terminated. */
static const char **files;
static size_t nfiles;

#define NPARSERS (sizeof(parsers) / sizeof(parsers[0]))

/* ---- inputs ---- */

static uint64_t rng;

static uint64_t next(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(next() % n) : 0;
}

static const char *const tokens[] = {
	"\n", " ", "\t", "\r\n", ";", ";;", "[", "]", "{", "}", "\"", "\\", "\\u", "\\ud800",
	"\\udc00", "\\u0000", ":", ",", "0", "-1", "9223372036854775807", "9223372036854775808",
	"-9223372036854775809", "99999999999999999999999", "1e400", "null", "true", "false",
	"\"samples\": [", "\"value_types\": [", "\"frames\": [", "\"values\": [ 1 ]",
	"\"inlined\": true", "\"intervals\": [", "\"changes\": [[", "\"end_nanos\": ", "\xc3", "\xef\xbf\xbd", "\xf4\x90\x80\x80", "\xff", "\0",
	"[unknown] (", "+0x", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
};

#define NTOKENS (sizeof(tokens) / sizeof(tokens[0]))
#define MAX_INPUT (256 * 1024)
#define MIN_INPUTS 200		/* of a timed run, however slow */

static size_t token_len(size_t t)
{
	return tokens[t][0] ? strlen(tokens[t]) : 1;	/* "\0" is one NUL byte */
}

/* Insert n bytes at pos of buf (length *len, capacity MAX_INPUT). */
static void insert(uint8_t *buf, size_t *len, size_t pos, const void *src, size_t n)
{
	if (*len + n > MAX_INPUT)
		n = MAX_INPUT - *len;
	memmove(buf + pos + n, buf + pos, *len - pos);
	memcpy(buf + pos, src, n);
	*len += n;
}

static void mutate(uint8_t *buf, size_t *len)
{
	size_t pos = below(*len + 1), n;
	uint8_t tmp[256];

	switch (below(7)) {
	case 0:		/* flip bits */
		if (*len)
			buf[below(*len)] ^= (uint8_t)(1u << below(8));
		break;
	case 1:		/* a random byte */
		tmp[0] = (uint8_t)next();
		insert(buf, len, pos, tmp, 1);
		break;
	case 2:		/* delete a range */
		n = below(*len - pos + 1);
		n = n > 64 ? below(64) : n;
		memmove(buf + pos, buf + pos + n, *len - pos - n);
		*len -= n;
		break;
	case 3:		/* repeat a range */
		n = below(*len - pos + 1);
		n = n > sizeof(tmp) ? sizeof(tmp) : n;
		memcpy(tmp, buf + pos, n);
		for (size_t k = below(8) + 1; k > 0; k--)
			insert(buf, len, pos, tmp, n);
		break;
	case 4:		/* cut short */
		*len = pos;
		break;
	default:	/* an interesting token */
		n = below(NTOKENS);
		insert(buf, len, pos, tokens[n], token_len(n));
		break;
	}
}

/* Input index of a run: garbage, or mutations of p's seeds. */
static size_t make_input(const struct parser *p, uint64_t seed, uint64_t index, uint8_t *buf)
{
	size_t len = 0, nlists = 0, n;

	rng = (seed ^ (index * 0x9e3779b97f4a7c15ULL)) | 1;
	for (int i = 0; i < 4; i++)
		next();
	while (p->seeds[nlists])
		nlists++;
	if (p->files && nfiles)
		nlists++;
	if (below(4) == 0) {
		/* garbage: bytes, or tokens */
		size_t want = below(4096);
		int bytes = (int)below(2);

		while (len < want) {
			if (bytes) {
				buf[len++] = (uint8_t)next();
			} else {
				n = below(NTOKENS);
				insert(buf, &len, len, tokens[n], token_len(n));
			}
		}
		return len;
	}
	n = below(nlists);
	const char *const *list = p->seeds[n] ? p->seeds[n] : files;

	for (n = 0; list[n]; n++)
		;
	const char *s = list[below(n)];

	len = strlen(s);
	memcpy(buf, s, len);
	if (below(8) == 0) {
		/* splice in part of another seed */
		const char *t = list[below(n)];
		size_t tl = strlen(t), from = below(tl + 1);

		insert(buf, &len, below(len + 1), t + from, below(tl - from + 1));
	}
	for (size_t k = below(8) + 1; k > 0; k--)
		mutate(buf, &len);
	return len;
}

/* ---- libFuzzer ---- */

#ifdef PARSE_FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < NPARSERS; i++)
		if (parsers[i].parse(data, size) < 0)
			abort();
	return 0;
}
#else

/* ---- the driver ---- */

static uint64_t cur_seed, cur_index;
static const char *cur_parser = "";

/*
 * Standard error while a parser runs: a file whose contents are checked
 * after each input (capture_fd), and the real one (saved_fd).
 */
static int capture_fd = -1, saved_fd = -1, capturing;

/* Put the real standard error back, with what was captured: a report. */
static void release_stderr(void)
{
	char buf[4096];
	off_t at = 0;
	ssize_t n;

	if (!capturing)
		return;
	capturing = 0;
	dup2(saved_fd, STDERR_FILENO);
	while ((n = pread(capture_fd, buf, sizeof(buf), at)) > 0) {
		if (write(STDERR_FILENO, buf, (size_t)n) < 0)
			break;
		at += n;
	}
}

static void say_where(const char *what)
{
	char msg[200];
	int n = snprintf(msg, sizeof(msg), "parse-fuzz: %s in parser %s, seed %" PRIu64
			 " input %" PRIu64 "\n", what, cur_parser, cur_seed, cur_index);

	release_stderr();
	if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
		_exit(2);
}

static void on_signal(int sig)
{
	say_where(strsignal(sig));
	signal(sig, SIG_DFL);
	raise(sig);
}

/* In sanitizer runtimes only: say which input it was before dying. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void on_sanitizer_error(void)
{
	say_where("sanitizer error");
}

static void usage(void)
{
	fprintf(stderr, "usage: parse-fuzz [-q] [-s SEED] [-t SECONDS] [-n COUNT] "
		"[-i INDEX [-o FILE]] [-f FILE]... [PARSER...]\n");
	exit(99);
}

/* Read a -f file: a valid input of at most MAX_INPUT bytes, no NUL. */
static void add_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *s = xmalloc(MAX_INPUT + 2);
	size_t n = f ? fread(s, 1, MAX_INPUT + 1, f) : 0;

	if (!f || ferror(f) || n > MAX_INPUT || memchr(s, '\0', n)) {
		fprintf(stderr, "parse-fuzz: '%s': %s\n", path,
			!f || ferror(f) ? strerror(errno) : "larger than the input limit or holds a NUL");
		exit(99);
	}
	fclose(f);
	s[n] = '\0';
	files = xrealloc(files, (nfiles + 2) * sizeof(*files));
	files[nfiles++] = s;
	files[nfiles] = NULL;
}

/* The line at s starts with prefix and then a word not capitalized. */
static int line_is(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(s, prefix, n) && s[n] > ' ' && !(s[n] >= 'A' && s[n] <= 'Z');
}

/*
 * What parser p printed for one input, as its result says: nothing for a
 * parser without messages; else "memtap: warning: 'fuzz': " lines, then
 * one "memtap: 'fuzz': " line exactly when it refused.  Prints what is
 * wrong and returns -1, or 0.
 */
static int check_messages(const struct parser *p, int result)
{
	static char buf[64 * 1024];
	struct stat st;
	ssize_t len = -1;
	int errors = 0, bad = 0;

	if (fstat(capture_fd, &st) == 0 && st.st_size < (off_t)sizeof(buf))
		len = pread(capture_fd, buf, sizeof(buf) - 1, 0);
	if (len < 0) {
		printf("%s: more than %zu bytes of messages\n", p->name, sizeof(buf));
		return -1;
	}
	buf[len] = '\0';
	if (len && buf[len - 1] != '\n')
		bad = 1;
	for (char *s = buf; *s && !bad; s = strchr(s, '\n') + 1) {
		for (char *c = s; *c != '\n'; c++)
			bad |= (unsigned char)*c < ' ';
		if (line_is(s, "memtap: '" NAME "': ") && !errors)
			errors++;
		else if (!line_is(s, "memtap: warning: '" NAME "': ") || errors)
			bad = 1;
	}
	if (!p->messages && len)
		bad = 1;
	if (p->messages && errors != (result == REFUSED))
		bad = 1;
	if (bad)
		printf("%s: input %s, and its messages are not one line why:\n%s", p->name,
		       result == READ ? "read" : "refused", buf);
	return bad ? -1 : 0;
}

/* Run parser p on one input with standard error captured; check it. */
static int run_parser(const struct parser *p, const uint8_t *buf, size_t len, int *read)
{
	int result;

	fflush(stderr);
	if (ftruncate(capture_fd, 0) < 0 || lseek(capture_fd, 0, SEEK_SET) < 0 ||
	    dup2(capture_fd, STDERR_FILENO) < 0) {
		perror("parse-fuzz: standard error");
		exit(99);
	}
	capturing = 1;
	result = p->parse(buf, len);
	fflush(stderr);
	capturing = 0;
	dup2(saved_fd, STDERR_FILENO);
	*read = result == READ;
	if (result == BROKEN)
		return -1;
	return check_messages(p, result);
}

/* The limits of the folded parser, exactly. */
static int check_limits(void)
{
	size_t n = FOLDED_MAX_LINE + 2;
	uint8_t *big = malloc(n + 2);
	struct folded_set s = FOLDED_SET_INIT;
	int ret = 0;
	FILE *f;
	long bad;

	if (!big)
		return 0;
	/* a line of exactly FOLDED_MAX_LINE bytes is read */
	memset(big, 'a', FOLDED_MAX_LINE - 2);
	memcpy(big + FOLDED_MAX_LINE - 2, " 1\n", 3);
	f = open_data(big, FOLDED_MAX_LINE + 1);
	bad = f ? folded_set_parse(&s, f) : -1;
	if (f)
		fclose(f);
	if (bad != 0 || s.n != 1) {
		printf("limits: a line of %d bytes: %ld, %zu stacks\n", FOLDED_MAX_LINE, bad, s.n);
		ret = -1;
	}
	folded_set_release(&s);
	/* one more byte is refused */
	memset(big, 'a', FOLDED_MAX_LINE - 1);
	memcpy(big + FOLDED_MAX_LINE - 1, " 1\n", 3);
	f = open_data(big, FOLDED_MAX_LINE + 2);
	errno = 0;
	bad = f ? folded_set_parse(&s, f) : 0;
	if (f)
		fclose(f);
	if (bad != -1 || errno != E2BIG) {
		printf("limits: a line of %d bytes: %ld (errno %d)\n", FOLDED_MAX_LINE + 1, bad, errno);
		ret = -1;
	}
	folded_set_release(&s);
	free(big);
	return ret;
}


/* How to run input index of parser p again. */
static void say_replay(const struct parser *p, uint64_t seed, uint64_t index)
{
	printf("parse-fuzz: parser %s failed, seed %" PRIu64 " input %" PRIu64
	       " (again: parse-fuzz -s %" PRIu64 " -i %" PRIu64 "%s %s)\n", p->name, seed, index,
	       seed, index, p->files && nfiles ? " -f FILE..." : "", p->name);
}

/*
 * A perf map's line at an earlier line's start is a rewrite (the rules
 * of that code made again, jitnames.h); one that only overlaps is not.
 */
static void check_rewrites(void)
{
	static const char map[] = "1000 10 a\n2000 10 b\n1000 10 c\n1008 10 d\n";
	struct mem m = { (const uint8_t *)map, sizeof(map) - 1 };
	struct jit_table t = { .what = "'rewrites'" };
	struct perfmap_state ms = { 0 };

	perfmap_read(&t, &ms, mem_pread, &m, m.len, 1);
	if (t.n != 4 || t.rewrites != 1) {
		printf("parse-fuzz: perfmap: %zu ranges, %" PRIu64 " rewrites (4, 1 expected)\n",
		       t.n, t.rewrites);
		exit(1);
	}
	jit_table_free(&t);
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid(), count = 0, index = 0;
	uint64_t inputs[NPARSERS] = { 0 }, reads[NPARSERS] = { 0 }, runs = 0;
	const char *dump = NULL;
	double seconds = 3;
	int one = 0, quiet = 0, c, devnull;
	int use[NPARSERS] = { 0 }, any = 0;
	static uint8_t buf[MAX_INPUT];
	struct timespec t0, t;
	FILE *capture;

	make_jitdump_seeds();
	check_rewrites();
	while ((c = getopt(argc, argv, "s:t:n:i:o:f:q")) != -1) {
		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'n':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			index = strtoull(optarg, NULL, 0);
			one = 1;
			break;
		case 'o':
			dump = optarg;
			break;
		case 'f':
			add_file(optarg);
			break;
		default:
			usage();
		}
	}
	for (int i = optind; i < argc; i++) {
		size_t k;

		for (k = 0; k < NPARSERS && strcmp(parsers[k].name, argv[i]); k++)
			;
		if (k == NPARSERS)
			usage();
		use[k] = any = 1;
	}
	for (size_t k = 0; k < NPARSERS; k++)
		use[k] |= !any;
	printf("parse-fuzz: seed %" PRIu64 "\n", seed);
	fflush(stdout);
	signal(SIGSEGV, on_signal);
	signal(SIGABRT, on_signal);
	signal(SIGBUS, on_signal);
	signal(SIGFPE, on_signal);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(on_sanitizer_error);
	/* -q: sanitizer reports go nowhere */
	devnull = quiet ? open("/dev/null", O_WRONLY) : -1;
	if (devnull >= 0)
		dup2(devnull, STDERR_FILENO);
	capture = tmpfile();
	saved_fd = dup(STDERR_FILENO);
	if (!capture || saved_fd < 0) {
		perror("parse-fuzz: standard error");
		return 99;
	}
	capture_fd = fileno(capture);
	cur_seed = seed;
	if (!one && check_limits() < 0)
		return 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = one ? index : 0;; i++) {
		if (one && i > index)
			break;
		if (!one && count && i >= count)
			break;
		if (!one && !count && i >= MIN_INPUTS && (i & 63) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >=
			    seconds)
				break;
		}
		for (size_t k = 0; k < NPARSERS; k++) {
			size_t len;
			int read;

			if (!use[k])
				continue;
			cur_parser = parsers[k].name;
			cur_index = i;
			len = make_input(&parsers[k], seed, i, buf);
			if (dump) {
				FILE *f = fopen(dump, "we");

				if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
					perror(dump);
					return 99;
				}
			}
			if (run_parser(&parsers[k], buf, len, &read) < 0) {
				say_replay(&parsers[k], seed, i);
				return 1;
			}
			inputs[k]++;
			reads[k] += (uint64_t)read;
			runs++;
		}
	}
	for (size_t k = 0; k < NPARSERS; k++)
		if (use[k])
			printf("parse-fuzz: %s: %" PRIu64 " inputs, %" PRIu64 " read\n",
			       parsers[k].name, inputs[k], reads[k]);
	printf("parse-fuzz: ok, %" PRIu64 " inputs\n", runs);
	for (size_t k = 0; k < nfiles; k++)
		free((void *)files[k]);
	free(files);
	fclose(capture);
	return 0;
}
#endif /* PARSE_FUZZ_LIBFUZZER */

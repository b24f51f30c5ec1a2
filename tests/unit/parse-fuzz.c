/*
 * parse-fuzz.c - feed generated garbage and mutations of valid inputs
 * to memtap's input parsers: nothing may crash, leak or break a
 * parser's contract.  Run in the build with sanitizers, it finds memory
 * errors too.
 *
 *   parse-fuzz [-q] [-s SEED] [-t SECONDS] [-n COUNT] [-i INDEX [-o FILE]] [PARSER...]
 *
 * Runs the named parsers (default: all) on inputs 0, 1, 2, ... for
 * SECONDS (default 3) or COUNT inputs.  Input i of a seed is always the
 * same: "-s SEED -i INDEX" runs that one input again, "-o FILE" writes
 * it to FILE.  The parsers' messages go to standard error, or nowhere
 * with -q (sanitizer reports too).  The seed (default: from the clock) is printed first; a
 * failure prints the seed and the index of its input.  Exit 0, or 1 on a
 * contract violation (sanitizers exit with their own status).
 *
 * Built with -DPARSE_FUZZ_LIBFUZZER and -fsanitize=fuzzer, the same
 * parsers run under libFuzzer instead (LLVMFuzzerTestOneInput).
 *
 * Add a parser: a function that parses one buffer (not NUL-terminated)
 * and returns 0, or -1 after printing what contract it broke, and one
 * row in parsers[] with the valid inputs its mutations start from.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output.h"

/* ---- the parsers ---- */

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

/* folded_set_parse(), plain and differential, then finish and write. */
static int parse_folded(const uint8_t *data, size_t len)
{
	int ret = 0;

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
	return ret;
}

/* diff_load(): format detection, folded or JSON, as `memtap diff` reads. */
/* The writers of a differential set must take whatever was read. */
static int write_all(const struct folded_set *s)
{
	FILE *null = fopen("/dev/null", "we");
	int ret = 0;

	if (!null)
		return 0;
	if (svg_write_set(null, s, NULL) < 0 || folded_set_write(null, s) < 0)
		ret = -1;
	fclose(null);
	if (ret)
		fprintf(stderr, "parse-fuzz: a writer failed on a set it was given\n");
	return ret;
}

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
		ok = diff_load(&s, "input", f, after, &o, after ? "alloc_objects" : NULL) == 0;
		fclose(f);
	}
	if (ok) {
		s.diff = 1;
		ret = check_set("diff", &s);
		folded_set_finish(&s);
		if (!ret)
			ret = check_set("diff (finished)", &s);
		if (!ret)
			ret = write_all(&s);
	}
	folded_set_release(&s);
	return ret;
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
	NULL
};

static const char *const *const diff_seeds[] = { folded_seeds, json_seeds, NULL };

struct parser {
	const char *name;
	int (*parse)(const uint8_t *data, size_t len);
	const char *const *const *seeds;	/* lists of valid inputs */
};

static const char *const *const folded_only[] = { folded_seeds, NULL };

static const struct parser parsers[] = {
	{ "folded", parse_folded, folded_only },
	{ "diff", parse_diff_input, diff_seeds },
};

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
	"\"inlined\": true", "\xc3", "\xef\xbf\xbd", "\xf4\x90\x80\x80", "\xff", "\0",
	"[unknown] (", "+0x", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
};

#define NTOKENS (sizeof(tokens) / sizeof(tokens[0]))
#define MAX_INPUT (64 * 1024)

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
	const char *const *list = p->seeds[below(nlists)];

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

static void say_where(const char *what)
{
	char msg[200];
	int n = snprintf(msg, sizeof(msg), "parse-fuzz: %s in parser %s, seed %" PRIu64
			 " input %" PRIu64 "\n", what, cur_parser, cur_seed, cur_index);

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
		"[-i INDEX [-o FILE]] [PARSER...]\n");
	exit(99);
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

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid(), count = 0, index = 0;
	const char *dump = NULL;
	double seconds = 3;
	int one = 0, quiet = 0, c, devnull;
	int use[NPARSERS] = { 0 }, any = 0;
	static uint8_t buf[MAX_INPUT];

	while ((c = getopt(argc, argv, "s:t:n:i:o:q")) != -1) {
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
	/* -q: the parsers' one-line messages are expected; sanitizers' too */
	devnull = quiet ? open("/dev/null", O_WRONLY) : -1;
	if (devnull >= 0)
		dup2(devnull, STDERR_FILENO);
	cur_seed = seed;
	if (!one && check_limits() < 0)
		return 1;

	struct timespec t0, t;
	uint64_t runs = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = one ? index : 0;; i++) {
		if (one && i > index)
			break;
		if (!one && count && i >= count)
			break;
		if (!one && !count && (i & 63) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >=
			    seconds)
				break;
		}
		for (size_t k = 0; k < NPARSERS; k++) {
			size_t len;

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
			if (parsers[k].parse(buf, len) < 0) {
				printf("parse-fuzz: parser %s failed, seed %" PRIu64 " input %" PRIu64
				       "\n", parsers[k].name, seed, i);
				return 1;
			}
			runs++;
		}
	}
	printf("parse-fuzz: ok, %" PRIu64 " inputs\n", runs);
	return 0;
}
#endif /* PARSE_FUZZ_LIBFUZZER */

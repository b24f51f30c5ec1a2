/*
 * json-fuzz.c - run the recording reader (recording_parse(), over the
 * JSON reader) on mutated recordings and on garbage, and every writer
 * on what it accepts: nothing may crash, leak or trip a sanitizer.
 *
 * Usage: json-fuzz SEED SECONDS FILE...
 *   Mutates the FILEs (valid recordings) with a PRNG seeded by SEED,
 *   for SECONDS and at least 2000 inputs; prints "N inputs, M read".
 *   The reader's messages (one line per refused input) go to standard
 *   error, with any sanitizer report.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"
#include "xmalloc.h"

static uint64_t state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

struct buf {
	char *s;
	size_t len, cap;
};

static void reserve(struct buf *b, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct buf b = { NULL, 0, 0 };
	size_t r;

	if (!f) {
		perror(path);
		exit(99);
	}
	do {
		reserve(&b, 65536);
		r = fread(b.s + b.len, 1, 65536, f);
		b.len += r;
	} while (r > 0);
	fclose(f);
	*len = b.len;
	return b.s;
}

/* One random edit of b. */
static void mutate(struct buf *b)
{
	static const char tokens[] = "{}[]\",:0123456789-.eE+tfnul\\/ \n\x01\x7f\xff\xc3";
	static const char *const words[] = {
		"null", "true", "false", "-1", "9223372036854775808", "\"0x\"", "\"\\u0000\"",
		"\"\\ud800\"", "[[[[[[[[", "]]]]", "{\"a\":", "1e5", "\"locations\": [",
		"\"mapping\": 99", "\"values\": []", "\"version\": 1", "-0", "\"lines\": [[0,0]]",
	};
	size_t at = below(b->len + 1), n;

	switch (below(8)) {
	case 0:		/* flip bits */
		if (b->len)
			b->s[below(b->len)] ^= (char)(1u << below(8));
		break;
	case 1:		/* a token character */
		if (b->len)
			b->s[below(b->len)] = tokens[below(sizeof(tokens) - 1)];
		break;
	case 2:		/* delete a range */
		n = below(b->len - at + 1);
		n = n > 64 ? below(64) : n;
		memmove(b->s + at, b->s + at + n, b->len - at - n);
		b->len -= n;
		break;
	case 3:		/* duplicate a range */
		n = below(b->len - at + 1) % 256;
		reserve(b, n);
		memmove(b->s + at + n, b->s + at, b->len - at);
		b->len += n;
		break;
	case 4: {	/* insert a word */
		const char *w = words[below(sizeof(words) / sizeof(words[0]))];

		n = strlen(w);
		reserve(b, n);
		memmove(b->s + at + n, b->s + at, b->len - at);
		memcpy(b->s + at, w, n);
		b->len += n;
		break;
	}
	case 5:		/* truncate */
		b->len = at;
		break;
	case 6:		/* a digit run: indexes out of range */
		if (b->len && b->s[at < b->len ? at : 0] >= '0')
			b->s[at < b->len ? at : 0] = '9';
		break;
	default:	/* random bytes */
		n = below(16);
		reserve(b, n);
		memmove(b->s + at + n, b->s + at, b->len - at);
		for (size_t i = 0; i < n; i++)
			b->s[at + i] = (char)rnd();
		b->len += n;
		break;
	}
	b->s[b->len] = '\0';
}

/* Every writer and view on an accepted profile, into /dev/null. */
static void write_all(FILE *null, struct profile *p)
{
	int (*const writers[])(FILE *, const struct profile *, const struct output_options *) = {
		write_text, write_folded, write_svg, write_pprof, write_json,
	};
	struct output_options o = { 0 };

	for (size_t w = 0; w < sizeof(writers) / sizeof(writers[0]); w++) {
		for (size_t t = 0; t <= p->ntypes && t < 4; t++) {
			o.value_index = t;
			writers[w](null, p, &o);
		}
	}
}

int main(int argc, char **argv)
{
	struct buf b = { NULL, 0, 0 };
	char **seeds;
	size_t *lens, nseeds, inputs = 0, read = 0;
	double seconds;
	time_t end;
	FILE *null;

	if (argc < 4) {
		fprintf(stderr, "usage: json-fuzz SEED SECONDS FILE...\n");
		return 99;
	}
	state = strtoull(argv[1], NULL, 0) | 1;
	seconds = strtod(argv[2], NULL);
	nseeds = (size_t)argc - 3;
	seeds = xcalloc(nseeds, sizeof(*seeds));
	lens = xcalloc(nseeds, sizeof(*lens));
	for (size_t i = 0; i < nseeds; i++)
		seeds[i] = slurp(argv[3 + i], &lens[i]);
	null = fopen("/dev/null", "w");
	if (!null)
		return 99;
	end = time(NULL) + (time_t)seconds;
	while (inputs < 2000 || time(NULL) < end) {
		struct profile p;
		size_t k = below(nseeds);

		b.len = 0;
		if (below(16) == 0) {
			/* garbage */
			size_t n = below(4096);

			reserve(&b, n);
			for (size_t i = 0; i < n; i++)
				b.s[i] = (char)rnd();
			b.len = n;
		} else {
			reserve(&b, lens[k]);
			memcpy(b.s, seeds[k], lens[k]);
			b.len = lens[k];
			for (size_t m = 1 + below(8); m > 0; m--)
				mutate(&b);
		}
		reserve(&b, 0);
		b.s[b.len] = '\0';
		inputs++;
		if (recording_parse("fuzz", b.s, b.len, &p) == 0) {
			read++;
			write_all(null, &p);
			profile_release(&p);
		}
	}
	printf("%zu inputs, %zu read\n", inputs, read);
	for (size_t i = 0; i < nseeds; i++)
		free(seeds[i]);
	free(seeds);
	free(lens);
	free(b.s);
	fclose(null);
	return 0;
}

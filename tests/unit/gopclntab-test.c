/*
 * gopclntab-test.c - Go's function table reader (src/stack/runtimes/gopclntab.c).
 *
 *   gopclntab-test            tables of the three formats made here:
 *                             names, starts, files and lines of pcs;
 *                             then 20000 mutations of them (bytes
 *                             changed, words set, the table cut): no
 *                             read outside (run under the sanitizers)
 *   gopclntab-test GO-BINARY  the table of a Go program built from
 *                             tests/targets/go-grow.go: main.grow found
 *                             by name, and its pcs named main.grow
 *
 * Prints "ok" and exits 0, or says what is wrong and exits 1.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libelf.h>

#include "stack/runtimes/gopclntab.h"

#define TEXT 0x401000u

static int bad;

#define CHECK(c, ...) do { if (!(c)) { printf(__VA_ARGS__); printf("\n"); bad = 1; } } while (0)

struct buf {
	unsigned char d[4096];
	size_t n;
};

static size_t put(struct buf *b, const void *p, size_t n)
{
	size_t at = b->n;

	memcpy(b->d + b->n, p, n);
	b->n += n;
	return at;
}

static size_t put32(struct buf *b, uint32_t v)
{
	return put(b, &v, 4);
}

static size_t put64(struct buf *b, uint64_t v)
{
	return put(b, &v, 8);
}

static void set64(struct buf *b, size_t at, uint64_t v)
{
	memcpy(b->d + at, &v, 8);
}

static const char *const names[] = { "main.a", "main.b", "pkg.(*T).c" };
static const uint32_t starts[] = { 0, 0x20, 0x60, 0x70 };	/* from TEXT; the last: the end */
static const char *const files[] = { "/src/a.go", "/src/b.go" };

/* A table of format fmt (16, 18 or 20) into b. */
static void make_table(struct buf *b, int fmt)
{
	size_t hdr = fmt == 16 ? 64 : 72, nameoff[3], fileoff[2], pcfile[3], pcln[3], funcs[3];
	size_t o_names, o_cus, o_files, o_pctab, o_ftab;
	unsigned char magic[8] = { 0, 0, 0, 0, 0, 0, 1, 8 };
	uint32_t m = fmt == 16 ? 0xfffffffa : fmt == 18 ? 0xfffffff0 : 0xfffffff1;

	memset(b, 0, sizeof(*b));
	memcpy(magic, &m, 4);
	put(b, magic, 8);
	b->n = hdr;
	o_names = b->n;
	for (int i = 0; i < 3; i++)
		nameoff[i] = put(b, names[i], strlen(names[i]) + 1) - o_names;
	o_cus = b->n;
	o_files = o_cus + 8;
	fileoff[0] = 0;
	fileoff[1] = strlen(files[0]) + 1;
	put32(b, (uint32_t)fileoff[0]);
	put32(b, (uint32_t)fileoff[1]);
	put(b, files[0], strlen(files[0]) + 1);
	put(b, files[1], strlen(files[1]) + 1);
	o_pctab = b->n;
	put(b, "", 1);	/* offset 0: no table */
	for (int i = 0; i < 3; i++) {
		uint32_t size = starts[i + 1] - starts[i];
		unsigned char f[] = { (unsigned char)(2 * (1 + i % 2)), (unsigned char)size, 0 };
		/* line 10 for the first 4 bytes, then 12 */
		unsigned char l[] = { 22, 4, 4, (unsigned char)(size - 4), 0 };

		pcfile[i] = put(b, f, sizeof(f)) - o_pctab;
		pcln[i] = put(b, l, sizeof(l)) - o_pctab;
	}
	while (b->n % 8)
		b->n++;
	o_ftab = b->n;
	b->n += (fmt == 16 ? 16 : 8) * 4;
	for (int i = 0; i < 3; i++) {
		funcs[i] = b->n - o_ftab;
		if (fmt == 16)
			put64(b, TEXT + starts[i]);
		else
			put32(b, starts[i]);
		put32(b, (uint32_t)nameoff[i]);
		put32(b, 0);			/* args */
		put32(b, 0);			/* deferreturn */
		put32(b, 0);			/* pcsp */
		put32(b, (uint32_t)pcfile[i]);
		put32(b, (uint32_t)pcln[i]);
		put32(b, 0);			/* npcdata */
		put32(b, 0);			/* cuOffset */
		if (fmt == 20)
			put32(b, 9);		/* startLine */
		put32(b, 0);			/* funcID, flag, pad, nfuncdata */
	}
	for (int i = 0; i < 4; i++) {
		size_t at = o_ftab + (size_t)i * (fmt == 16 ? 16 : 8);

		if (fmt == 16) {
			set64(b, at, TEXT + starts[i]);
			set64(b, at + 8, funcs[i < 3 ? i : 2]);
		} else {
			uint32_t w[2] = { starts[i], (uint32_t)funcs[i < 3 ? i : 2] };

			memcpy(b->d + at, w, 8);
		}
	}
	uint64_t words[8] = { 3, 2, TEXT, o_names, o_cus, o_files, o_pctab, o_ftab };

	if (fmt == 16) {
		words[2] = o_names, words[3] = o_cus, words[4] = o_files;
		words[5] = o_pctab, words[6] = o_ftab;
	}
	for (size_t i = 0; i < (hdr - 8) / 8; i++)
		set64(b, 8 + 8 * i, words[i]);
}

static void check_table(int fmt)
{
	struct buf b;
	const char *why = NULL;
	struct gopcln *t;
	struct gopcln_hit h;
	uint64_t start;

	make_table(&b, fmt);
	t = gopcln_parse(b.d, b.n, 0, &why);
	CHECK(t, "format %d: not read: %s", fmt, why ? why : "?");
	if (!t)
		return;
	for (int i = 0; i < 3; i++) {
		uint64_t pc = TEXT + starts[i];

		CHECK(gopcln_lookup(t, pc, 1, &h) == 0 && h.name && !strcmp(h.name, names[i]) &&
		      h.start == pc && h.file && !strcmp(h.file, files[(1 + i % 2) - 1]) &&
		      h.line == 10, "format %d: entry of %s: %s %s:%d", fmt, names[i],
		      h.name ? h.name : "-", h.file ? h.file : "-", h.line);
		CHECK(gopcln_lookup(t, pc + 5, 1, &h) == 0 && h.name && !strcmp(h.name, names[i]) &&
		      h.line == 12, "format %d: %s+5: line %d", fmt, names[i], h.line);
		CHECK(gopcln_lookup(t, TEXT + starts[i + 1] - 1, 0, &h) == 0 && h.name &&
		      !strcmp(h.name, names[i]) && !h.file && !h.line,
		      "format %d: the end of %s", fmt, names[i]);
		CHECK(gopcln_find_func(t, names[i], &start) == 0 && start == pc,
		      "format %d: %s by name", fmt, names[i]);
	}
	CHECK(gopcln_lookup(t, TEXT - 1, 1, &h) < 0, "format %d: a pc before the text", fmt);
	CHECK(gopcln_lookup(t, TEXT + starts[3], 1, &h) < 0, "format %d: a pc after it", fmt);
	CHECK(gopcln_find_func(t, "main.none", &start) < 0, "format %d: no such function", fmt);
	gopcln_free(t);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Mutations: whatever is read, no read outside the table. */
static void mutate(int rounds)
{
	size_t read = 0;

	for (int r = 0; r < rounds; r++) {
		struct buf b;
		const char *why;
		struct gopcln *t;
		unsigned char *copy;
		size_t n;

		make_table(&b, r % 3 == 0 ? 16 : r % 3 == 1 ? 18 : 20);
		for (int k = (int)(next() % 4); k >= 0 && b.n; k--) {
			size_t at = next() % b.n;

			switch (next() % 3) {
			case 0:
				b.d[at] = (unsigned char)next();
				break;
			case 1:
				if (at + 4 <= b.n) {
					uint32_t v = next() % 3 ? (uint32_t)(next() % 256) : (uint32_t)next();

					memcpy(b.d + at, &v, 4);
				}
				break;
			default:
				b.n = at;
				break;
			}
		}
		n = b.n;
		copy = malloc(n ? n : 1);	/* exact size: a read past it is a sanitizer error */
		memcpy(copy, b.d, n);
		t = gopcln_parse(copy, n, 0, &why);
		free(copy);
		if (!t)
			continue;
		read++;
		for (uint64_t pc = TEXT - 2; pc < TEXT + 0x80; pc += 1 + next() % 5) {
			struct gopcln_hit h;
			uint64_t s;

			gopcln_lookup(t, pc, 1, &h);
			(void)gopcln_find_func(t, "main.b", &s);
		}
		gopcln_free(t);
	}
	CHECK(read > 0, "no mutation read");
}

static int check_binary(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	const char *why = NULL;
	struct gopcln *t;
	struct gopcln_hit h;
	uint64_t start;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(gopcln_elf_is_go(elf), "%s: no Go program", path);
	t = gopcln_from_elf(elf, &why);
	CHECK(t, "%s: no table: %s", path, why ? why : "none");
	if (t) {
		CHECK(gopcln_find_func(t, "main.grow", &start) == 0, "%s: no main.grow", path);
		CHECK(gopcln_lookup(t, start + 1, 1, &h) == 0 && h.name &&
		      !strcmp(h.name, "main.grow") && h.start == start && h.file &&
		      strstr(h.file, "go-grow.go") && h.line > 0,
		      "%s: main.grow+1 is %s %s:%d", path, h.name ? h.name : "-",
		      h.file ? h.file : "-", h.line);
		printf("format %s\n", gopcln_format(t));
		gopcln_free(t);
	}
	elf_end(elf);
	close(fd);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		if (check_binary(argv[1]))
			return 1;
		printf("ok\n");
		return 0;
	}
	check_table(16);
	check_table(18);
	check_table(20);
	mutate(20000);
	if (bad)
		return 1;
	printf("ok\n");
	return 0;
}

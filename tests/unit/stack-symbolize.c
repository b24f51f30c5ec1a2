/*
 * stack-symbolize.c - unit test of the symbolizer (symbolize.c) and the
 * module table's file handling (modules.c).
 *
 *   stack-symbolize check BINARY < SYM-lines     names, files, lines,
 *                                               inlined frames
 *   stack-symbolize stripped BINARY < SYM-lines  "[unknown] (BINARY+0x..)"
 *   stack-symbolize garbage FILE...             malformed ELF: no crash
 *   stack-symbolize demangle                    C++, Rust legacy and v0
 *   stack-symbolize names BINARY START END STEP  "ADDR FUNCTION+OFFSET" for
 *                                               each STEPth module address
 *                                               in [START, END) (hex), and
 *                                               the index's counts on stderr
 *   stack-symbolize frames BINARY START END STEP the same with every frame:
 *                                               inlined ones, files, lines
 *
 * SYM lines come from stack-symtest (see there).  Exit 0 on success,
 * 1 on a mismatch, 77 when demangling is not compiled in, 99 on misuse.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/modules.h"
#include "stack/symbols/symbolize.h"

static int failures;

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* Compare frame f with "function|file|line". */
static void check_frame(uint64_t addr, int i, const struct sym_frame *f, char *want)
{
	char *fn = strtok(want, "|"), *file = strtok(NULL, "|"), *line = strtok(NULL, "|");

	if (!fn || !file || !line) {
		fprintf(stderr, "bad expectation\n");
		exit(99);
	}
	if (!f->function || strcmp(f->function, fn) != 0 || !f->file ||
	    strcmp(base(f->file), file) != 0 || f->line != atoi(line)) {
		fprintf(stderr, "%#" PRIx64 " frame %d: got %s|%s|%d, want %s|%s|%s\n", addr, i,
			f->function ? f->function : "(null)", f->file ? base(f->file) : "(null)",
			f->line, fn, file, line);
		failures++;
	}
}

static void check(const char *binary, int stripped)
{
	struct symbolizer *sz = symbolizer_new(0);
	struct symbolizer *raw = symbolizer_new(SYMBOLIZE_NO_DEMANGLE);
	uint32_t id = module_intern_file(binary);
	char line[1024];
	int n = 0;

	if (id == MODULE_NONE) {
		perror(binary);
		exit(99);
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *save = NULL, *tok = strtok_r(line, " \n", &save);
		uint64_t addr;
		const struct sym_info *si;

		if (!tok || strcmp(tok, "SYM") != 0)
			continue;
		addr = strtoull(strtok_r(NULL, " \n", &save), NULL, 0);
		si = symbolizer_lookup(sz, id, addr);
		n++;
		if (si != symbolizer_lookup(sz, id, addr)) {
			fprintf(stderr, "%#" PRIx64 ": not cached\n", addr);
			failures++;
		}
		if (stripped) {
			char got[512], want[512];

			symbolizer_format(si, 0, got, sizeof(got));
			snprintf(want, sizeof(want), "[unknown] (%s+%#" PRIx64 ")", base(binary), addr);
			if (si->nframes != 1 || si->frames[0].function || strcmp(got, want) != 0) {
				fprintf(stderr, "%#" PRIx64 ": got %s (%d frames), want %s\n", addr,
					got, si->nframes, want);
				failures++;
			}
			continue;
		}
		int i = 0;

		for (tok = strtok_r(NULL, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), i++) {
			if (i >= si->nframes) {
				fprintf(stderr, "%#" PRIx64 ": %d frames, want more\n", addr, si->nframes);
				failures++;
				break;
			}
			check_frame(addr, i, &si->frames[i], tok);
		}
		if (i != si->nframes) {
			fprintf(stderr, "%#" PRIx64 ": %d frames, want %d\n", addr, si->nframes, i);
			failures++;
		}
		/* the outermost frame, mangled when asked */
		const struct sym_info *r = symbolizer_lookup(raw, id, addr);
		const struct sym_frame *f = &r->frames[r->nframes - 1];

		if (!f->function || (strstr(si->frames[si->nframes - 1].function, "::") &&
				     strncmp(f->function, "_Z", 2) != 0)) {
			fprintf(stderr, "%#" PRIx64 ": SYMBOLIZE_NO_DEMANGLE gave %s\n", addr,
				f->function ? f->function : "(null)");
			failures++;
		}
	}
	if (!n) {
		fprintf(stderr, "no SYM lines\n");
		exit(99);
	}
	symbolizer_free(raw);
	symbolizer_free(sz);
}

static void garbage(char **files, int n)
{
	struct symbolizer *sz = symbolizer_new(0);
	static const uint64_t addrs[] = { 0, 0x40, 0x1000, 0x1234, 0x400000, UINT64_MAX - 1 };

	for (int i = 0; i < n; i++) {
		uint32_t id = module_intern_file(files[i]);

		if (id == MODULE_NONE) {
			perror(files[i]);
			exit(99);
		}
		for (size_t j = 0; j < sizeof(addrs) / sizeof(addrs[0]); j++) {
			const struct sym_info *si = symbolizer_lookup(sz, id, addrs[j]);
			char buf[256];

			if (!si || si->nframes < 1) {
				fprintf(stderr, "%s: no answer for %#" PRIx64 "\n", files[i], addrs[j]);
				failures++;
				continue;
			}
			symbolizer_format(si, 0, buf, sizeof(buf));
		}
	}
	/* MODULE_NONE and ids never handed out */
	const struct sym_info *si = symbolizer_lookup(sz, MODULE_NONE, 0x1234);
	char buf[64];

	symbolizer_format(si, 0, buf, sizeof(buf));
	if (strcmp(buf, "[unknown] (0x1234)") != 0) {
		fprintf(stderr, "MODULE_NONE: got %s\n", buf);
		failures++;
	}
	si = symbolizer_lookup(sz, 123456, 0x10);
	if (si->frames[0].function) {
		fprintf(stderr, "unknown module: got a name\n");
		failures++;
	}
	symbolizer_free(sz);
}

static int demangle(void)
{
	static const char *const cases[][2] = {
		{ "_ZN11memtap_test6Widget4growEi", "memtap_test::Widget::grow(int)" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		/* Rust legacy: the hash is dropped */
		{ "_ZN4core3fmt5write17h9f8a3e0b9d8e1f2aE", "core::fmt::write" },
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h1234567890abcdefE",
		  "std::rt::lang_start::{{closure}}" },
		/* Rust v0 */
		{ "_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example" },
		{ "_RINvNtCs1234_7mycrate3foo3barmE", "mycrate::foo::bar::<u32>" },
		{ "malloc", NULL },
		{ "_Rgarbage", NULL },
	};
	char *d = symbolize_demangle("_Z3fooi");

	if (!d)
		return 77;
	free(d);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		d = symbolize_demangle(cases[i][0]);
		if ((d == NULL) != (cases[i][1] == NULL) || (d && strcmp(d, cases[i][1]) != 0)) {
			fprintf(stderr, "demangle %s: got %s, want %s\n", cases[i][0],
				d ? d : "(null)", cases[i][1] ? cases[i][1] : "(null)");
			failures++;
		}
		free(d);
	}
	return 0;
}

static void names(const char *binary, const char *start, const char *end, const char *step,
		  int frames)
{
	struct symbolizer *sz = symbolizer_new(frames ? 0 :
					       SYMBOLIZE_NO_LINES | SYMBOLIZE_NO_INLINE);
	uint32_t id = module_intern_file(binary);
	uint64_t lo = strtoull(start, NULL, 16), hi = strtoull(end, NULL, 16);
	uint64_t by = strtoull(step, NULL, 10), indexed, searched;

	if (id == MODULE_NONE || !by) {
		fprintf(stderr, "%s: cannot be read, or step 0\n", binary);
		exit(99);
	}
	for (uint64_t a = lo; a < hi; a += by) {
		const struct sym_info *si = symbolizer_lookup(sz, id, a);
		const struct sym_frame *f = si->nframes ? &si->frames[si->nframes - 1] : NULL;

		printf("%#" PRIx64 " %s+%#" PRIx64, a, f && f->function ? f->function : "?",
		       f ? f->offset : 0);
		for (int i = 0; frames && i < si->nframes; i++)
			printf(" %s%s %s:%d", si->frames[i].inlined ? "inlined " : "",
			       si->frames[i].function ? si->frames[i].function : "?",
			       si->frames[i].file ? si->frames[i].file : "?", si->frames[i].line);
		printf("\n");
	}
	symbolize_index_counts(&indexed, &searched);
	fprintf(stderr, "indexed %" PRIu64 " searched %" PRIu64 "\n", indexed, searched);
	symbolizer_free(sz);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	if (strcmp(argv[1], "check") == 0 && argc == 3)
		check(argv[2], 0);
	else if (strcmp(argv[1], "stripped") == 0 && argc == 3)
		check(argv[2], 1);
	else if (strcmp(argv[1], "names") == 0 && argc == 6)
		names(argv[2], argv[3], argv[4], argv[5], 0);
	else if (strcmp(argv[1], "frames") == 0 && argc == 6)
		names(argv[2], argv[3], argv[4], argv[5], 1);
	else if (strcmp(argv[1], "garbage") == 0 && argc >= 3)
		garbage(argv + 2, argc - 2);
	else if (strcmp(argv[1], "demangle") == 0) {
		if (demangle() == 77)
			return 77;
	} else
		return 99;
	modules_release_all();
	if (failures) {
		fprintf(stderr, "stack-symbolize %s: %d failures\n", argv[1], failures);
		return 1;
	}
	printf("stack-symbolize %s: ok\n", argv[1]);
	return 0;
}

/*
 * elfsym-unit.c - unit tests of elfsym.c on this very process, on libc,
 * and on truncated and corrupted copies of libc (which must give an
 * error or a parse, never a crash); the index of names against a scan
 * of the symbol tables, for every name of libc and of this program.
 *
 *   elfsym-unit [LIBC_PATH]
 *
 * Prints one line per check and exits 0 when all pass, 1 otherwise.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "probe/elfsym.h"
#include "probe/elfsym-image.h"
#include "util/error.h"
#include "util/xmalloc.h"

static int failures;

#define CHECK(cond, ...) do { \
	if (cond) { \
		printf("ok   "); \
	} else { \
		printf("FAIL "); \
		failures++; \
	} \
	printf(__VA_ARGS__); \
	printf("\n"); \
} while (0)

__attribute__((noinline)) static int local_fn(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static uint64_t resolve(struct elfsym_proc *p, const char *spec, const char *prefix,
			const char **module)
{
	struct elfsym_result r;

	if (elfsym_lookup(p, spec, prefix, &r) < 0)
		return 0;
	if (module)
		*module = r.module->path;
	return r.addr;
}

static void test_self(void)
{
	struct elfsym_proc *p = elfsym_proc_load(getpid());
	uint64_t want_malloc = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "malloc");
	const char *mod = NULL, *name;
	uint64_t a;

	CHECK(p != NULL, "elfsym_proc_load(self)");
	if (!p)
		return;
	CHECK(elfsym_proc_nmodules(p) >= 2, "modules: %zu", elfsym_proc_nmodules(p));
	a = resolve(p, "malloc", NULL, &mod);
	CHECK(a == want_malloc, "malloc %#" PRIx64 " (dlsym %#" PRIx64 ") in %s", a,
	      want_malloc, mod ? mod : "?");
	/* libc's own malloc: under AddressSanitizer "malloc" binds elsewhere */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t libc_malloc = libc ? (uint64_t)(uintptr_t)dlsym(libc, "malloc") : want_malloc;

	a = resolve(p, "libc_malloc", "__", NULL);
	CHECK(a == libc_malloc, "prefix __ + libc_malloc is libc's malloc");
	name = elfsym_name_at(p, want_malloc);
	CHECK(name && strcmp(name, "malloc") == 0, "name at malloc: %s", name ? name : "none");
	a = resolve(p, "malloc@libc.so.6", NULL, NULL);
	CHECK(a == libc_malloc, "malloc@libc.so.6");
	a = resolve(p, "malloc@libc", NULL, NULL);
	CHECK(a == libc_malloc, "malloc@libc");
	a = resolve(p, "malloc@libnothere", NULL, NULL);
	CHECK(a == 0, "malloc@libnothere is not found");
	a = resolve(p, "local_fn", NULL, &mod);
	CHECK(a == (uint64_t)(uintptr_t)&local_fn, "static local_fn %#" PRIx64 " (&local_fn %p)",
	      a, (void *)&local_fn);
	a = resolve(p, "main", NULL, NULL);
	CHECK(a != 0 && elfsym_proc_module(p, 0) &&
	      a >= elfsym_proc_module(p, 0)->lo && a < elfsym_proc_module(p, 0)->hi,
	      "main is in the executable, scope 0");
	a = resolve(p, "no_such_function_anywhere", NULL, NULL);
	CHECK(a == 0, "unknown name is not found");
	CHECK(elfsym_proc_skipped(p) == 0, "no object skipped (%zu)", elfsym_proc_skipped(p));
	elfsym_proc_free(p);
	(void)local_fn(1);
}

static void test_rust(void)
{
	CHECK(elfsym_rust_match("_RNvNtCs1234abcd_5alloc5alloc15exchange_malloc", "exchange_malloc"),
	      "v0 suffix");
	CHECK(elfsym_rust_match("_RNvNtCs1234abcd_5alloc5alloc15exchange_malloc",
				"alloc::exchange_malloc"), "v0 path suffix");
	CHECK(!elfsym_rust_match("_RNvNtCs1234abcd_5alloc5alloc15exchange_malloc", "xchange_malloc"),
	      "v0 partial identifier does not match");
	CHECK(elfsym_rust_match("_ZN5alloc5alloc15exchange_malloc17h0123456789abcdefE",
				"exchange_malloc"), "legacy suffix with hash");
	CHECK(elfsym_rust_match("_RNvCs9_7mycrate3__go.llvm.123", "_go"), "v0 '_' separator, .llvm suffix");
	CHECK(!elfsym_rust_match("malloc", "malloc"), "C names are not Rust names");
}

/*
 * For every symbol's name, the index gives the symbols of that name that
 * a scan of the tables finds, in the scan's order: the first match of
 * any search by name is the scan's.
 */
static void test_index(const char *path)
{
	struct elfsym_image *img = elfsym_image_open(path);
	size_t names = 0, bad = 0;

	CHECK(img && img->nsyms > 0, "%s parses", path);
	if (!img)
		return;
	for (size_t i = 0; i < img->nsyms; i++) {
		const char *name = img->pool + img->syms[i].name;
		const struct sym *s = elfsym_image_named(img, name);
		size_t k;

		/* the scan: from the first symbol of that name on */
		for (k = 0; k < img->nsyms; k++)
			if (strcmp(img->pool + img->syms[k].name, name) == 0)
				break;
		if (k < i)
			continue;	/* name seen already */
		names++;
		for (; k < img->nsyms; k++) {
			if (strcmp(img->pool + img->syms[k].name, name) != 0)
				continue;
			if (s != &img->syms[k])
				break;
			s = elfsym_image_next_named(img, s, name);
		}
		if (k < img->nsyms || s)
			bad++;
	}
	CHECK(bad == 0 && names > 0, "index of %s: %zu names, %zu differ from the scan", path,
	      names, bad);
	uint64_t v;

	CHECK(!elfsym_image_named(img, "no such name, anywhere") &&
	      elfsym_image_lookup(img, "", &v) == -ENOENT, "index of %s: absent names", path);
	elfsym_image_free(img);
}

/* Write len bytes of buf, then corrupt or cut; parse; return 1 if it parsed. */
static int parse_bytes(const char *tmp, const uint8_t *buf, size_t len)
{
	struct elfsym_image *img;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		perror(tmp);
		exit(99);
	}
	close(fd);
	img = elfsym_image_open(tmp);
	if (!img)
		return 0;
	uint64_t v;

	(void)elfsym_image_lookup(img, "malloc", &v);
	elfsym_image_free(img);
	return 1;
}

static void test_malformed(const char *libc)
{
	char tmp[] = "/tmp/elfsym-unit-XXXXXX";
	struct stat st;
	uint8_t *orig, *buf;
	int fd = open(libc, O_RDONLY), tfd = mkstemp(tmp), parsed = 0, failed = 0;
	struct elfsym_image *img;
	uint64_t v = 0;

	if (fd < 0 || tfd < 0 || fstat(fd, &st) < 0) {
		CHECK(0, "open %s", libc);
		return;
	}
	close(tfd);
	orig = xmalloc(st.st_size);
	buf = xmalloc(st.st_size);
	if (read(fd, orig, st.st_size) != st.st_size) {
		CHECK(0, "read %s", libc);
		return;
	}
	close(fd);
	img = elfsym_image_open(libc);
	CHECK(img && elfsym_image_lookup(img, "malloc", &v) == 0 && v != 0,
	      "libc parses, malloc at link address %#" PRIx64, v);
	elfsym_image_free(img);

	/* truncations, from nothing to all but one byte */
	const size_t cuts[] = { 0, 1, 4, 16, 63, 64, 100, 1000, 4096, 65536,
				(size_t)st.st_size / 2, (size_t)st.st_size - 4096,
				(size_t)st.st_size - 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		if (parse_bytes(tmp, orig, cuts[i]))
			parsed++;
		else
			failed++;
	CHECK(1, "truncated copies: %d rejected, %d parsed, no crash", failed, parsed);
	CHECK(!parse_bytes(tmp, orig, 0), "empty file is rejected");

	/* corruption: random bytes over headers, tables and random places */
	srand(12345);
	parsed = failed = 0;
	for (int round = 0; round < 300; round++) {
		const uint8_t *eh = orig;
		uint64_t shoff, phoff;

		memcpy(buf, orig, st.st_size);
		memcpy(&phoff, eh + 32, 8);
		memcpy(&shoff, eh + 40, 8);
		for (int k = 0; k < 1 + round % 16; k++) {
			size_t where;

			switch (rand() % 4) {
			case 0: where = rand() % 64; break;
			case 1: where = shoff + rand() % 4096; break;
			case 2: where = phoff + rand() % 1024; break;
			default: where = ((size_t)rand() << 8 ^ rand()) % st.st_size; break;
			}
			if (where < (size_t)st.st_size)
				buf[where] = (uint8_t)rand();
		}
		if (parse_bytes(tmp, buf, st.st_size))
			parsed++;
		else
			failed++;
	}
	CHECK(1, "corrupted copies: %d rejected, %d parsed, no crash", failed, parsed);
	for (size_t i = 0; i < 4096; i++)
		buf[i] = (uint8_t)rand();
	buf[0] = 0x7f; buf[1] = 'E'; buf[2] = 'L'; buf[3] = 'F';
	CHECK(!parse_bytes(tmp, buf, 4096), "random bytes after an ELF magic are rejected");
	unlink(tmp);
	free(orig);
	free(buf);
}

int main(int argc, char **argv)
{
	const char *libc = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6";

	program_name = "elfsym-unit";
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_self();
	test_rust();
	test_index(libc);
	test_index("/proc/self/exe");
	test_malformed(libc);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

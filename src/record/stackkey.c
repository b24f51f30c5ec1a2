/*
 * stackkey.c - stable keys of stacks and their first frame outside the
 * allocator (stackkey.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/sink.h"
#include "record/stackkey.h"
#include "stack/stacks.h"
#include "stack/symbols/symbolize.h"
#include "util/xmalloc.h"

struct key {
	uint64_t key;
	char *frame;		/* NULL: not computed yet */
};

static struct key *keys;
static size_t nkeys;
static struct symbolizer *sz;

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	h ^= 0xff;	/* the end of a name: "ab" "c" is not "a" "bc" */
	return h * 0x100000001b3ULL;
}

static int prefixed(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strncmp(s, *list, strlen(*list)))
			return 1;
	return 0;
}

/* Is this frame the allocator's (or libc's, under the first frame of the program)? */
static int allocator_frame(const char *function, const char *module)
{
	static const char *const objects[] = {
		"libc.so", "libc-", "ld-linux", "ld64.so", "ld-musl", "libc.musl",
		"libjemalloc", "libtcmalloc", "libmimalloc", NULL,
	};
	static const char *const prefixes[] = {
		"operator new", "je_", "tc_", "mi_", "_int_", "__libc_", NULL,
	};
	static const char *const functions[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
		"aligned_alloc", "memalign", "valloc", "pvalloc", "sysmalloc",
		"__default_morecore", "sbrk", "__sbrk", "brk", "__brk", "mmap", "mmap64",
		"__mmap", "mremap", "__mremap", NULL,
	};

	if (module && prefixed(module, objects))
		return 1;
	if (!function)
		return 0;
	for (const char *const *f = functions; *f; f++)
		if (!strcmp(function, *f))
			return 1;
	return prefixed(function, prefixes);
}

uint64_t stack_key(uint32_t stack, const char **frame)
{
	const struct stack_frame *frames;
	const char *first = NULL, *leaf = NULL;
	uint64_t h = 0xcbf29ce484222325ULL;
	struct key *k;
	char unknown[300];
	int depth;

	if (!stack || !sink_stack_table() ||
	    stack_table_get(sink_stack_table(), stack, &frames, &depth) < 0) {
		*frame = "[no stack]";
		return 0;
	}
	if (stack >= nkeys) {
		size_t n = nkeys ? nkeys : 1024;

		while (n <= stack)
			n *= 2;
		keys = xrealloc(keys, n * sizeof(*keys));
		memset(keys + nkeys, 0, (n - nkeys) * sizeof(*keys));
		nkeys = n;
	}
	k = &keys[stack];
	if (k->frame) {
		*frame = k->frame;
		return k->key;
	}
	if (!sz)
		sz = symbolizer_new(SYMBOLIZE_NO_LINES);

	for (int d = 0; d < depth; d++) {
		const struct sym_info *si = symbolizer_lookup(sz, frames[d].module, frames[d].addr);

		for (int i = 0; i < si->nframes; i++) {
			const char *name = si->frames[i].function;

			if (!name) {
				snprintf(unknown, sizeof(unknown), "%s?",
					 si->module_name ? si->module_name : "");
				h = fnv(h, unknown);
			} else {
				h = fnv(h, name);
			}
			if (!leaf)
				leaf = name ? name : "[unknown]";
			if (!first && name && !allocator_frame(name, si->module_name))
				first = name;
		}
	}
	k->key = h;
	k->frame = xstrdup(first ? first : leaf ? leaf : "[unknown]");
	*frame = k->frame;
	return k->key;
}

void stack_key_release(void)
{
	for (size_t i = 0; i < nkeys; i++)
		free(keys[i].frame);
	free(keys);
	keys = NULL;
	nkeys = 0;
	if (sz)
		symbolizer_free(sz);
	sz = NULL;
}

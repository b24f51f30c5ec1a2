/*
 * jit-trim - a perf map's table that is full keeps its newer half
 * (jitnames.c, jit_names_set_max_entries()): 1000 lines read with a cap
 * of 100 ranges; the last lines name their code, the first ones no
 * longer do, and no table holds more than the cap.  Prints "ok" or what
 * differs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "stack/runtimes/jitnames-int.h"
#include "stack/runtimes/jitnames.h"

struct buf {
	const char *data;
	size_t len;
};

static ssize_t buf_pread(void *arg, void *out, size_t n, uint64_t off)
{
	const struct buf *b = arg;

	if (off >= b->len)
		return 0;
	if (n > b->len - off)
		n = b->len - (size_t)off;
	memcpy(out, b->data + off, n);
	return (ssize_t)n;
}

int main(void)
{
	struct jit_table t;
	struct perfmap_state s;
	struct buf b;
	char *text = malloc(1000 * 64);
	size_t len = 0, failures = 0;

	memset(&t, 0, sizeof(t));
	memset(&s, 0, sizeof(s));
	t.what = "test map";
	jit_names_set_max_entries(100);
	for (int i = 0; i < 1000; i++)
		len += (size_t)sprintf(text + len, "%x 10 code_%d\n", 0x10000 + i * 0x10, i);
	b.data = text;
	b.len = len;
	/* in steps, as a map that grows is read */
	for (size_t at = 0; at < len;) {
		size_t step = at + 4096 < len ? at + 4096 : len;

		perfmap_read(&t, &s, buf_pread, &b, step, step == len);
		if (t.n > 100 && failures++ < 5)
			printf("FAIL %zu ranges kept with a cap of 100\n", t.n);
		at = s.off > at ? s.off : step;
	}
	for (int i = 0; i < 1000; i++) {
		const struct jit_entry *e = jit_table_find(&t, 0x10000 + (uint64_t)i * 0x10 + 4);
		char want[32];

		snprintf(want, sizeof(want), "code_%d", i);
		if (i >= 950 && (!e || strcmp(t.pool + e->name, want) != 0) && failures++ < 5)
			printf("FAIL code_%d: %s\n", i, e ? t.pool + e->name : "not named");
		if (i < 500 && e && failures++ < 5)
			printf("FAIL code_%d still named %s\n", i, t.pool + e->name);
	}
	if (!t.trimmed && failures++ < 5)
		printf("FAIL nothing let go\n");
	jit_table_free(&t);
	free(text);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * stack-table.c - unit test of the stack table (stacks.c): interning,
 * ids, frames kept unchanged and unmoved, the memory bound, and the
 * return-address adjustment of stack_table_intern_pcs().
 * Exit 0 on success, 1 with a message on the first failure.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/modules.h"
#include "stack/stacks.h"

static int failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		failures++; \
	} \
} while (0)

/* A reproducible stack: n frames derived from seed. */
static int make_stack(struct stack_frame *f, unsigned seed)
{
	int depth = 1 + (int)(seed % 40);

	for (int i = 0; i < depth; i++) {
		f[i].addr = 0x1000 + (uint64_t)seed * 0x10 + (uint64_t)i * 0x100000;
		f[i].module = i % 5 == 4 ? MODULE_NONE : (seed + (unsigned)i) % 7;
		f[i].reserved = 0;
	}
	return depth;
}

static int same(const struct stack_frame *a, const struct stack_frame *b, int depth)
{
	for (int i = 0; i < depth; i++)
		if (a[i].addr != b[i].addr || a[i].module != b[i].module)
			return 0;
	return 1;
}

static void test_basic(void)
{
	struct stack_table *t = stack_table_new(0);
	struct stack_frame f[64], g[64];
	const struct stack_frame *got;
	enum { N = 20000 };
	static uint32_t ids[N];
	static const struct stack_frame *ptrs[N];
	int depth, d;

	CHECK(stack_table_count(t) == 1);
	CHECK(stack_table_get(t, STACK_ID_LOST, &got, &d) == 0 && d == 0);
	CHECK(stack_table_intern(t, f, 0) == STACK_ID_LOST);
	CHECK(stack_table_get(t, 1, &got, &d) < 0);

	for (unsigned i = 0; i < N; i++) {
		depth = make_stack(f, i);
		ids[i] = stack_table_intern(t, f, depth);
		CHECK(ids[i] != STACK_ID_LOST);
		CHECK(stack_table_get(t, ids[i], &ptrs[i], &d) == 0 && d == depth);
	}
	CHECK(stack_table_count(t) == N + 1);
	/* again: same ids, nothing added, frames unchanged and unmoved */
	for (unsigned i = 0; i < N; i++) {
		depth = make_stack(f, i);
		CHECK(stack_table_intern(t, f, depth) == ids[i]);
		CHECK(stack_table_get(t, ids[i], &got, &d) == 0);
		CHECK(got == ptrs[i] && d == depth && same(got, f, depth));
	}
	CHECK(stack_table_count(t) == N + 1);

	/* stacks differing in one frame's module or in depth are distinct */
	depth = make_stack(f, 7);
	memcpy(g, f, sizeof(g));
	g[depth - 1].module ^= 1;
	CHECK(stack_table_intern(t, g, depth) != ids[7]);
	CHECK(depth > 1 && stack_table_intern(t, f, depth - 1) != ids[7]);

	size_t mem = stack_table_memory(t);

	CHECK(mem > (size_t)N * 16 && mem < (size_t)64 << 20);
	CHECK(stack_table_lost(t) == 0);
	stack_table_free(t);
}

static void test_bound(void)
{
	struct stack_table *t = stack_table_new(256 * 1024);
	struct stack_frame f[64];
	uint32_t first = STACK_ID_LOST, id;
	int depth, lost_seen = 0;

	for (unsigned i = 0; i < 100000; i++) {
		depth = make_stack(f, i);
		id = stack_table_intern(t, f, depth);
		if (i == 0)
			first = id;
		if (id == STACK_ID_LOST)
			lost_seen = 1;
		CHECK(stack_table_memory(t) <= 256 * 1024);
	}
	CHECK(lost_seen);
	CHECK(stack_table_lost(t) > 0);
	/* a known stack still finds its id once full */
	depth = make_stack(f, 0);
	CHECK(first != STACK_ID_LOST && stack_table_intern(t, f, depth) == first);
	stack_table_free(t);
}

static void test_pcs(void)
{
	struct stack_table *t = stack_table_new(0);
	uint64_t pcs[3] = { 0x401000, 0x402005, 0x403009 };
	const struct stack_frame *got;
	int d;
	uint32_t id = stack_table_intern_pcs(t, NULL, pcs, 3);

	CHECK(stack_table_get(t, id, &got, &d) == 0 && d == 3);
	/* frame 0 is the exact pc, callers are return address - 1 */
	CHECK(got[0].addr == 0x401000 && got[0].module == MODULE_NONE);
	CHECK(got[1].addr == 0x402004 && got[2].addr == 0x403008);
	CHECK(stack_table_intern_pcs(t, NULL, pcs, 0) == STACK_ID_LOST);
	stack_table_free(t);
}

int main(void)
{
	test_basic();
	test_bound();
	test_pcs();
	if (failures) {
		fprintf(stderr, "stack-table: %d failures\n", failures);
		return 1;
	}
	printf("stack-table: ok\n");
	return 0;
}

/*
 * held-unit - the live-allocation table (live.c) and the held ranges
 * (maptrack.c) against simple models, over many random operations:
 * adds, removals, splits, address reuse; and the blocks a realloc
 * reported late frees, set aside when their address was handed out
 * again (live_release()).  Prints "ok" or what differs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/aggregate.h"
#include "record/event.h"
#include "record/live.h"
#include "record/maptrack.h"
#include "record/sink.h"

static struct sink_proc the_proc;

struct sink_proc *sink_procs(void)
{
	return &the_proc;
}

#define PAGES 4096		/* model of the address space, in pages */
static uint32_t owner[PAGES];	/* stack id holding each page, 0 = none */
static int failures;

static void check(int cond, const char *what, long i)
{
	if (!cond && failures++ < 10)
		printf("FAIL %s (step %ld)\n", what, i);
}

/* The held counters (aggregate.h) against a walk of every block and range. */
static uint64_t walked[1 << 16], walked_objects[1 << 16];

static void walk_block(const struct live_block *b, void *arg)
{
	size_t i = aggregate_index(arg, (enum event_kind)b->kind, b->stack);

	if (!b->inherited && i < (1 << 16)) {
		walked[i] += b->size;
		walked_objects[i]++;
	}
}

static void walk_seg(const struct map_seg *s, void *arg)
{
	size_t i = aggregate_index(arg, (enum event_kind)s->kind, s->stack);

	if (!s->inherited && i < (1 << 16)) {
		walked[i] += s->end - s->start;
		walked_objects[i]++;
	}
}

static void check_counters(const char *what, long step)
{
	size_t n;
	const struct agg *a;
	uint64_t total[HELD_NFAMILIES] = { 0 };
	int same = 1;

	memset(walked, 0, sizeof(walked));
	memset(walked_objects, 0, sizeof(walked_objects));
	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		live_foreach(p, walk_block, p);
		maptrack_foreach(p, walk_seg, p);
	}
	a = aggregate_entries(&n);
	for (size_t i = 0; i < n && i < (1 << 16); i++) {
		same &= a[i].held == walked[i] && a[i].held_objects == walked_objects[i];
		total[held_family_of(a[i].kind)] += a[i].held;
	}
	check(same, what, step);
	for (int f = 0; f < HELD_NFAMILIES; f++)
		check(aggregate_peak(f)->now == total[f] && aggregate_peak(f)->bytes >= total[f],
		      "family totals and peaks", step);
}

static void seg_to_model(const struct map_seg *s, void *arg)
{
	uint32_t *seen = arg;

	for (uint64_t pg = s->start / 4096; pg < s->end / 4096; pg++)
		seen[pg] = s->stack;
}

struct order {
	uint64_t last;
	int sorted;
};

static void seg_order(const struct map_seg *s, void *arg)
{
	struct order *o = arg;

	if (s->start < o->last || s->start >= s->end)
		o->sorted = 0;
	o->last = s->end;
}

static void test_maptrack(void)
{
	static uint32_t seen[PAGES];

	srand(1);
	for (long i = 0; i < 20000; i++) {
		uint64_t a = (uint64_t)(rand() % (PAGES - 64)), len = 1 + (uint64_t)(rand() % 63);
		uint32_t stack = 1 + (uint32_t)(rand() % 7);

		if (rand() % 3) {
			maptrack_add(&the_proc, a * 4096, (a + len) * 4096, stack, 0, 1);
			for (uint64_t pg = a; pg < a + len; pg++)
				owner[pg] = stack;
		} else {
			maptrack_remove(&the_proc, a * 4096, (a + len) * 4096);
			for (uint64_t pg = a; pg < a + len; pg++)
				owner[pg] = 0;
		}
		if (i % 500 == 0 || i == 19999) {
			memset(seen, 0, sizeof(seen));
			maptrack_foreach(&the_proc, seg_to_model, seen);
			check(memcmp(seen, owner, sizeof(seen)) == 0, "maptrack matches the page model", i);
			check_counters("held counters of the ranges", i);
		}
	}
	/* ranges stay sorted, disjoint and non-empty */
	struct order o = { 0, 1 };

	maptrack_foreach(&the_proc, seg_order, &o);
	check(o.sorted, "ranges sorted and disjoint", 0);
}

#define NADDR 5000
static uint64_t model_size[NADDR];	/* 0 = free */

static void test_live(void)
{
	uint64_t bytes = 0;
	size_t count = 0;

	srand(2);
	for (long i = 0; i < 200000; i++) {
		int k = rand() % NADDR;
		uint64_t addr = 0x10000 + (uint64_t)k * 16;
		struct live_block b;

		if (rand() % 2) {
			uint64_t size = 1 + (uint64_t)(rand() % 1000);

			live_add(&the_proc, addr, size, (uint32_t)k, (uint64_t)i, 0, 0);
			if (model_size[k])
				bytes -= model_size[k];
			else
				count++;
			model_size[k] = size;
			bytes += size;
		} else {
			int r = live_remove(&the_proc, addr, &b);

			check((r == 0) == (model_size[k] != 0), "remove finds exactly the live blocks", i);
			if (r == 0) {
				check(b.size == model_size[k] && b.stack == (uint32_t)k, "removed block's size and stack", i);
				bytes -= model_size[k];
				count--;
				model_size[k] = 0;
			}
		}
		if (i % 1000 == 0) {
			check(live_bytes(&the_proc) == bytes, "live bytes", i);
			check(live_count(&the_proc) == count, "live count", i);
			if (i % 20000 == 0)
				check_counters("held counters of the blocks", i);
		}
	}
	check(live_memory() <= 64 * live_count(&the_proc) || live_count(&the_proc) < 400,
	      "at most 64 bytes per live block", 0);
	printf("live: %zu blocks, %zu bytes of table (%.1f per block)\n", live_count(&the_proc),
	       live_memory(), (double)live_memory() / (double)(live_count(&the_proc) ? live_count(&the_proc) : 1));
}

/* A fork child: the_proc's blocks and ranges, marked inherited. */
static struct sink_proc child_proc;

struct fork_seen {
	size_t inherited, own;
	uint64_t inherited_bytes;
	int wrong;
};

static void block_origin(const struct live_block *b, void *arg)
{
	struct fork_seen *fs = arg;
	int k = (int)((b->addr - 0x10000) / 16);

	/* even slots were freed and allocated again by the child */
	if (b->inherited != (k % 2 != 0))
		fs->wrong++;
	if (b->inherited) {
		fs->inherited++;
		fs->inherited_bytes += b->size;
	} else {
		fs->own++;
	}
}

static uint8_t inherited_page[PAGES];

static void seg_origin(const struct map_seg *s, void *arg)
{
	struct fork_seen *fs = arg;

	for (uint64_t pg = s->start / 4096; pg < s->end / 4096; pg++)
		if (inherited_page[pg] != s->inherited)
			fs->wrong++;
}

static void page_model(const struct map_seg *s, void *arg)
{
	(void)arg;
	for (uint64_t pg = s->start / 4096; pg < s->end / 4096; pg++)
		inherited_page[pg] = 1;
}

static void test_fork(void)
{
	struct fork_seen fs = { 0 };
	size_t count = live_count(&the_proc), freed = 0;
	uint64_t bytes = live_bytes(&the_proc), freed_bytes = 0;

	the_proc.next = &child_proc;
	live_copy(&child_proc, &the_proc);
	check(live_count(&child_proc) == count && live_bytes(&child_proc) == bytes,
	      "the child has its parent's blocks", 0);
	check(live_inherited_count(&child_proc) == count &&
	      live_inherited_bytes(&child_proc) == bytes, "all of them inherited", 0);
	check(live_inherited_count(&the_proc) == 0, "the parent's are its own", 0);
	for (int k = 0; k < NADDR; k += 2) {
		struct live_block b;
		uint64_t addr = 0x10000 + (uint64_t)k * 16;

		if (live_remove(&child_proc, addr, &b) == 0) {
			check(b.inherited == 1, "a removed inherited block says so", k);
			freed++;
			freed_bytes += b.size;
		}
		live_add(&child_proc, addr, 8, 1, 0, 0, 0);
	}
	check(live_inherited_count(&child_proc) == count - freed &&
	      live_inherited_bytes(&child_proc) == bytes - freed_bytes,
	      "inherited counts after frees", 0);
	live_foreach(&child_proc, block_origin, &fs);
	check(!fs.wrong && fs.inherited == count - freed && fs.inherited_bytes == bytes - freed_bytes &&
	      fs.own == NADDR / 2, "each block inherited or the child's own", 0);
	check(live_count(&the_proc) == count && live_bytes(&the_proc) == bytes,
	      "the parent's blocks unchanged", 0);

	/* ranges: a hole and a new range in the copy keep the rest inherited */
	maptrack_foreach(&the_proc, page_model, NULL);
	maptrack_copy(&child_proc, &the_proc);
	maptrack_remove(&child_proc, 100 * 4096, 300 * 4096);
	maptrack_add(&child_proc, 250 * 4096, 400 * 4096, 9, 0, 1);
	for (int pg = 100; pg < 400; pg++)
		inherited_page[pg] = 0;
	memset(&fs, 0, sizeof(fs));
	maptrack_foreach(&child_proc, seg_origin, &fs);
	check(!fs.wrong, "each range inherited or the child's own", 0);
	check_counters("held counters after a fork", 0);
	live_clear(&child_proc);
	maptrack_clear(&child_proc);
	check_counters("held counters after an exec", 0);
}

/*
 * A process forgotten (live_forget(), maptrack_forget(),
 * aggregate_forget()): its entries gone, the other's figures and order
 * kept, what it held taken out of the families' totals.
 */
static void test_forget(void)
{
	static struct sink_proc a, b;
	uint64_t alloc_before = aggregate_peak(HELD_ALLOC)->now;
	size_t n;
	struct agg *e;

	for (uint32_t s = 1; s <= 50; s++) {
		live_add(&a, 0x10000 + s * 64, 10, s, 0, EV_MALLOC, 0);
		live_add(&b, 0x10000 + s * 64, 20, s, 0, EV_MALLOC, 0);
		aggregate_add(&b, EV_MALLOC, s, 0, 20, 0);
		maptrack_add(&a, 0x100000 + s * 4096, 0x101000 + s * 4096, s, 0, EV_MMAP);
	}
	live_forget(&a);
	maptrack_forget(&a);
	aggregate_forget(&a);
	e = aggregate_entries(&n);
	for (size_t i = 0; i < n; i++)
		check(e[i].proc != &a, "forget: an entry of the process forgotten is left", (long)i);
	for (uint32_t s = 1; s <= 50; s++) {
		size_t i = aggregate_index(&b, EV_MALLOC, s);

		check(i < n && e[i].calls == 1 && e[i].held == 20 && e[i].held_objects == 1,
		      "forget: the other process's entry changed", (long)s);
		check(i == 0 || e[i - 1].stack < s || e[i - 1].proc != &b,
		      "forget: the order changed", (long)s);
	}
	check(aggregate_peak(HELD_ALLOC)->now == alloc_before + 50 * 20,
	      "forget: the blocks' total", 0);
	check(live_count(&b) == 50, "forget: the other's blocks", 0);
	live_forget(&b);
	aggregate_forget(&b);
}

/*
 * Reallocs reported after another thread got their old block's address
 * back (their events' orders, sink.h): each gives back the block the
 * address held at its entry, never the new one; the blocks set aside
 * are no longer held; at most a few hundred are kept.
 */
static void test_release(void)
{
	static struct sink_proc c;
	const uint64_t x = 0x5000, y = 0x6000;
	struct live_block b;
	uint64_t before = live_memory();

	child_proc.next = &c;	/* walked by check_counters() */
	/* A's realloc of its block at x enters (order 2); B gets x (3), frees it (4); C gets it (5) */
	live_add(&c, x, 100, 1, 0, EV_MALLOC, 1);
	live_add(&c, x, 30, 2, 0, EV_MALLOC, 3);
	check(live_bytes(&c) == 30 && live_count(&c) == 1, "release: the block set aside held", 0);
	check(live_remove(&c, x, &b) == 0 && b.size == 30, "release: B's free", 0);
	live_add(&c, x, 50, 3, 0, EV_MALLOC, 5);
	/* A's realloc reported (6): its own block, not C's */
	check(live_release(&c, x, 2, &b) == 0 && b.size == 100 && b.stack == 1,
	      "release: the block at x at the entry", (long)b.size);
	check(live_bytes(&c) == 50 && live_count(&c) == 1, "release: C's block kept", 0);
	/* C's realloc, entered after: C's block; a call entered unknown: the block there */
	check(live_release(&c, x, 7, &b) == 0 && b.size == 50, "release: C's realloc", 0);
	check(live_release(&c, x, 2, &b) < 0, "release: a block taken twice", 0);
	live_add(&c, x, 60, 4, 0, EV_MALLOC, 8);
	check(live_release(&c, x, 0, &b) == 0 && b.size == 60, "release: entry unknown", 0);
	/* a ring's orders and the sink's are not compared: the block there */
	live_add(&c, x, 70, 4, 0, EV_MALLOC, 9);
	live_add(&c, x, 80, 4, 0, EV_MALLOC, 10);
	check(live_release(&c, x, EV_ORDER_SEQ | 5, &b) == 0 && b.size == 80,
	      "release: orders of another kind", (long)b.size);
	check(live_release(&c, x, 10, &b) == 0 && b.size == 70, "release: the one set aside", 0);

	/* two in flight: A's (entered 11) and B's (entered 13), B's reported first */
	live_add(&c, y, 10, 5, 0, EV_MALLOC, 10);
	live_add(&c, y, 20, 6, 0, EV_MALLOC, 12);
	live_add(&c, y, 40, 7, 0, EV_MALLOC, 14);
	check(live_release(&c, y, 13, &b) == 0 && b.size == 20, "release: B's block", (long)b.size);
	check(live_release(&c, y, 11, &b) == 0 && b.size == 10, "release: A's block", (long)b.size);
	check(live_bytes(&c) == 40 && live_count(&c) == 1, "release: the last one held", 0);
	check_counters("held counters after the releases", 0);

	/*
	 * 300 set aside, never a realloc reported: the 44 oldest (40 bytes,
	 * then 1 to 43) forgotten, 256 kept
	 */
	for (uint64_t i = 0; i < 300; i++)
		live_add(&c, y, 1 + i, 8, 0, EV_MALLOC, 100 + i);
	check(live_release(&c, y, 100, &b) == 0 && b.size == 44,
	      "release: the oldest set aside forgotten first", (long)b.size);
	check(live_release(&c, y, 399, &b) == 0 && b.size == 299, "release: the newest set aside",
	      (long)b.size);
	check(live_bytes(&c) == 300 && live_count(&c) == 1, "release: the block at y", 0);
	check_counters("held counters after 300 set aside", 0);
	child_proc.next = NULL;
	live_forget(&c);
	aggregate_forget(&c);
	check(live_memory() == before, "release: memory given back", (long)live_memory());
}

int main(void)
{
	test_maptrack();
	test_live();
	test_fork();
	test_forget();
	test_release();
	maptrack_release_all();
	live_release_all();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * held-unit - the live-allocation table (live.c) and the held ranges
 * (maptrack.c) against simple models, over many random operations:
 * adds, removals, splits, address reuse.  Prints "ok" or what differs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/aggregate.h"
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

int main(void)
{
	test_maptrack();
	test_live();
	test_fork();
	test_forget();
	maptrack_release_all();
	live_release_all();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * wrappers - a target to attach to whose memory syscalls all go through
 * the C library's wrappers, from known functions
 * (tests/arm64/memtap.test).
 *
 * Prints "ready PID" and waits for signals:
 *   SIGUSR1  one round, then its EXPECT lines and "round N done":
 *            map_two():   2 anonymous mmaps of 16 MiB, and one of
 *                         256 TiB that fails (-1, ENOMEM; no weight);
 *            grow_one():  mremap of one of them 16 -> 40 MiB;
 *            unmap_one(): munmap of the other, and one of an unaligned
 *                         address that fails (-1, EINVAL);
 *            heap_up():   sbrk of +8 MiB twice, then -4 MiB (brk);
 *            small():     SMALL mmaps of 64 KiB, each unmapped (under
 *                         the test's --min-size: calls, no weight);
 *            the 40 MiB mapping and the heap stay, as a leak would.
 *   SIGUSR2  prints "done rounds=N" and exits 0.
 * Any unexpected result exits 99 with what failed.  Its output but for
 * its pid is the same traced or not.
 */
#include <errno.h>
#include <stdint.h>
#include "target.h"

#define SMALL 100

static void check(int ok, const char *what)
{
	if (!ok) {
		printf("FAIL %s: %s\n", what, strerror(errno));
		exit(99);
	}
}

__attribute__((noinline)) static void *map_two(void **other)
{
	void *bad;

	*other = xmmap_anon(16 * MiB);
	bad = mmap(NULL, 1UL << 48, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	check(bad == MAP_FAILED && errno == ENOMEM, "mmap of 256 TiB");
	return xmmap_anon(16 * MiB);
}

__attribute__((noinline)) static void *grow_one(void *p)
{
	void *r = mremap(p, 16 * MiB, 40 * MiB, MREMAP_MAYMOVE);

	check(r != MAP_FAILED, "mremap");
	return r;
}

__attribute__((noinline)) static void unmap_one(void *p)
{
	xmunmap(p, 16 * MiB);
	check(munmap((char *)p + 1, 4096) == -1 && errno == EINVAL, "munmap unaligned");
}

__attribute__((noinline)) static void heap_up(void)
{
	check(sbrk(8 * MiB) != (void *)-1, "sbrk");
	check(sbrk(8 * MiB) != (void *)-1, "sbrk");
	check(sbrk(-(intptr_t)(4 * MiB)) != (void *)-1, "sbrk down");
}

__attribute__((noinline)) static void small(void)
{
	for (int i = 0; i < SMALL; i++)
		xmunmap(xmmap_anon(64 * 1024), 64 * 1024);
}

int main(void)
{
	sigset_t set;
	int sig, rounds = 0;

	block_usr_signals(&set);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		void *a, *b;

		if (sigwait(&set, &sig))
			return 99;
		if (sig == SIGUSR2)
			break;
		a = map_two(&b);
		grow_one(a);
		unmap_one(b);
		heap_up();
		small();
		rounds++;
		expect("mmap", 2, 32 * MiB, 0);
		expect("mremap", 1, 24 * MiB, 0);
		expect("munmap", 1, 0, 16 * MiB);
		expect("brk", 3, 16 * MiB, 4 * MiB);
		printf("round %d done\n", rounds);
		fflush(stdout);
	}
	printf("done rounds=%d\n", rounds);
	return 0;
}

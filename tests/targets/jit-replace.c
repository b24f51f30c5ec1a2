/*
 * jit-replace.c - code rewritten at the same address, as a JIT reuses
 * its code space: a function written into anonymous memory (RW, then
 * RX) calls work(), which mallocs SIZE_A bytes, N times; the page is
 * made writable again and the same bytes rewritten with a function of
 * another frame (72 bytes of its own, not 8), whose call returns at the
 * same address, then made executable and called N times, work()
 * mallocing SIZE_B bytes.  Both functions store 0x1234 (no code) in
 * the word above their stack pointer: an unwinder that steps the second
 * by the first's rule reads it as the return address.
 *
 *   jit-replace N [map|sync]   (N at most 1000; the blocks are freed at the end)
 *
 * map: each version of the code gets a line of /tmp/perf-PID.map,
 * jit_a then jit_b at the same address, flushed before it runs.  sync:
 * the same, and after each line, and again before the code is
 * rewritten and before it is unmapped, the target waits until its tracer has read the map
 * SETTLE_READS times more (inotify's IN_ACCESS, each read after a line
 * of its own: a range at an address no code has), within SETTLE_S
 * seconds each, else exits 98: a tracer that reads the map as it reads
 * the records of in-target probes (memtap --probes=detour) has then
 * read every record made before, and read the line before a call of
 * the code it names.
 *
 * Every malloc's stack is main;run;<the code>;work;malloc.  Prints
 * "EXPECT malloc <calls> <bytes>" for each phase.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIZE_A 3331
#define SIZE_B 7771
#define MAX_N 1000
#define SETTLE_READS 4
#define SETTLE_S 60

static size_t size = SIZE_A;
/* freed at the end: a leak checker in the target finds none */
static void *blocks[2 * MAX_N];
static unsigned long nblocks;

__attribute__((noinline)) static void work(void)
{
	void *p = malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	if (!p || nblocks >= 2 * MAX_N)
		exit(99);
	blocks[nblocks++] = p;
}

__attribute__((noinline)) static void run(void (*call)(void), unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		call();
	__asm__ volatile("" : : : "memory");
}

/*
 * sub $FRAME,%rsp; movq $0x1234,DISP(%rsp); movabs $work,%rax;
 * call *%rax; add $FRAME,%rsp; ret
 */
static void write_code(unsigned char *page, unsigned char frame, unsigned char disp)
{
	unsigned char code[] = {
		0x48, 0x83, 0xec, frame,
		0x48, 0xc7, 0x44, 0x24, disp, 0x34, 0x12, 0x00, 0x00,
		0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xd0,
		0x48, 0x83, 0xc4, frame,
		0xc3,
	};
	uint64_t fn = (uint64_t)(uintptr_t)work;

	memcpy(code + 15, &fn, sizeof(fn));
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0)
		exit(99);
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		exit(99);
}

/* with map: a line naming the code at page, flushed before it runs */
static void map_line(FILE *map, unsigned char *page, const char *name)
{
	if (map && (fprintf(map, "%lx 1e %s\n", (unsigned long)(uintptr_t)page, name) < 0 ||
		    fflush(map) != 0))
		exit(99);
}

static int watch = -1;
static unsigned long fillers;

/* with sync: SETTLE_READS reads of the map, each after a line of its own */
static void settle(FILE *map)
{
	char ev[4096];
	struct pollfd pfd = { .fd = watch, .events = POLLIN };

	if (watch < 0)
		return;
	for (int i = 0; i < SETTLE_READS; i++) {
		while (read(watch, ev, sizeof(ev)) > 0)
			;	/* reads of before */
		if (fprintf(map, "%lx 1 filler\n", 0x10 * ++fillers) < 0 || fflush(map) != 0)
			exit(99);
		if (poll(&pfd, 1, SETTLE_S * 1000) != 1) {
			fprintf(stderr, "jit-replace: the map was not read\n");
			exit(98);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*call)(void);
	FILE *map = NULL;

	if (page == MAP_FAILED || n > MAX_N)
		return 99;
	if (argc > 2 && (strcmp(argv[2], "map") == 0 || strcmp(argv[2], "sync") == 0)) {
		char path[64];

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		if (!(map = fopen(path, "w")))
			return 99;
		if (strcmp(argv[2], "sync") == 0 &&
		    ((watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
		     inotify_add_watch(watch, path, IN_ACCESS) < 0))
			return 99;
		printf("FILE %s\n", path);
		fflush(stdout);
	}
	*(void **)&call = page;
	/* 8 bytes of frame, the word at 0(%rsp) */
	write_code(page, 0x08, 0x00);
	map_line(map, page, "jit_a");
	settle(map);
	run(call, n);
	settle(map);
	/* 72 bytes, the word at 8(%rsp): where the first's return address was */
	size = SIZE_B;
	write_code(page, 0x48, 0x08);
	map_line(map, page, "jit_b");
	settle(map);
	run(call, n);
	settle(map);	/* its records read while the code is there */
	if (map)
		fclose(map);
	for (unsigned long i = 0; i < nblocks; i++)
		free(blocks[i]);
	munmap(page, 4096);
	printf("EXPECT malloc %lu %lu\n", n, n * SIZE_A);
	printf("EXPECT malloc %lu %lu\n", n, n * SIZE_B);
	return 0;
}

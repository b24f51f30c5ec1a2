/*
 * dl-grow.c - dlopen a library after start, make it allocate, dlclose
 * it: stacks must go through the library's functions whatever events
 * are traced, and probes on them must be found.
 *
 *   dl-grow LIBRARY N ROUNDS        ROUNDS rounds, then exit
 *   dl-grow LIBRARY N wait          "ready PID", then one round per
 *                                   SIGUSR1 ("round K done"); SIGUSR2
 *                                   exits
 *
 * A round: mallocs here that grow the heap and make an mmap (so that
 * memtap has seen this process's modules before the library comes),
 * dlopen, lib_grow(N) (alloc-dl-lib.c), dlclose, free.  Prints "RANGE <pid> <start> <end>" of its
 * own code and, after each round, "EXPECT <pid> probe <calls> <bytes> 0"
 * for --probe lib_grow:size=arg0 (see alloc-lib.sh), then OK at the end.
 */
#include <dlfcn.h>

#include "target.h"

#define SECTION __attribute__((section("dlgrow_text"), noinline))

extern char __start_dlgrow_text[], __stop_dlgrow_text[];

SECTION static int round_work(const char *lib, unsigned long n)
{
	void *h, *keep[5];
	int (*grow)(unsigned long);
	int bad;

	/* before the library: the heap grows (brk), and an mmap */
	for (int i = 0; i < 5; i++) {
		keep[i] = malloc(i < 4 ? 64 * 1024 : 256 * 1024);
		if (!keep[i])
			return 1;
		memset(keep[i], i, 4096);
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dl-grow: %s\n", dlerror());
		exit(99);
	}
	*(void **)&grow = dlsym(h, "lib_grow");
	if (!grow)
		exit(99);
	bad = grow(n);
	if (dlclose(h) != 0)
		exit(99);
	for (int i = 0; i < 5; i++)
		free(keep[i]);
	return bad;
}

SECTION int main(int argc, char **argv)
{
	unsigned long n, rounds = 0;
	int bad = 0, wait = argc > 3 && !strcmp(argv[3], "wait");

	if (argc < 4)
		return 2;
	n = strtoul(argv[2], NULL, 0);
	printf("RANGE %d 0x%016lx 0x%016lx\n", (int)getpid(), (unsigned long)__start_dlgrow_text,
	       (unsigned long)__stop_dlgrow_text);
	if (!wait) {
		unsigned long want = strtoul(argv[3], NULL, 0);

		for (rounds = 0; rounds < want; rounds++)
			bad |= round_work(argv[1], n);
		printf("EXPECT %d probe %lu %lu 0\n", (int)getpid(), rounds, rounds * n);
	} else {
		sigset_t set;
		int sig;

		block_usr_signals(&set);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (sigwait(&set, &sig) == 0 && sig == SIGUSR1) {
			bad |= round_work(argv[1], n);
			rounds++;
			printf("EXPECT %d probe 1 %lu 0\nround %lu done\n", (int)getpid(), n, rounds);
			fflush(stdout);
		}
	}
	printf("%s\n", bad ? "CORRUPT" : "OK");
	return bad;
}

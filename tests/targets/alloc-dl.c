/*
 * alloc-dl.c - dlopen a library that allocates, call it, dlclose it,
 * three times (the library may come back at another address).
 *
 *   alloc-dl LIBRARY [N [THREADS [WAIT]]]
 *
 * Prints "RANGE <pid> <start> <end>" and "EXPECT <pid> probe <calls>
 * <bytes> 0" for --probe lib_work:size=arg1 (see alloc-all.c), then OK.
 * THREADS threads call malloc and free meanwhile, without pause, until
 * the end.  WAIT 1: first print "ready PID" and wait for SIGUSR1 (the
 * threads run already); WAIT 2: also, once the library is loaded for
 * the last time and called, print "loaded" and wait for SIGUSR1 again,
 * then call it N times more before its dlclose.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "usr1.h"

static volatile int done;

static void *busy(void *arg)
{
	(void)arg;
	while (!done) {
		void *volatile p = malloc(64);

		free(p);
	}
	return NULL;
}

#define SECTION __attribute__((section("alloc_text"), noinline))

extern char __start_alloc_text[], __stop_alloc_text[];

SECTION int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 100, calls = 0, bytes = 0;
	int nthreads = argc > 3 ? atoi(argv[3]) : 0, wait = argc > 4 ? atoi(argv[4]) : 0;
	pthread_t th[16];
	int bad = 0;

	if (argc < 2 || nthreads < 0 || nthreads > 16)
		return 2;
	usr1_block();
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, busy, NULL))
			return 99;
	if (wait) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		usr1_wait();
	}
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*work)(unsigned long, size_t);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 99;
		}
		*(void **)&work = dlsym(h, "lib_work");
		if (!work)
			return 99;
		for (int again = 0; again < (round == 2 && wait == 2 ? 2 : 1); again++) {
			if (again) {
				printf("loaded\n");
				fflush(stdout);
				usr1_wait();
			}
			for (unsigned long i = 0; i < n; i++) {
				bad |= work(i, 100 + i);
				calls++;
				bytes += 100 + i;
			}
		}
		if (dlclose(h) != 0)
			return 99;
	}
	done = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("RANGE %d 0x%016lx 0x%016lx\n", (int)getpid(), (unsigned long)__start_alloc_text,
	       (unsigned long)__stop_alloc_text);
	printf("EXPECT %d probe %lu %lu 0\n", (int)getpid(), calls, bytes);
	printf("%s\n", bad ? "CORRUPT" : "OK");
	return bad;
}

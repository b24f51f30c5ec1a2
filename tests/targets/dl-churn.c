/*
 * dl-churn.c - dlopen a plugin, call it, dlclose it, ROUNDS times: the
 * churn of a process that loads and unloads plugins for days, each
 * load a probed function again (memtap's stub slots of the unloaded
 * ones are given again).
 *
 *   dl-churn LIBRARY ROUNDS CALLS [THREADS [WAIT]]
 *
 * Round r calls plug_alloc(r, 1000 + r) CALLS times: 1000 + r bytes
 * from malloc each time, under plug_alloc.  THREADS threads call malloc
 * and free meanwhile, without pause, until the end.  WAIT 1: first
 * print "ready PID" and wait for SIGUSR1 (the threads run already);
 * WAIT 2: also, after half the rounds, print "half" and wait for
 * SIGUSR1 again.  Then prints "EXPECT <pid> probe <calls> <bytes> 0"
 * for --probe plug_alloc:size=arg1, and OK.
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

int main(int argc, char **argv)
{
	unsigned long rounds, ncalls, calls = 0, bytes = 0;
	int nthreads = argc > 4 ? atoi(argv[4]) : 0, wait = argc > 5 ? atoi(argv[5]) : 0;
	pthread_t th[16];
	int bad = 0;

	if (argc < 4 || nthreads < 0 || nthreads > 16)
		return 2;
	rounds = strtoul(argv[2], NULL, 0);
	ncalls = strtoul(argv[3], NULL, 0);
	usr1_block();
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, busy, NULL))
			return 99;
	if (wait) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		usr1_wait();
	}
	for (unsigned long r = 0; r < rounds; r++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*plug)(unsigned long, size_t);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 99;
		}
		*(void **)&plug = dlsym(h, "plug_alloc");
		if (!plug)
			return 99;
		for (unsigned long i = 0; i < ncalls; i++) {
			bad |= plug(r, 1000 + r);
			calls++;
			bytes += 1000 + r;
		}
		if (dlclose(h) != 0)
			return 99;
		if (wait == 2 && r + 1 == rounds / 2) {
			printf("half\n");
			fflush(stdout);
			usr1_wait();
		}
	}
	done = 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("EXPECT %d probe %lu %lu 0\n", (int)getpid(), calls, bytes);
	printf("%s\n", bad ? "CORRUPT" : "OK");
	return bad;
}

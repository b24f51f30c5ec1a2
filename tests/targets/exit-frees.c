/*
 * exit-frees.c - threads that free small blocks and then end, so that
 * glibc's tcache_thread_shutdown() frees again, at each thread's exit,
 * the chunks its cache kept of those frees.
 *
 *   exit-frees [-w] [-t THREADS]
 *
 * Each of THREADS threads (4 by default) mallocs 5 blocks of 24 to 120
 * bytes (within the tcache's sizes), frees them and ends; main joins
 * them.  Nothing else of this program allocates or frees.  With -w it
 * prints "ready" first and waits for SIGUSR1 (for memtap -p).  At the
 * end it prints what the program itself did:
 *
 *   EXPECT malloc <calls> <bytes>
 *   EXPECT free <calls> <bytes>
 *
 * then "OK".
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCKS 5
#define MAX_THREADS 64

/* keep the compiler from eliding or merging the calls */
static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void *worker(void *arg)
{
	void *p[BLOCKS];

	(void)arg;
	for (int i = 0; i < BLOCKS; i++) {
		p[i] = malloc(24 + 24 * (size_t)i);
		escape(p[i]);
		memset(p[i], 0x5a, 24 + 24 * (size_t)i);
	}
	for (int i = 0; i < BLOCKS; i++)
		free(p[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS];
	int threads = 4, opt, wait_usr1 = 0, sig;
	unsigned long bytes = 0;
	sigset_t set;

	while ((opt = getopt(argc, argv, "wt:")) != -1) {
		switch (opt) {
		case 'w': wait_usr1 = 1; break;
		case 't': threads = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: exit-frees [-w] [-t THREADS]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > MAX_THREADS)
		return 2;
	if (wait_usr1) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL) != 0)
			return 99;
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	for (int i = 0; i < BLOCKS; i++)
		bytes += 24 + 24 * (unsigned long)i;
	printf("EXPECT malloc %lu %lu\n", (unsigned long)threads * BLOCKS, threads * bytes);
	printf("EXPECT free %lu %lu\n", (unsigned long)threads * BLOCKS, threads * bytes);
	printf("OK\n");
	fflush(stdout);
	return 0;
}

/*
 * thread-churn.c - NTHREADS threads each malloc N blocks of 256 bytes
 * from thread_churn(), whose frame holds PAD bytes of its own, and
 * exit; main frees the blocks after joining them.  Each of those
 * mallocs has the stack start_thread;thread_churn;malloc (clone3 above
 * start_thread): the records of the last calls are still to be read
 * when the threads have exited and their stacks hold the frames of the
 * exit path (advise_stack_range...), which no stack may show.
 *
 *   thread-churn [N]
 *
 * Prints "EXPECT malloc <calls> <bytes>" for the calls of thread_churn.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define BLOCK 256
#define PAD 600

static unsigned long n = 10000;
static void **blocks[NTHREADS];

/* keep the compiler from eliding or merging the calls */
static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void *thread_churn(void *arg)
{
	void **v = arg;
	char pad[PAD];

	memset(pad, 1, sizeof(pad));
	escape(pad);
	for (unsigned long i = 0; i < n; i++) {
		v[i] = malloc(BLOCK);
		escape(v[i]);
	}
	escape(pad);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];

	if (argc > 1)
		n = strtoul(argv[1], NULL, 0);
	for (int i = 0; i < NTHREADS; i++) {
		blocks[i] = calloc(n, sizeof(void *));
		if (!blocks[i] || pthread_create(&t[i], NULL, thread_churn, blocks[i]))
			return 99;
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		for (unsigned long k = 0; k < n; k++)
			free(blocks[i][k]);
		free(blocks[i]);
	}
	printf("EXPECT malloc %lu %lu\n", NTHREADS * n, NTHREADS * n * BLOCK);
	return 0;
}

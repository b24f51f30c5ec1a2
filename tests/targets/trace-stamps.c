/*
 * trace-stamps - calls of malloc at known, ordered moments, for the
 * times memtap gives them (tests/trace-stamps.test).  Each call's size
 * is unique; around it the target prints CLOCK_MONOTONIC (ns), the
 * clock memtap's times count on, into the file named by its argument
 * (not beside memtap's --trace lines on its standard output):
 *
 *   CALL <size> <before> <after>
 *
 * The calls are made on two threads in turn (each waits for the other's
 * call to return), with a short sleep between them, so that a call's
 * time is later than the call before it, on either thread.  It waits
 * for SIGUSR1 first ("ready"): memtap attaches, then signals.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 6
#define BASE 70001	/* call i asks BASE + i bytes */

static sem_t turn[2];
static FILE *out;

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void call(unsigned i)
{
	struct timespec nap = { 0, 2000000 };
	uint64_t before, after;
	void *p;

	nanosleep(&nap, NULL);
	before = mono();
	p = malloc(BASE + i);
	after = mono();
	if (!p)
		exit(2);
	((volatile char *)p)[0] = 1;
	fprintf(out, "CALL %u %llu %llu\n", BASE + i, (unsigned long long)before,
		(unsigned long long)after);
	fflush(out);
	free(p);
}

static void *side(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;

	for (unsigned r = 0; r < ROUNDS; r++) {
		sem_wait(&turn[me]);
		call(2 * r + me);
		sem_post(&turn[!me]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc != 2 || !(out = fopen(argv[1], "w")))
		return 2;
	sem_init(&turn[0], 0, 1);
	sem_init(&turn[1], 0, 0);
	for (unsigned i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, side, (void *)(uintptr_t)i))
			return 2;
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	fprintf(out, "done\n");
	return fclose(out) ? 2 : 0;
}

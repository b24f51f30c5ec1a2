/*
 * waiter NTHREADS [busy] - a target to attach to.
 *
 * Prints "ready PID" and waits for signals:
 *   SIGUSR1  one round: NTHREADS new threads each map 2 x 32 MiB and
 *            unmap one; prints EXPECT lines and "round N done"
 *   SIGUSR2  prints "done rounds=N" and exits 0
 * With "busy", NTHREADS threads map, fill, check and unmap 1 MiB in a
 * loop from the start; at SIGUSR2 they stop, and the process exits 0
 * only if every check passed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include "target.h"

static int nthreads;
static volatile int stop;
static unsigned long iterations[64];
static int bad;

static void *round_work(void *arg)
{
	(void)arg;
	void *a = xmmap_anon(32 * MiB);

	xmmap_anon(32 * MiB);
	xmunmap(a, 32 * MiB);
	return NULL;
}

static void *busy_work(void *arg)
{
	long id = (long)arg;

	while (!stop) {
		unsigned char *p = xmmap_anon(MiB);

		for (size_t i = 0; i < MiB; i += 4096)
			p[i] = (unsigned char)(i / 4096 + id);
		for (size_t i = 0; i < MiB; i += 4096)
			if (p[i] != (unsigned char)(i / 4096 + id))
				__atomic_store_n(&bad, 1, __ATOMIC_SEQ_CST);
		xmunmap(p, MiB);
		iterations[id]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig, rounds = 0, busy = argc > 2 && !strcmp(argv[2], "busy");
	pthread_t t[64];

	nthreads = argc > 1 ? atoi(argv[1]) : 1;
	if (nthreads < 1 || nthreads > 64)
		return 99;
	block_usr_signals(&set);
	if (busy)
		for (long i = 0; i < nthreads; i++)
			if (pthread_create(&t[i], NULL, busy_work, (void *)i))
				return 99;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			return 99;
		if (sig == SIGUSR2)
			break;
		for (int i = 0; i < nthreads; i++)
			if (pthread_create(&t[i], NULL, round_work, NULL))
				return 99;
		for (int i = 0; i < nthreads; i++)
			pthread_join(t[i], NULL);
		rounds++;
		expect("mmap", 2 * nthreads, 2 * nthreads * 32 * MiB, 0);
		expect("munmap", nthreads, 0, nthreads * 32 * MiB);
		printf("round %d done\n", rounds);
		fflush(stdout);
	}
	if (busy) {
		unsigned long total = 0;

		stop = 1;
		for (int i = 0; i < nthreads; i++) {
			pthread_join(t[i], NULL);
			total += iterations[i];
		}
		printf("done rounds=%d busy=%s\n", rounds, !bad && total > 0 ? "ok" : "bad");
		return bad ? 1 : 0;
	}
	printf("done rounds=%d\n", rounds);
	return 0;
}

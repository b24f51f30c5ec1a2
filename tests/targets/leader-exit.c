/*
 * leader-exit - a process whose main thread has exited: main() starts
 * a thread and calls pthread_exit(), which leaves the leader a zombie
 * while the process lives on.
 *
 * The thread prints "ready PID" once the leader is a zombie, then
 * waits for signals:
 *   SIGUSR1  one round: maps 2 x 32 MiB and unmaps one; prints EXPECT
 *            lines and "round N done"
 *   SIGUSR2  prints "done rounds=N" and exits 0
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include "target.h"

static sigset_t set;

static void *server(void *arg)
{
	int sig, rounds = 0;

	(void)arg;
	while (leader_state() != 'Z')
		usleep(1000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			exit(99);
		if (sig == SIGUSR2)
			break;
		void *a = xmmap_anon(32 * MiB);

		xmmap_anon(32 * MiB);
		xmunmap(a, 32 * MiB);
		rounds++;
		expect("mmap", 2, 2 * 32 * MiB, 0);
		expect("munmap", 1, 0, 32 * MiB);
		printf("round %d done\n", rounds);
		fflush(stdout);
	}
	printf("done rounds=%d\n", rounds);
	fflush(stdout);
	exit(0);
}

int main(void)
{
	pthread_t t;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&t, NULL, server, NULL))
		return 99;
	pthread_exit(NULL);
}

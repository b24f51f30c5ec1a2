/*
 * detour-inside.c - two threads waiting inside the first instructions
 * of allocator functions, there when memtap places its detours.
 *
 *   detour-inside
 *
 * mallocx and rallocx (names memtap probes, defined in detour-inside-lib.so,
 * near libc: one stub mapping reaches both) begin with a `syscall`
 * whose number the caller puts in rax: SYS_pause for the first call of
 * each thread, which waits there; SYS_getpid for the calls after it.
 * In mallocx the syscall is the first of the instructions a 5-byte jmp
 * displaces: its thread waits at mallocx + 2, inside them.  In rallocx
 * it is the last: its thread waits at rallocx + 5, right after them,
 * and the kernel restarts the interrupted pause at rallocx + 3.
 *
 * Prints "ready" once both threads wait in pause.  SIGUSR2 wakes them:
 * each then calls its function CALLS times more (mallocx(MALLOCX_SIZE),
 * rallocx(NULL, RALLOCX_SIZE)), frees, and "calls done" is printed.
 * The next SIGUSR2 ends the process: "OK", exit 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CALLS 4
#define MALLOCX_SIZE 3000
#define RALLOCX_SIZE 5000

#include "detour-inside.h"

static pid_t tids[2];

static void on_usr1(int sig)
{
	(void)sig;
}

static void *run(void *arg)
{
	long which = (long)arg;
	void *fn = which ? (void *)rallocx : (void *)mallocx;
	void *p;

	tids[which] = (pid_t)syscall(SYS_gettid);
	/* waits in pause inside fn's first instructions: a signal ends it */
	p = which ? call_nr(SYS_pause, fn, 0, 1, 0) : call_nr(SYS_pause, fn, 1, 0, 0);
	free(p);
	for (int i = 0; i < CALLS; i++) {
		p = which ? call_nr(SYS_getpid, fn, 0, RALLOCX_SIZE, 0)
			  : call_nr(SYS_getpid, fn, MALLOCX_SIZE, 0, 0);
		if (!p)
			abort();
		memset(p, 1, which ? RALLOCX_SIZE : MALLOCX_SIZE);
		free(p);
	}
	return NULL;
}

/* Is thread tid waiting in pause? */
static int in_pause(pid_t tid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr == SYS_pause;
}

int main(void)
{
	struct sigaction sa;
	pthread_t th[2];
	sigset_t set;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);	/* SIGUSR1 only for the threads */
	for (long i = 0; i < 2; i++) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, SIGUSR1);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
		if (pthread_create(&th[i], NULL, run, (void *)i))
			return 1;
		pthread_sigmask(SIG_BLOCK, &one, NULL);
	}
	while (!tids[0] || !tids[1] || !in_pause(tids[0]) || !in_pause(tids[1]))
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigwait(&set, &sig);
	for (int i = 0; i < 2; i++)
		pthread_kill(th[i], SIGUSR1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("calls done\n");
	fflush(stdout);
	sigwait(&set, &sig);
	printf("OK\n");
	return 0;
}

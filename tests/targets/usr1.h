/*
 * usr1.h - SIGUSR1 as a go signal for test targets that wait for
 * memtap -p: blocked in every thread (usr1_block() before the threads
 * are made), taken by sigwait() alone (usr1_wait()).
 */
#ifndef MEMTAP_TARGETS_USR1_H
#define MEMTAP_TARGETS_USR1_H

#include <pthread.h>
#include <signal.h>

static inline void usr1_block(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static inline void usr1_wait(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

#endif /* MEMTAP_TARGETS_USR1_H */

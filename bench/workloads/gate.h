/*
 * gate.h - for attach-mode benchmarks (bench/syscalls.sh): with
 * BENCH_GATE set in the environment, a workload prints "ready PID",
 * waits for SIGUSR1 (a tracer attaches meanwhile), does its work, and
 * prints "elapsed_us N" on stderr: the time from the signal to the end
 * of its work, attaching and detaching left out.  Without BENCH_GATE
 * both calls do nothing.
 */
#ifndef BENCH_GATE_H
#define BENCH_GATE_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct timespec gate_t0;

static inline void gate_open(void)
{
	sigset_t set;
	int sig;

	if (!getenv("BENCH_GATE"))
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (sigwait(&set, &sig) != 0)
		exit(1);
	clock_gettime(CLOCK_MONOTONIC, &gate_t0);
}

static inline void gate_close(void)
{
	struct timespec t1;

	if (!getenv("BENCH_GATE"))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "elapsed_us %lld\n", (long long)(t1.tv_sec - gate_t0.tv_sec) * 1000000 +
		(t1.tv_nsec - gate_t0.tv_nsec) / 1000);
}

#endif /* BENCH_GATE_H */

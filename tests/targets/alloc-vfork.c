/*
 * alloc-vfork.c - a vfork child that allocates before it execs: it
 * shares its parent's memory (and its stubs, and glibc's cached tid).
 *
 *   alloc-vfork [N] [-t] [-x]
 *
 * main -> parent_site -> malloc(3000 + i), i < N; then vfork, and the
 * child: child_site -> malloc(5000 + i), i < N (never freed: the blocks
 * stay in the parent's heap), then execs "alloc-vfork -" (which exits 0
 * at once; -x: _exit(0) instead).  The parent, back from vfork (as
 * soon as the child's exec or exit lets it), mallocs (parent_site,
 * 3100 + i, i < N) and waits for the child, then prints
 * "CHILD <pid>", "EXPECT parent|child malloc CALLS BYTES" (the calls
 * each made, stdout unbuffered: no buffer of its own), and "OK", or
 * "FAILED".
 *
 * -t: a second thread of the parent, made before the vfork, mallocs
 * (thread_site, 7000 + i, 2 N calls) while the child runs: N before the
 * child's calls, N after them, and the child execs once it is done.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[160];
static volatile unsigned long parents, children;	/* two bodies, never folded */
static volatile int go, child_done, thread_done;
static unsigned long n;
static int threaded, do_exit;	/* static: kept across vfork */

__attribute__((noinline)) static void *parent_site(size_t sz)
{
	void *p = malloc(sz);

	parents++;
	return p;
}

__attribute__((noinline)) static void *child_site(size_t sz)
{
	void *p = malloc(sz);

	children += 2;
	return p;
}

__attribute__((noinline)) static void *thread_site(size_t sz)
{
	void *p = malloc(sz);

	parents += 3;
	return p;
}

static void *thread_main(void *arg)
{
	(void)arg;
	while (!go)
		;
	for (unsigned long i = 0; i < n; i++)
		keep[64 + i] = thread_site(7000 + i);
	child_done = child_done == 1 ? 1 : 2;	/* the child may go on */
	while (child_done != 3)
		;
	for (unsigned long i = 0; i < n; i++)
		keep[96 + i] = thread_site(7000 + n + i);
	thread_done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	int status;
	static unsigned long pbytes, cbytes;
	pthread_t th;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-"))
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	n = argc > 1 && argv[1][0] != '-' ? strtoul(argv[1], NULL, 0) : 3;
	for (int a = 1; a < argc; a++) {
		threaded |= !strcmp(argv[a], "-t");
		do_exit |= !strcmp(argv[a], "-x");
	}
	if (n > 32)
		n = 32;
	if (threaded && pthread_create(&th, NULL, thread_main, NULL))
		return 99;
	for (unsigned long i = 0; i < n; i++)
		keep[i] = parent_site(3000 + i);
	pid = vfork();
	if (pid == 0) {
		if (threaded) {
			go = 1;
			while (child_done != 2)
				;
		}
		for (unsigned long i = 0; i < n; i++)
			keep[32 + i] = child_site(5000 + i);
		if (threaded) {
			child_done = 3;
			while (!thread_done)
				;
		}
		if (do_exit)
			_exit(0);
		execl("/proc/self/exe", argv[0], "-", (char *)NULL);
		_exit(127);
	}
	for (unsigned long i = 0; pid > 0 && i < n; i++)
		keep[128 + i] = parent_site(3100 + i);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || (threaded && pthread_join(th, NULL))) {
		printf("FAILED\n");
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {	/* (after the vfork) */
		pbytes += 3000 + i + 3100 + i + (threaded ? 7000 + i + 7000 + n + i : 0);
		cbytes += 5000 + i;
	}
	printf("CHILD %d\n", (int)pid);
	printf("EXPECT parent malloc %lu %lu\n", threaded ? 4 * n : 2 * n, pbytes);
	printf("EXPECT child malloc %lu %lu\n", n, cbytes);
	printf("OK\n");
	return 0;
}

/*
 * alloc-fork.c - a process that allocates, forks a child that allocates
 * and checks its memory, and vforks a child that execs /bin/true.  The
 * child's output and exit status must be the same traced or not: a
 * tracer must clean the breakpoints out of the fork child's copy of the
 * memory (do_fork's return address too, when its return is captured).
 *
 *   alloc-fork [N [thread]]
 *
 * Prints the parent's EXPECT lines, then "child ok <checksum>" from the
 * child and "OK" from the parent.  With "thread", all of it runs in a
 * second thread: the child is forked from it, on a copy of its stack.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* no tail call: the caller of free stays this executable */
static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

__attribute__((noinline)) pid_t do_fork(void)
{
	pid_t pid = fork();

	escape(&pid);
	return pid;
}

static unsigned long work(unsigned long n, unsigned long *bytes)
{
	unsigned long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		size_t sz = 32 + i % 100;
		unsigned char *p = malloc(sz);

		escape(p);
		memset(p, (int)(i & 0xff), sz);
		sum += p[sz - 1];
		free(p);
		barrier();
		*bytes += sz;
	}
	return sum;
}

static int body(unsigned long n)
{
	unsigned long bytes = 0, child_bytes = 0, sum;
	int status;
	pid_t pid;

	sum = work(n, &bytes);
	fflush(stdout);
	pid = do_fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		unsigned long s = work(n * 2, &child_bytes);

		printf("child ok %lu %lu\n", s, child_bytes);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("child failed %#x\n", status);
		return 1;
	}
	pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("vfork child failed\n");
		return 1;
	}
	sum += work(n, &bytes);
	printf("EXPECT malloc %lu %lu\n", 2 * n, bytes);
	printf("EXPECT free %lu 0\n", 2 * n);
	printf("EXPECT live 0\n");
	printf("parent sum %lu\nOK\n", sum);
	return 0;
}

static void *body_thread(void *arg)
{
	return (void *)(long)body(*(unsigned long *)arg);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
	pthread_t th;
	void *rc;

	if (argc > 2 && !strcmp(argv[2], "thread")) {
		if (pthread_create(&th, NULL, body_thread, &n) || pthread_join(th, &rc))
			return 99;
		return (int)(long)rc;
	}
	return body(n);
}

/*
 * alloc-vfork.c - a vfork child that allocates before it execs: it
 * shares its parent's memory (and its stubs, and glibc's cached tid).
 *
 *   alloc-vfork [N]
 *
 * main -> parent_site -> malloc(3000 + i), i < N; then vfork, and the
 * child: child_site -> malloc(5000 + i), i < N (never freed: the blocks
 * stay in the parent's heap), then execs "alloc-vfork -" (which exits 0
 * at once).  The parent waits for it, then prints "CHILD <pid>", and
 * "OK", or "FAILED".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[64];
static volatile unsigned long parents, children;	/* two bodies, never folded */

__attribute__((noinline)) static void *parent_site(size_t n)
{
	void *p = malloc(n);

	parents++;
	return p;
}

__attribute__((noinline)) static void *child_site(size_t n)
{
	void *p = malloc(n);

	children += 2;
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 3;
	int status;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-"))
		return 0;
	if (n > 32)
		n = 32;
	for (unsigned long i = 0; i < n; i++)
		keep[i] = parent_site(3000 + i);
	pid = vfork();
	if (pid == 0) {
		for (unsigned long i = 0; i < n; i++)
			keep[32 + i] = child_site(5000 + i);
		execl("/proc/self/exe", argv[0], "-", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		printf("FAILED\n");
		return 1;
	}
	printf("CHILD %d\nOK\n", (int)pid);
	return 0;
}

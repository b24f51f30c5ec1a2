/*
 * leak-fork.c - memory held across a fork, for --leaks: the parent
 * allocates blocks and maps memory from known functions, forks; the
 * child frees one inherited block, unmaps half of an inherited mapping,
 * and leaks blocks and a mapping of its own; the parent leaks one more
 * block after the child has exited.
 *
 *   leak-fork [-w]
 *
 * -w: print "ready <pid>", wait for SIGUSR1 before the work (so that a
 * tracer can attach first), print "done" after it and wait for SIGUSR2
 * before exiting.
 *
 * Prints "parent <pid>" and "child <pid>", then one line per stack that
 * memtap --leaks -f must report as held at the end:
 *
 *   HELD <owner> <event> <function> <bytes>
 *
 * owner "parent" or "child"; event as in --leaks output, "(inherited)"
 * added to what the child still holds of its parent's memory.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEPT_BY_PARENT	40000	/* the child frees its copy */
#define KEPT_BY_BOTH	100000	/* nobody frees it */
#define CHILD_LEAK	12345
#define PARENT_LEAK	3000
#define MAP_SHARED_LEN	(64 * 4096)	/* the child unmaps its upper half */
#define CHILD_MAP_LEN	(8 * 4096)

static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void *alloc_bytes(size_t n)
{
	void *p = malloc(n);

	if (!p)
		exit(99);
	memset(p, 1, n);
	escape(p);
	return p;
}

__attribute__((noinline)) static void *map_bytes(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(99);
	((volatile char *)p)[0] = 1;
	return p;
}

/* One function per stack that holds memory: its name is the frame. */
#define HOLDER(name, call)                          \
	__attribute__((noinline)) void *name(void) \
	{                                          \
		return call;                       \
	}

HOLDER(kept_by_parent, alloc_bytes(KEPT_BY_PARENT))
HOLDER(kept_by_both, alloc_bytes(KEPT_BY_BOTH))
HOLDER(child_leak, alloc_bytes(CHILD_LEAK))
HOLDER(parent_leak, alloc_bytes(PARENT_LEAK))
HOLDER(map_shared, map_bytes(MAP_SHARED_LEN))
HOLDER(child_map, map_bytes(CHILD_MAP_LEN))

static volatile sig_atomic_t got;

static void on_signal(int sig)
{
	got = sig;
}

static void wait_signal(int sig)
{
	sigset_t none;

	sigemptyset(&none);
	while (got != sig)
		sigsuspend(&none);
}

int main(int argc, char **argv)
{
	int wait_mode = argc > 1 && !strcmp(argv[1], "-w");
	void *a, *b, *m;
	sigset_t block;
	int status;
	pid_t pid;

	if (wait_mode) {
		sigemptyset(&block);
		sigaddset(&block, SIGUSR1);
		sigaddset(&block, SIGUSR2);
		sigprocmask(SIG_BLOCK, &block, NULL);
		signal(SIGUSR1, on_signal);
		signal(SIGUSR2, on_signal);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		wait_signal(SIGUSR1);
	}
	printf("parent %d\n", (int)getpid());
	fflush(stdout);
	a = kept_by_parent();
	b = kept_by_both();
	m = map_shared();
	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		free(a);
		munmap((char *)m + MAP_SHARED_LEN / 2, MAP_SHARED_LEN / 2);
		escape(child_leak());
		escape(child_map());
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	escape(parent_leak());
	escape(b);
	printf("child %d\n", (int)pid);
	printf("HELD parent malloc kept_by_parent %d\n", KEPT_BY_PARENT);
	printf("HELD parent malloc kept_by_both %d\n", KEPT_BY_BOTH);
	printf("HELD parent malloc parent_leak %d\n", PARENT_LEAK);
	printf("HELD parent mmap map_shared %d\n", MAP_SHARED_LEN);
	printf("HELD child malloc child_leak %d\n", CHILD_LEAK);
	printf("HELD child mmap child_map %d\n", CHILD_MAP_LEN);
	printf("HELD child malloc (inherited) kept_by_both %d\n", KEPT_BY_BOTH);
	printf("HELD child mmap (inherited) map_shared %d\n", MAP_SHARED_LEN / 2);
	fflush(stdout);
	if (wait_mode) {
		printf("done\n");
		fflush(stdout);
		wait_signal(SIGUSR2);
	}
	return 0;
}

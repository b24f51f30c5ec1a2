/*
 * ret-inflight.c - calls of malloc still in flight when memtap detaches
 * (tests/arm64/bp-memtap.test): the program's own malloc, which memtap
 * probes first (the executable comes first in ld.so's scope), sits
 * inside the call for a chosen size until a file appears.
 *
 *   ret-inflight DIR [fork]
 *
 * Prints "ready PID", then waits for DIR/start; then THREADS threads
 * each call malloc(SLOW_SIZE), which prints "inside N" and waits for
 * DIR/go there; back from it, each checks its block (written whole,
 * freed), makes ITERS more malloc and free calls and prints "back N".
 * With "fork", the first thread inside forks there first: the child
 * returns from that malloc at once, does what a thread does after it,
 * prints "child back" and exits 0; the parent prints "child S", S the
 * child's exit status (128 + N for a signal N), and goes on waiting.
 * The main thread joins them and prints "OK" (exit 0).  A return that
 * went anywhere else than to its caller would crash the process or
 * print no "back".  Built with -mbranch-protection=standard, malloc
 * signs its return address (PACIASP) and keeps it in its frame, as it
 * calls __libc_malloc.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define THREADS 2
#define ITERS 100
#define SLOW_SIZE 77777

extern void *__libc_malloc(size_t n);

static const char *dir;
static int fork_mode, in_child;
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

static void wait_file(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK) != 0)
		usleep(20000);
}

static void say(const char *what, long n)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "%s %ld\n", what, n);

	if (write(1, line, (size_t)len) != len)
		_exit(2);
}

__attribute__((noinline)) void *malloc(size_t n)
{
	void *p = __libc_malloc(n);

	if (n == SLOW_SIZE) {
		say("inside", (long)gettid());
		pthread_mutex_lock(&fork_lock);
		if (fork_mode) {
			int st;
			pid_t pid;

			fork_mode = 0;
			pid = fork();
			if (pid == 0) {
				in_child = 1;
				return p;	/* the child's copy of the hooked return */
			}
			if (pid < 0 || waitpid(pid, &st, 0) != pid)
				_exit(6);
			say("child", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
		pthread_mutex_unlock(&fork_lock);
		wait_file("go");
	}
	return p;
}

static void *worker(void *arg)
{
	long i = (long)arg;
	char *p = malloc(SLOW_SIZE);

	if (!p)
		_exit(3);
	memset(p, (int)i, SLOW_SIZE);
	for (size_t k = 0; k < SLOW_SIZE; k++)
		if (p[k] != (char)i)
			_exit(4);
	free(p);
	for (int k = 0; k < ITERS; k++) {
		void *q = malloc((size_t)(16 + k));

		if (!q)
			_exit(3);
		free(q);
	}
	if (in_child) {
		say("child back", i);
		_exit(0);
	}
	say("back", i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "fork") != 0)) {
		fprintf(stderr, "usage: ret-inflight DIR [fork]\n");
		return 64;
	}
	dir = argv[1];
	fork_mode = argc == 3;
	setvbuf(stdout, NULL, _IONBF, 0);
	say("ready", (long)getpid());
	wait_file("start");
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0)
			return 5;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	say("OK", 0);
	return 0;
}

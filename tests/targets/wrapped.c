/*
 * wrapped - a target to attach to whose threads call libc's memory
 * syscall wrappers from known functions.
 *
 *   wrapped [-t THREADS] [-l] [-x PROGRAM ARGS...]
 *
 * Starts THREADS threads (1 by default), prints "ready PID" and waits
 * for signals:
 *   SIGUSR1  one round: each thread maps 4 + 4 + 8 MiB (map_two(),
 *            protect_one()), grows one 4 MiB mapping to 12 MiB with
 *            mremap (grow_one()), makes 4 MiB of the 8 MiB one
 *            accessible (mprotect) and gives 2 MiB of it back (madvise
 *            MADV_DONTNEED), unmaps 4 + 8 MiB (unmap_one()), and makes
 *            one mmap and one munmap that fail (fail_two()); the 12 MiB
 *            stay mapped.  Then the main thread grows the brk heap with
 *            2048 mallocs of 4000 bytes (heap_loop()) and frees them
 *            (the heap shrinks back).  Prints EXPECT lines (target.h),
 *            "HEAP <pid> <bytes grown> <bytes shrunk>" from sbrk(0), and
 *            "round N done"
 *   SIGUSR2  prints "done rounds=N" and exits 0
 * With -l, the threads (and the main thread's heap) go round without
 * waiting until SIGUSR2, checking every mapping's contents; the process
 * then prints "OK" and exits 0, or "CORRUPT" and exits 1.
 * With -x, no call fails (fail_two() is left out), and each round ends
 * with a fork: the child makes one thread's round, prints its EXPECT
 * lines and execs PROGRAM (which must exit 3, as tests/targets/mmaps).
 */
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include "target.h"

#define MAX_THREADS 64
#define HEAP_BLOCKS 2048

static int nthreads = 1, loop;
static char **xprog;	/* -x */
static volatile int stop;
static int bad;
static pthread_barrier_t go, done;

static void check(const unsigned char *p, size_t len, unsigned char v)
{
	for (size_t i = 0; i < len; i += 4096)
		if (p[i] != v)
			__atomic_store_n(&bad, 1, __ATOMIC_SEQ_CST);
}

__attribute__((noinline)) static void map_two(unsigned char **a, unsigned char **b)
{
	*a = xmmap_anon(4 * MiB);
	*b = xmmap_anon(4 * MiB);
}

__attribute__((noinline)) static unsigned char *grow_one(unsigned char *b)
{
	void *r = mremap(b, 4 * MiB, 12 * MiB, MREMAP_MAYMOVE);

	if (r == MAP_FAILED) {
		perror("mremap");
		exit(99);
	}
	return r;
}

__attribute__((noinline)) static unsigned char *protect_one(void)
{
	unsigned char *m = mmap(NULL, 8 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m, 4 * MiB, PROT_READ | PROT_WRITE) != 0) {
		perror("mmap, mprotect");
		exit(99);
	}
	memset(m, 7, 2 * MiB);
	check(m, 2 * MiB, 7);
	if (madvise(m, 2 * MiB, MADV_DONTNEED) != 0) {
		perror("madvise");
		exit(99);
	}
	check(m, 2 * MiB, 0);
	return m;
}

__attribute__((noinline)) static void unmap_one(void *p, size_t len)
{
	xmunmap(p, len);
}

/* 256 TiB cannot be mapped (ENOMEM); an unaligned munmap is EINVAL. */
__attribute__((noinline)) static void fail_two(void)
{
	void *p = mmap(NULL, 1UL << 48, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p != MAP_FAILED || munmap((void *)4097, 4096) == 0)
		__atomic_store_n(&bad, 1, __ATOMIC_SEQ_CST);
}

static void one_round(long id)
{
	unsigned char *a, *b, *m;

	map_two(&a, &b);
	memset(a, 9, 4 * MiB);
	memset(b, (int)id + 1, 4 * MiB);
	b = grow_one(b);
	check(b, 4 * MiB, (unsigned char)(id + 1));
	m = protect_one();
	check(a, 4 * MiB, 9);
	unmap_one(a, 4 * MiB);
	unmap_one(m, 8 * MiB);
	if (!xprog)
		fail_two();
	if (loop)
		unmap_one(b, 12 * MiB);
}

static void *worker(void *arg)
{
	long id = (long)arg;

	while (loop ? !stop : 1) {
		if (!loop)
			pthread_barrier_wait(&go);
		one_round(id);
		if (!loop)
			pthread_barrier_wait(&done);
	}
	return NULL;
}

/* Grow the brk heap through malloc, then give it back. */
__attribute__((noinline)) static void heap_loop(uintptr_t *grown, uintptr_t *shrunk)
{
	static char *blocks[HEAP_BLOCKS];
	char *start = sbrk(0), *top;

	for (int i = 0; i < HEAP_BLOCKS; i++) {
		blocks[i] = malloc(4000);
		if (!blocks[i])
			exit(99);
		blocks[i][0] = (char)i;
	}
	top = sbrk(0);
	for (int i = HEAP_BLOCKS - 1; i >= 0; i--) {
		if (blocks[i][0] != (char)i)
			__atomic_store_n(&bad, 1, __ATOMIC_SEQ_CST);
		free(blocks[i]);
	}
	*grown = (uintptr_t)(top - start);
	*shrunk = (uintptr_t)(top - (char *)sbrk(0));
}

/* -x: a child makes a round of its own, then execs the program. */
static int fork_exec(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		one_round(0);
		expect("mmap", 3, 16 * MiB, 0);
		expect("munmap", 2, 0, 12 * MiB);
		expect("mremap", 1, 8 * MiB, 0);
		execv(xprog[0], xprog);
		_exit(99);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 3)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	uintptr_t grown, shrunk;
	int sig, rounds = 0;
	sigset_t set;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-l"))
			loop = 1;
		else if (!strcmp(argv[i], "-x") && i + 1 < argc) {
			xprog = argv + i + 1;
			break;
		} else
			return 99;
	}
	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 99;
	block_usr_signals(&set);
	pthread_barrier_init(&go, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&done, NULL, (unsigned)nthreads + 1);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 99;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (loop) {
		sigset_t pending;

		do {
			heap_loop(&grown, &shrunk);
			sigpending(&pending);
		} while (!sigismember(&pending, SIGUSR2));
		stop = 1;
		for (int i = 0; i < nthreads; i++)
			pthread_join(t[i], NULL);
		puts(bad ? "CORRUPT" : "OK");
		return bad;
	}
	for (;;) {
		if (sigwait(&set, &sig))
			return 99;
		if (sig == SIGUSR2)
			break;
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		heap_loop(&grown, &shrunk);
		rounds++;
		expect("mmap", (xprog ? 3UL : 4UL) * nthreads, 16 * MiB * nthreads, 0);
		expect("munmap", (xprog ? 2UL : 3UL) * nthreads, 0, 12 * MiB * nthreads);
		expect("mremap", 1UL * nthreads, 8 * MiB * nthreads, 0);
		if (xprog && fork_exec() != 0)
			return 98;
		printf("HEAP %d %lu %lu\n", (int)getpid(), (unsigned long)grown, (unsigned long)shrunk);
		printf("round %d done%s\n", rounds, bad ? " CORRUPT" : "");
		fflush(stdout);
	}
	printf("done rounds=%d\n", rounds);
	return 0;
}

/*
 * alloc-rounds.c - known calls of the allocator functions every libc
 * has (malloc, calloc, realloc, reallocarray, free, aligned_alloc,
 * posix_memalign, memalign) and of mmap, mremap and munmap, in rounds,
 * from T threads.  Plain C for any libc: the tests build it with
 * musl-gcc too (tests/musl-alloc.test), dynamic and static.
 *
 *   alloc-rounds [-t THREADS] [-n ITERS] [-w] [-L] [-X]
 *
 *   -w   wait: print "ready PID", then run one round per SIGUSR1 (and
 *        print its EXPECT lines and "round N done"); SIGUSR2 ends
 *   -L   the leader exits: main() starts a thread that runs the rounds
 *        and calls pthread_exit(); "ready PID" once the leader is a
 *        zombie (implies -w)
 *   -X   as -L, but the leader exits at the first SIGUSR1, before that
 *        round runs ("ready PID" while it lives)
 *
 * Every call is made from functions in the section "alloc_text"
 * (compiled without sibling calls: the caller of each allocator
 * function is there).  A round prints, per process:
 *
 *   RANGE <pid> <start> <end>         the section's addresses (%016lx)
 *   EXPECT <pid> <kind> <calls> <bytes> <failed>      allocator kinds
 *   EXPECT <pid> <syscall> <calls> <acquired> <released>
 *
 * the allocator lines as tests/alloc-lib.sh reads them, the syscall
 * lines (mmap, mremap, munmap of 32 MiB and more, above any --min-size
 * of 16 MiB that leaves out libc's own) as tests/lib.sh check_expect
 * does.  Then "OK" (exit 0), or "CORRUPT" (exit 1) when memory was
 * wrong.  glibc's memalign is its aligned_alloc: its calls are then
 * expected under aligned_alloc.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "target.h"

enum kind {
	K_MALLOC, K_CALLOC, K_REALLOC, K_REALLOCARRAY, K_FREE, K_POSIX_MEMALIGN,
	K_ALIGNED_ALLOC, K_MEMALIGN, K_N
};

static const char *const names[K_N] = {
	"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
	"aligned_alloc", "memalign",
};

#include "alloc-counts.h"

static sigset_t set;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int leader_go;	/* -X: the leader may exit */
/* the allocator functions through volatile pointers: no call is elided */
static void *(*volatile f_malloc)(size_t) = malloc;
static void (*volatile f_free)(void *) = free;

static SECTION void check(struct counts *c, unsigned char *p, size_t n, unsigned char v)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != v)
			c->bad = 1;
}

static SECTION void one(struct counts *c, unsigned long i)
{
	size_t sz = 16 + (i % 64) * 8, n = 1 + i % 7;
	unsigned char *p, *q, *r;
	void *m = NULL;

	p = malloc(sz);
	memset(p, 0xab, sz);
	count(c, K_MALLOC, sz);
	q = calloc(n, 24);
	check(c, q, n * 24, 0);
	count(c, K_CALLOC, n * 24);
	p = realloc(p, 2 * sz);
	check(c, p, sz, 0xab);
	count(c, K_REALLOC, 2 * sz);
	q = reallocarray(q, n, 48);
	count(c, K_REALLOCARRAY, n * 48);
	r = realloc(nothing, 40);	/* a malloc */
	memset(r, 1, 40);
	count(c, K_REALLOC, 40);
	free(r);
	count(c, K_FREE, 40);
	if (posix_memalign(&m, 64, 100 + i % 5) == 0) {
		memset(m, 2, 100 + i % 5);
		count(c, K_POSIX_MEMALIGN, 100 + i % 5);
		free(m);
		count(c, K_FREE, 100 + i % 5);
	}
	m = aligned_alloc(64, 128);
	escape(m);
	count(c, K_ALIGNED_ALLOC, 128);
	free(m);
	count(c, K_FREE, 128);
	m = memalign(32, 200 + i % 3);
	escape(m);
	count(c, K_MEMALIGN, 200 + i % 3);
	free(m);
	count(c, K_FREE, 200 + i % 3);
	m = f_malloc(100000 + i % 9);	/* musl: a mapping of its own */
	escape(m);
	count(c, K_MALLOC, 100000 + i % 9);
	f_free(m);
	count(c, K_FREE, 100000 + i % 9);
	free(p);
	count(c, K_FREE, 2 * sz);
	free(q);
	count(c, K_FREE, n * 48);
	if (i % 50 == 0) {
		/* a failure: weighs nothing */
		m = f_malloc(SIZE_MAX / 2);
		escape(m);
		c->calls[K_MALLOC]++;
		c->failed[K_MALLOC]++;
	}
}

static SECTION void *worker(void *arg)
{
	struct counts *c = arg;

	for (unsigned long i = 0; i < iters; i++)
		one(c, i);
	return NULL;
}

/* mmap 2 x 32 MiB, grow one to 48 MiB by mremap, unmap both. */
static SECTION void maps(void)
{
	void *a = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *b = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (a == MAP_FAILED || b == MAP_FAILED)
		exit(99);
	a = mremap(a, 32 * MiB, 48 * MiB, MREMAP_MAYMOVE);
	if (a == MAP_FAILED || munmap(a, 48 * MiB) || munmap(b, 32 * MiB))
		exit(99);
	printf("EXPECT %d mmap 2 %lu 0\n", (int)getpid(), 64 * MiB);
	printf("EXPECT %d mremap 1 %lu 0\n", (int)getpid(), 16 * MiB);
	printf("EXPECT %d munmap 2 0 %lu\n", (int)getpid(), 80 * MiB);
}

/* leader: 0 stays, 1 has exited (-L), 2 exits at the first round (-X) */
static SECTION void *serve(void *leader)
{
	struct counts total;
	int sig, rounds = 0, bad = 0, how = (int)(intptr_t)leader;

	while (how == 1 && leader_state() != 'Z')
		usleep(1000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			exit(99);
		if (sig == SIGUSR2)
			break;
		if (how == 2 && !rounds) {
			pthread_mutex_lock(&lock);
			leader_go = 1;
			pthread_cond_signal(&cond);
			pthread_mutex_unlock(&lock);
			while (leader_state() != 'Z')
				usleep(1000);
		}
		memset(&total, 0, sizeof(total));
		round_run(&total);
		maps();
		report(&total);
		bad |= total.bad;
		printf("round %d done\n", ++rounds);
		fflush(stdout);
	}
	printf("done rounds=%d %s\n", rounds, bad ? "CORRUPT" : "OK");
	fflush(stdout);
	exit(bad ? 1 : 0);
}

SECTION int main(int argc, char **argv)
{
	int opt, wait_mode = 0, leader_exits = 0;	/* as serve()'s leader */
	struct counts total;
	pthread_t t;

	while ((opt = getopt(argc, argv, "t:n:wLX")) != -1) {
		switch (opt) {
		case 't': nthreads = atoi(optarg); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'w': wait_mode = 1; break;
		case 'L': leader_exits = wait_mode = 1; break;
		case 'X': leader_exits = 2; wait_mode = 1; break;
		default:
			fprintf(stderr, "usage: alloc-rounds [-t N] [-n ITERS] [-w] [-L] [-X]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		return 2;
	aliased = (uintptr_t)(void *)aligned_alloc == (uintptr_t)(void *)memalign;
	if (!wait_mode) {
		memset(&total, 0, sizeof(total));
		round_run(&total);
		maps();
		report(&total);
		printf("%s\n", total.bad ? "CORRUPT" : "OK");
		return total.bad ? 1 : 0;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (!leader_exits)
		serve(NULL);
	if (pthread_create(&t, NULL, serve, (void *)(intptr_t)leader_exits))
		return 99;
	pthread_mutex_lock(&lock);
	while (leader_exits == 2 && !leader_go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	pthread_exit(NULL);
}

/*
 * alloc-all.c - known calls of every allocator function, from T threads,
 * in rounds, in fork children, in posix_spawn children and after exec.
 *
 *   alloc-all [-t THREADS] [-n ITERS] [-w] [-f] [-S] [-E] [-P]
 *
 *   -w   wait: print "ready PID", then run one round per SIGUSR1 (and
 *        print its EXPECT lines and "round N done"); SIGUSR2 ends
 *   -f   after the round, fork a child that runs a round of its own
 *   -S   after the round, posix_spawn "alloc-all -t 1 -n ITERS" and wait
 *   -E   exec "alloc-all -t THREADS -n ITERS" instead of running
 *   -P   also call pool_alloc(ctx, size) (a local function, for
 *        --probe): ITERS calls per thread, sizes 1 KiB to 2 MiB
 *
 * Every call this program makes is made from functions in the section
 * "alloc_text" (compiled without sibling calls, so that the caller of
 * each allocator function is there).  It prints, per process:
 *
 *   RANGE <pid> <start> <end>         the section's addresses (%016lx)
 *   EXPECT <pid> <kind> <calls> <bytes> <failed>
 *
 * where kind is memtap's event name, bytes what memtap must weigh, then
 * "OK" (exit 0), or "CORRUPT" (exit 1) when memory was wrong.  glibc's
 * aligned_alloc and memalign are one function: their calls are then
 * expected under aligned_alloc, the name memtap gives it.
 *
 * Built with -DFAR_ALLOC (alloc-all-far, a PIE): the executable defines
 * mallocx and sdallocx (jemalloc's names, which memtap probes; they call
 * libc's malloc and free: nested calls), and each iteration also makes
 * a mallocx and an sdallocx call, counted as malloc and free.  It
 * prints "FAR <mallocx> <libc's malloc>", their addresses, first: a
 * PIE's code is terabytes from libc's, beyond the reach of one stub
 * mapping.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum kind {
	K_MALLOC, K_CALLOC, K_REALLOC, K_REALLOCARRAY, K_FREE, K_POSIX_MEMALIGN,
	K_ALIGNED_ALLOC, K_MEMALIGN, K_VALLOC, K_PVALLOC, K_PROBE, K_N
};

static const char *const names[K_N] = {
	"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "probe",
};

#include "alloc-counts.h"

static int with_pool;
static unsigned long min_pool = 1024 * 1024;	/* pool calls counted from this size */

#ifdef FAR_ALLOC
/*
 * jemalloc's API in the executable, out of alloc_text (its callers are
 * there), in assembly: a frame first, the call after the bytes a
 * detour displaces (a call among them would make it an int3).
 */
void *mallocx(size_t size, int flags);
void sdallocx(void *p, size_t size, int flags);
#define FAR_FN(name, callee)						\
	".globl " name "\n.type " name ", @function\n" name ":\n"	\
	".cfi_startproc\n	push %rbp\n.cfi_def_cfa_offset 16\n"	\
	".cfi_offset %rbp, -16\n	mov %rsp, %rbp\n"		\
	".cfi_def_cfa_register %rbp\n	and $-16, %rsp\n"		\
	"	call " callee "@PLT\n	leave\n.cfi_def_cfa %rsp, 8\n"	\
	"	ret\n.cfi_endproc\n.size " name ", . - " name "\n"
__asm__(".text\n" FAR_FN("mallocx", "malloc") FAR_FN("sdallocx", "free"));
#endif

/*
 * A local function to probe with --probe pool_alloc:size=arg1 (noipa:
 * its name and arguments stay as written).
 */
static SECTION __attribute__((noipa)) void *pool_alloc(void *ctx, size_t size)
{
	escape(ctx);
	__asm__ volatile("" : : "r"(size) : "memory");
	return ctx;
}

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
	r = realloc(r, 0);		/* a free: returns NULL */
	escape(r);
	count(c, K_REALLOC, 0);
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
	m = memalign(16, 50);		/* glibc: calls malloc inside */
	escape(m);
	count(c, K_MEMALIGN, 50);
	free(m);
	count(c, K_FREE, 50);
	m = valloc(300);
	escape(m);
	count(c, K_VALLOC, 300);
	free(m);
	count(c, K_FREE, 300);
	m = pvalloc(5000);
	escape(m);
	count(c, K_PVALLOC, 5000);
	free(m);
	count(c, K_FREE, 5000);
	free(p);
	count(c, K_FREE, 2 * sz);
	free(q);
	count(c, K_FREE, n * 48);
#ifdef FAR_ALLOC
	p = mallocx(sz + 8, 0);
	memset(p, 3, sz + 8);
	count(c, K_MALLOC, sz + 8);
	sdallocx(p, sz + 8, 0);
	count(c, K_FREE, sz + 8);
#endif
	if (i % 50 == 0) {
		/* a failure: weighs nothing */
		m = malloc(SIZE_MAX / 2);
		escape(m);
		c->calls[K_MALLOC]++;
		c->failed[K_MALLOC]++;
	}
	if (with_pool) {
		size_t ps = (size_t)1024 << (i % 12);	/* 1 KiB .. 2 MiB */

		pool_alloc(c, ps);
		if (ps >= min_pool) {
			c->calls[K_PROBE]++;
			c->bytes[K_PROBE] += ps;
		}
	}
}

static SECTION void *worker(void *arg)
{
	struct counts *c = arg;

	for (unsigned long i = 0; i < iters; i++)
		one(c, i);
	return NULL;
}

static SECTION int child_round(void)
{
	struct counts c;

	memset(&c, 0, sizeof(c));
	round_run(&c);
	report(&c);
	printf("child %s\n", c.bad ? "CORRUPT" : "ok");
	fflush(stdout);
	return c.bad;
}

static SECTION int run_fork(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0)
		_exit(child_round());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}

static SECTION int run_spawn(const char *self)
{
	char n[32];
	char *argv[] = { (char *)self, (char *)"-t", (char *)"1", (char *)"-n", n, NULL };
	int status;
	pid_t pid;

	snprintf(n, sizeof(n), "%lu", iters);
	fflush(stdout);
	if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0)
		return 99;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}

static SECTION int run_exec(const char *self)
{
	char n[32], t[32];

	snprintf(n, sizeof(n), "%lu", iters);
	snprintf(t, sizeof(t), "%d", nthreads);
	fflush(stdout);
	execl(self, self, "-t", t, "-n", n, (char *)NULL);
	return 99;
}

SECTION int main(int argc, char **argv)
{
	int opt, wait_mode = 0, do_fork = 0, do_spawn = 0, do_exec = 0, bad = 0, rounds = 0;
	struct counts total;
	sigset_t set;
	int sig;

	while ((opt = getopt(argc, argv, "t:n:wfSEP")) != -1) {
		switch (opt) {
		case 't': nthreads = atoi(optarg); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'w': wait_mode = 1; break;
		case 'f': do_fork = 1; break;
		case 'S': do_spawn = 1; break;
		case 'E': do_exec = 1; break;
		case 'P': with_pool = 1; break;
		default:
			fprintf(stderr, "usage: alloc-all [-t N] [-n ITERS] [-w] [-f] [-S] [-E] [-P]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64)
		return 2;
#ifdef FAR_ALLOC
	printf("FAR 0x%016lx 0x%016lx\n", (unsigned long)(uintptr_t)(void *)mallocx,
	       (unsigned long)(uintptr_t)dlsym(RTLD_NEXT, "malloc"));
	fflush(stdout);
#endif
	if (do_exec)
		return run_exec(argv[0]);
	/* not by function pointers: a non-PIE executable has PLT entries */
	void *aa = dlsym(RTLD_NEXT, "aligned_alloc"), *ma = dlsym(RTLD_NEXT, "memalign");

	aliased = aa && ma ? aa == ma :
		  (uintptr_t)(void *)aligned_alloc == (uintptr_t)(void *)memalign;
	memset(&total, 0, sizeof(total));
	if (!wait_mode) {
		round_run(&total);
		report(&total);
		bad = total.bad;
		if (do_fork)
			bad |= run_fork();
		if (do_spawn)
			bad |= run_spawn(argv[0]);
		printf("%s\n", bad ? "CORRUPT" : "OK");
		return bad ? 1 : 0;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig))
			return 99;
		if (sig == SIGUSR2)
			break;
		memset(&total, 0, sizeof(total));
		round_run(&total);
		report(&total);
		bad |= total.bad;
		if (do_fork)
			bad |= run_fork();
		if (do_spawn)
			bad |= run_spawn(argv[0]);
		printf("round %d done\n", ++rounds);
		fflush(stdout);
	}
	printf("done rounds=%d %s\n", rounds, bad ? "CORRUPT" : "OK");
	return bad ? 1 : 0;
}

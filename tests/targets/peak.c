/*
 * peak.c - a peak known by construction, for --weight=peak:
 *
 *   peak [-m | -w]
 *
 * f() allocates A bytes, g() B bytes (twice from one line, the first
 * block given back), then A is freed and h() allocates C < A: the held
 * bytes were highest (A + B) with f's and g's blocks, h's never among
 * them, and g's stack had asked for 2B bytes by then.  With -m the same
 * with mmap and munmap.  Prints "EXPECT f A", "EXPECT g B", "EXPECT h C", "EXPECT
 * peak A+B", "EXPECT g-acquired 2B".
 *
 * -w (--at-peak): "ready PID" and the EXPECT lines, then at each
 * SIGUSR1 a round, "round N done" after it: round 1 the above (g()
 * first), round 2
 * k() allocates D: a second peak B + C + D, D - A above the first
 * ("EXPECT k D", "EXPECT peak2 B+C+D"); then it exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define A (4 << 20)
#define B (2 << 20)
#define C (1 << 20)
#define D (5 << 20)

static int use_mmap;

static void *get(size_t n)
{
	void *p;

	if (!use_mmap) {
		p = malloc(n);
	} else {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
	}
	if (!p)
		exit(2);
	memset(p, 1, 64);
	return p;
}

static void put(void *p, size_t n)
{
	if (use_mmap)
		munmap(p, n);
	else
		free(p);
}

static __attribute__((noinline)) void *f(void) { return get(A); }
static __attribute__((noinline)) void *g(void)
{
	void *p = NULL;

	for (volatile int i = 0; i < 2; i++) {
		if (p)
			put(p, B);
		p = get(B);	/* one stack: 2B asked, B held */
	}
	return p;
}
static __attribute__((noinline)) void *h(void) { return get(C); }
static __attribute__((noinline)) void *k(void) { return get(D); }

/* -w: wait for the test's SIGUSR1 */
static void wait_round(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

static int waiting(void)
{
	static char buf[4096];	/* no malloc of stdio's: the peaks exact */
	sigset_t set;
	void *a, *b, *c, *d;

	setvbuf(stdout, buf, _IOLBF, sizeof(buf));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("EXPECT f %d\nEXPECT g %d\nEXPECT h %d\nEXPECT peak %d\nEXPECT k %d\n"
	       "EXPECT peak2 %d\nready %d\n", A, B, C, A + B, D, B + C + D, (int)getpid());
	fflush(stdout);
	wait_round();
	/* g first: below a step of B + 1, no peak before A + B is written */
	b = g();
	a = f();
	put(a, A);
	c = h();
	printf("round 1 done\n");
	fflush(stdout);
	wait_round();
	d = k();
	printf("round 2 done\n");
	fflush(stdout);
	put(d, D);
	put(c, C);
	put(b, B);
	return 0;
}

int main(int argc, char **argv)
{
	void *a, *b, *c;

	if (argc > 1 && !strcmp(argv[1], "-w"))
		return waiting();
	use_mmap = argc > 1 && !strcmp(argv[1], "-m");
	a = f();
	b = g();
	put(a, A);
	c = h();
	printf("EXPECT f %d\nEXPECT g %d\nEXPECT h %d\nEXPECT peak %d\nEXPECT g-acquired %d\n",
	       A, B, C, A + B, 2 * B);
	fflush(stdout);
	put(b, B);
	put(c, C);
	return 0;
}

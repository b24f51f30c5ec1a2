/*
 * faults.c - page faults of known functions, for -e faults.
 *
 * Maps 256 MiB (no transparent huge pages: every fault is one 4 KiB
 * page) and touches each page once, exactly:
 *
 *   faults_forty    40 MiB, main thread
 *   faults_eight     8 MiB, main thread
 *   faults_sixteen  16 MiB, in each of the other threads (-t N, 1 to 8,
 *                   default 1), once the main thread is done
 *
 * Built with -fomit-frame-pointer: stacks need DWARF unwinding.  Prints
 *
 *   FAULTS <function> <bytes touched> <minor faults of the thread during the call>
 *
 * the fault count from getrusage(RUSAGE_THREAD) around the call.
 * -H N: first, N hugetlb pages of 2 MiB (MAP_HUGETLB) touched once each
 * by faults_huge, printed as "HUGE faults_huge <bytes> <faults>" (exit
 * status 77 when the kernel has no such pages to give).
 * -T N: first, N transparent huge pages: a 2 MiB-aligned region of N
 * * 2 MiB with MADV_HUGEPAGE, touched once per 4 KiB by faults_thp,
 * printed as "THP faults_thp <bytes> <faults> <Rss> <AnonHugePages>"
 * with the region's figures of /proc/self/smaps (the kernel may serve
 * some or all of it with 4 KiB pages: then the faults are more); with
 * -n, MADV_NOHUGEPAGE instead: 4 KiB pages only; with -m, the region
 * is N * 64 KiB, 64 KiB-aligned (for large folios of 64 KiB, mTHP).
 * -x PROGRAM: after faults_eight (and then the -T region, if any),
 * exec PROGRAM at once (the other threads touch nothing).
 * -w: the threads are created, then "ready PID" is printed and the
 * target waits for SIGUSR1 before touching anything; when every thread
 * is done it prints "touched" and waits for SIGUSR1 again to exit (for
 * memtap -p).
 * -W N: a SIGWINCH handler, and the main thread sends itself N SIGWINCH
 * (raise()) before faults_forty; prints "WINCH <sent by the process>
 * <others>" at the end (memtap's own must never reach it).
 * -B: every thread blocks SIGWINCH.
 * With an argument N (MiB), touches N MiB page by page from
 * faults_forty alone and prints nothing (the bench/faults workload).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "usr1.h"

#define MiB (1024UL * 1024UL)
#define PAGE 4096UL
#define MAX_THREADS 8

static char *area;
static pthread_barrier_t start;
static volatile sig_atomic_t winch_own, winch_other;

static void on_winch(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_TKILL || si->si_code == SI_USER)
		winch_own++;
	else
		winch_other++;
}

static long thread_minflt(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0) {
		perror("getrusage");
		exit(99);
	}
	return ru.ru_minflt;
}

/* Each toucher is a loop of its own, so that it is the faulting frame. */
__attribute__((noinline)) void faults_forty(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += PAGE)
		((volatile char *)p)[i] = 1;
}

__attribute__((noinline)) void faults_eight(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += PAGE)
		((volatile char *)p)[i] = 2;
}

__attribute__((noinline)) void faults_huge(char *p, size_t len, size_t page)
{
	for (size_t i = 0; i < len; i += page)
		((volatile char *)p)[i] = 4;
}

__attribute__((noinline)) void faults_thp(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += PAGE)
		((volatile char *)p)[i] = 5;
}

/* Rss and AnonHugePages of the mapping that starts at p, in bytes */
static void smaps_of(const char *p, unsigned long *rss, unsigned long *huge)
{
	char line[512];
	unsigned long lo, hi, kb;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	*rss = *huge = 0;
	if (!f) {
		perror("/proc/self/smaps");
		exit(99);
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo == (unsigned long)p;
		else if (in && sscanf(line, "Rss: %lu kB", &kb) == 1)
			*rss = kb * 1024;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			*huge = kb * 1024;
	}
	fclose(f);
}

static void thp_region(size_t n, int small, size_t hp)
{
	size_t len = n * hp;
	char *m = mmap(NULL, len + hp, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	unsigned long rss, huge;
	long f0, f1;

	if (m == MAP_FAILED) {
		perror("mmap");
		exit(99);
	}
	/* only the aligned region stays */
	p = (char *)(((unsigned long)m + hp - 1) & ~(hp - 1));
	if (p > m)
		munmap(m, (size_t)(p - m));
	if (p + len < m + len + hp)
		munmap(p + len, (size_t)(m + len + hp - (p + len)));
	if (madvise(p, len, small ? MADV_NOHUGEPAGE : MADV_HUGEPAGE) < 0) {
		perror("madvise");
		exit(77);
	}
	f0 = thread_minflt();
	faults_thp(p, len);
	f1 = thread_minflt();
	smaps_of(p, &rss, &huge);
	printf("THP faults_thp %zu %ld %lu %lu\n", len, f1 - f0, rss, huge);
}

__attribute__((noinline)) void faults_sixteen(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += PAGE)
		((volatile char *)p)[i] = 3;
}

static void report(const char *name, size_t len, long faults)
{
	printf("FAULTS %s %zu %ld\n", name, len, faults);
}

static void *thread_main(void *arg)
{
	char *p = area + 128 * MiB + (size_t)arg * 16 * MiB;
	long f0;

	pthread_barrier_wait(&start);
	f0 = thread_minflt();
	faults_sixteen(p, 16 * MiB);
	report("faults_sixteen", 16 * MiB, thread_minflt() - f0);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t len = 256 * MiB;
	long nthreads = 1, f0, f1, f2;
	pthread_t t[MAX_THREADS];
	int opt, wait = 0, small = 0, bench = argc > 1 && argv[1][0] != '-';
	size_t huge = 0, thp = 0, unit = 2 * MiB;
	long winch = -1;
	int block_winch = 0;
	char *exec_prog = NULL;

	if (bench)
		len = strtoul(argv[1], NULL, 0) * MiB;
	while (!bench && (opt = getopt(argc, argv, "BH:mnT:t:W:wx:")) != -1) {
		switch (opt) {
		case 'B':
			block_winch = 1;
			break;
		case 'W':
			winch = strtol(optarg, NULL, 10);
			break;
		case 'H':
			huge = strtoul(optarg, NULL, 10);
			break;
		case 'm':
			unit = 64 * 1024;
			break;
		case 'n':
			small = 1;
			break;
		case 'T':
			thp = strtoul(optarg, NULL, 10);
			break;
		case 't':
			nthreads = strtol(optarg, NULL, 10);
			break;
		case 'w':
			wait = 1;
			break;
		case 'x':
			exec_prog = optarg;
			break;
		default:
			return 99;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "faults: -t from 1 to %d\n", MAX_THREADS);
		return 99;
	}
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
#ifdef MADV_NOHUGEPAGE
	madvise(area, len, MADV_NOHUGEPAGE);
#endif
	if (bench) {
		faults_forty(area, len);
		return 0;
	}
	/* SIGUSR1 is for sigwait() alone, in every thread */
	usr1_block();
	if (winch >= 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_winch;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(SIGWINCH, &sa, NULL);
	}
	if (block_winch) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGWINCH);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)i) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 99;
		}
	if (wait) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		usr1_wait();
	}
	if (huge) {
		/* hugetlb pages of the default size: one fault each */
		size_t hp = 2 * MiB;
		char *h = mmap(NULL, huge * hp, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

		if (h == MAP_FAILED) {
			perror("mmap MAP_HUGETLB");
			return 77;
		}
		f0 = thread_minflt();
		faults_huge(h, huge * hp, hp);
		printf("HUGE faults_huge %zu %ld\n", huge * hp, thread_minflt() - f0);
	}
	if (thp && !exec_prog)
		thp_region(thp, small, unit);
	for (long i = 0; i < winch; i++)
		raise(SIGWINCH);
	f0 = thread_minflt();
	faults_forty(area, 40 * MiB);
	f1 = thread_minflt();
	faults_eight(area + 64 * MiB, 8 * MiB);
	f2 = thread_minflt();
	report("faults_forty", 40 * MiB, f1 - f0);
	report("faults_eight", 8 * MiB, f2 - f1);
	fflush(stdout);
	if (exec_prog) {
		if (thp)
			thp_region(thp, small, unit);
		fflush(stdout);
		execl(exec_prog, exec_prog, (char *)NULL);
		perror("execl");
		return 99;
	}
	pthread_barrier_wait(&start);
	for (long i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	if (winch >= 0)
		printf("WINCH %ld %ld\n", (long)winch_own, (long)winch_other);
	if (wait) {
		printf("touched\n");
		fflush(stdout);
		usr1_wait();
	}
	fflush(stdout);
	return 0;
}

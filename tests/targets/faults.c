/*
 * faults.c - page faults of known functions, for -e faults.
 *
 * Maps 256 MiB (no transparent huge pages: every fault is one 4 KiB
 * page) and touches each page once, exactly:
 *
 *   faults_forty    40 MiB, main thread
 *   faults_eight     8 MiB, main thread
 *   faults_sixteen  16 MiB, a second thread
 *
 * Built with -fomit-frame-pointer: stacks need DWARF unwinding.  Prints
 *
 *   FAULTS <function> <bytes touched> <minor faults of the thread during the call>
 *
 * the fault count from getrusage(RUSAGE_THREAD) around the call.
 * With an argument N (MiB), touches N MiB page by page from
 * faults_forty alone and prints nothing (the bench/faults workload).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define MiB (1024UL * 1024UL)
#define PAGE 4096UL

static char *area;

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
	long f0;

	(void)arg;
	f0 = thread_minflt();
	faults_sixteen(area + 128 * MiB, 16 * MiB);
	report("faults_sixteen", 16 * MiB, thread_minflt() - f0);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoul(argv[1], NULL, 0) * MiB : 256 * MiB;
	pthread_t t;
	long f0, f1, f2;

	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		perror("mmap");
		return 99;
	}
#ifdef MADV_NOHUGEPAGE
	madvise(area, len, MADV_NOHUGEPAGE);
#endif
	if (argc > 1) {
		faults_forty(area, len);
		return 0;
	}
	f0 = thread_minflt();
	faults_forty(area, 40 * MiB);
	f1 = thread_minflt();
	faults_eight(area + 64 * MiB, 8 * MiB);
	f2 = thread_minflt();
	report("faults_forty", 40 * MiB, f1 - f0);
	report("faults_eight", 8 * MiB, f2 - f1);
	if (pthread_create(&t, NULL, thread_main, NULL) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		return 99;
	}
	pthread_join(t, NULL);
	fflush(stdout);
	return 0;
}

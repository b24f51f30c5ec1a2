/*
 * alloc-exec.c - mallocs, then an exec at once: the records of the last
 * calls are still in memtap's in-target ring when the image goes.
 *
 *   alloc-exec [N]
 *
 * main -> exec_site -> malloc(1000 + i), i < N (default 5), none freed,
 * then execs itself as "alloc-exec -" (which allocates nothing of its
 * own and exits 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[256];

__attribute__((noinline)) static void *exec_site(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 5;

	if (argc > 1 && !strcmp(argv[1], "-"))
		return 0;	/* the image after the exec */
	for (unsigned long i = 0; i < n && i < 256; i++)
		keep[i] = exec_site(1000 + i);
	execl("/proc/self/exe", argv[0], "-", (char *)NULL);
	perror("execl");
	return 99;
}

/*
 * threads - 4 threads, each maps 5 x 32 MiB and unmaps 2 of them.
 * No malloc in the threads: glibc would reserve a 64 MiB arena each.
 */
#include <pthread.h>
#include "target.h"

#define NTHREADS 4

static void *work(void *arg)
{
	void *m[5];

	(void)arg;
	for (int i = 0; i < 5; i++)
		m[i] = xmmap_anon(32 * MiB);
	xmunmap(m[1], 32 * MiB);
	xmunmap(m[3], 32 * MiB);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return 99;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	expect("mmap", NTHREADS * 5, NTHREADS * 5 * 32 * MiB, 0);
	expect("munmap", NTHREADS * 2, 0, NTHREADS * 2 * 32 * MiB);
	printf("threads done\n");
	return 0;
}

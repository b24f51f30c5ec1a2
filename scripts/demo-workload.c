/*
 * demo-workload - a small program whose memory grows along a few code
 * paths, for trying memtap: a config parser (small mallocs: brk), an
 * index (one large malloc: mmap), a cache that doubles with realloc
 * (mremap), and worker threads with their own buffers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024UL * 1024UL)

static void *volatile sink;

__attribute__((noinline)) static void parse_config(void)
{
	for (int i = 0; i < 2000; i++) {
		char *s = malloc(1000);

		memset(s, 'x', 1000);
		sink = s;	/* leaked on purpose: a growing heap */
	}
}

__attribute__((noinline)) static void build_index(void)
{
	char *idx = malloc(64 * MiB);

	memset(idx, 0, 64 * MiB);
	sink = idx;
}

__attribute__((noinline)) static void grow_cache(void)
{
	size_t size = 8 * MiB;
	char *cache = malloc(size);

	for (int i = 0; i < 3; i++) {
		size *= 2;
		cache = realloc(cache, size);
		memset(cache, 1, size);
	}
	sink = cache;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	char *buf = malloc(16 * MiB);

	memset(buf, (int)(long)arg, 16 * MiB);
	sink = buf;
	return NULL;
}

__attribute__((noinline)) static void start_workers(void)
{
	pthread_t t[2];

	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

int main(void)
{
	parse_config();
	build_index();
	grow_cache();
	start_workers();
	printf("demo-workload done\n");
	return 0;
}

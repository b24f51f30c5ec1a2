/*
 * dl-busy.c - a thread inside a stub of unloaded code: the worker calls
 * the plugin's mallocx, which tail-calls a hook that blocks (on a pipe)
 * and then mallocs; meanwhile the main thread unloads the plugin and
 * loads it again ROUNDS times, calling its mallocx each time (100 + r
 * bytes, its hook malloc itself), then lets the worker go on: it
 * returns through the stub it was called from.
 *
 *   dl-busy LIBRARY ROUNDS
 *
 * Prints "worker BYTES" (4321), then OK.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int pfd[2];
static void *(*mx)(size_t, int);
static volatile int inside;

static void *blocking(size_t n)
{
	char c;

	inside = 1;
	if (read(pfd[0], &c, 1) != 1)
		return NULL;
	return malloc(n);
}

static void *worker(void *arg)
{
	void *p = mx(4321, 0);

	(void)arg;
	printf("worker %d\n", p ? 4321 : 0);
	free(p);
	return NULL;
}

/* Load the plugin, its hook set: its mallocx, or NULL. */
static void *(*load(const char *path, void *(*hook)(size_t), void **h))(size_t, int)
{
	void *(*f)(size_t, int);
	void **hp;

	if (!(*h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
		return NULL;
	*(void **)&f = dlsym(*h, "mallocx");
	hp = dlsym(*h, "plug_hook");
	if (!f || !hp)
		return NULL;
	*(void *(**)(size_t))hp = hook;
	return f;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 0) : 100;
	pthread_t t;
	void *h;

	if (argc < 2 || pipe(pfd) < 0 || !(mx = load(argv[1], blocking, &h)) ||
	    pthread_create(&t, NULL, worker, NULL))
		return 99;
	while (!inside)
		usleep(1000);
	if (dlclose(h) != 0)
		return 99;
	for (unsigned long r = 0; r < rounds; r++) {
		void *(*f)(size_t, int) = load(argv[1], malloc, &h);

		if (!f)
			return 99;
		free(f(100 + r, 0));
		if (dlclose(h) != 0)
			return 99;
	}
	if (write(pfd[1], "x", 1) != 1 || pthread_join(t, NULL))
		return 99;
	printf("OK\n");
	return 0;
}

/*
 * stack-dl.c - a target that loads a library, calls it, unloads it, then
 * loads another (usually at the same address) and calls that one: the
 * stacks of both calls must name the right library after both are gone.
 *
 *   stack-dl LIBA LIBB
 *
 * Each library's stack_lib_<x>() makes an mmap of STACK_DL_MAGIC bytes.
 * Prints "LIB <symbol> <address>" for each, so that a test can tell
 * whether the second library took the first one's place.
 */
#include <dlfcn.h>
#include <stdio.h>

#define STACK_DL_MAGIC 0x2346000UL

volatile int stack_dl_sink;

__attribute__((noinline)) static int stack_dl_call(const char *path, const char *sym)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*fn)(unsigned long);
	int r;

	if (!h) {
		fprintf(stderr, "stack-dl: %s\n", dlerror());
		return -1;
	}
	*(void **)&fn = dlsym(h, sym);
	if (!fn) {
		fprintf(stderr, "stack-dl: %s\n", dlerror());
		return -1;
	}
	printf("LIB %s %p\n", sym, *(void **)&fn);
	fflush(stdout);
	r = fn(STACK_DL_MAGIC);
	stack_dl_sink = r;
	dlclose(h);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 99;
	if (stack_dl_call(argv[1], "stack_lib_a") < 0)
		return 1;
	if (stack_dl_call(argv[2], "stack_lib_b") < 0)
		return 1;
	return 0;
}

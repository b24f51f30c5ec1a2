/*
 * alloc-dl.c - dlopen a library that allocates, call it, dlclose it,
 * three times (the library may come back at another address).
 *
 *   alloc-dl LIBRARY [N]
 *
 * Prints "RANGE <pid> <start> <end>" and "EXPECT <pid> probe <calls>
 * <bytes> 0" for --probe lib_work:size=arg1 (see alloc-all.c), then OK.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SECTION __attribute__((section("alloc_text"), noinline))

extern char __start_alloc_text[], __stop_alloc_text[];

SECTION int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 100, calls = 0, bytes = 0;
	int bad = 0;

	if (argc < 2)
		return 2;
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*work)(unsigned long, size_t);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 99;
		}
		*(void **)&work = dlsym(h, "lib_work");
		if (!work)
			return 99;
		for (unsigned long i = 0; i < n; i++) {
			bad |= work(i, 100 + i);
			calls++;
			bytes += 100 + i;
		}
		if (dlclose(h) != 0)
			return 99;
	}
	printf("RANGE %d 0x%016lx 0x%016lx\n", (int)getpid(), (unsigned long)__start_alloc_text,
	       (unsigned long)__stop_alloc_text);
	printf("EXPECT %d probe %lu %lu 0\n", (int)getpid(), calls, bytes);
	printf("%s\n", bad ? "CORRUPT" : "OK");
	return bad;
}

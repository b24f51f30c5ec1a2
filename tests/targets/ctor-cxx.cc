// ctor-cxx.cc - a C++ program (libstdc++'s constructors allocate its
// emergency pool before main) linked with ctor-lib (its constructor
// mallocs 5000 bytes).  main() allocates 3000 bytes with new[] and
// keeps everything to the end; nothing is freed.
//
// With ctor-count preloaded it first prints what was allocated before
// main, "PREMAIN <malloc calls> <malloc bytes> <calloc calls> <calloc
// bytes> <realloc calls> <memalign calls> <frees>"; then always
// "MAIN malloc 1 3000" and "OK".  Output by write(2): no stdio buffer.
#include <cstdio>
#include <cstring>
#include <unistd.h>

extern "C" {
extern void *ctor_lib_block;
__attribute__((weak)) void ctor_count_get(unsigned long out[7]);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

int main()
{
	char line[256];

	if (ctor_count_get) {
		unsigned long c[7];

		ctor_count_get(c);
		snprintf(line, sizeof(line), "PREMAIN %lu %lu %lu %lu %lu %lu %lu\n", c[0], c[1],
			 c[2], c[3], c[4], c[5], c[6]);
		say(line);
	}
	if (!ctor_lib_block)
		return 1;
	char *p = new char[3000];
	memset(p, 2, 3000);
	__asm__ volatile("" : : "r"(p) : "memory");
	say("MAIN malloc 1 3000\nOK\n");
	return 0;
}

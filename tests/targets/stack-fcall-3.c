/* stack-fcall-3.c - the innermost frame: the memory call. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stack-fcall.h"

__attribute__((noinline)) int stack_f3(int mode)
{
	if (mode == MODE_MALLOC) {
		char *p = malloc(64UL << 20);

		if (!p)
			return -1;
		p[0] = 1;
		stack_sink = p[0];
		free(p);
		return 1;
	}
	void *p = mmap(NULL, STACK_FCALL_MAGIC, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	stack_sink = 1;
	munmap(p, STACK_FCALL_MAGIC);
	return 1;
}

/* stack-fcall-3.c - the innermost frame: the memory call. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "stack-fcall.h"

static void *mmap_magic(void)
{
	return mmap(NULL, STACK_FCALL_MAGIC, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void stack_sig_handler(int sig)
{
	void *p = mmap_magic();

	stack_sink = sig;
	if (p != MAP_FAILED)
		munmap(p, STACK_FCALL_MAGIC);
}

__attribute__((noinline)) int stack_f3(int mode)
{
	if (mode == MODE_SIGNAL) {
		signal(SIGUSR1, stack_sig_handler);
		raise(SIGUSR1);
		stack_sink = 1;
		return 1;
	}
	if (mode == MODE_BRK) {
		/* the heap grows and shrinks by the magic length */
		if (sbrk((intptr_t)STACK_FCALL_MAGIC) == (void *)-1)
			return -1;
		stack_sink = 2;
		if (sbrk(-(intptr_t)STACK_FCALL_MAGIC) == (void *)-1)
			return -1;
		return 1;
	}
	if (mode == MODE_MALLOC) {
		char *p = malloc(64UL << 20);

		if (!p)
			return -1;
		p[0] = 1;
		stack_sink = p[0];
		free(p);
		return 1;
	}
	void *p = mmap_magic();

	if (p == MAP_FAILED)
		return -1;
	stack_sink = 1;
	munmap(p, STACK_FCALL_MAGIC);
	return 1;
}

/* stack-dl-liba.c - a library of the stack-dl target. */
#include <sys/mman.h>

volatile int stack_lib_a_sink;

__attribute__((noinline)) int stack_lib_a(unsigned long len)
{
	void *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	stack_lib_a_sink = 1;
	munmap(p, len);
	return 1;
}

/*
 * brk - grows the heap with sbrk by 3 x 8 MiB and shrinks it by
 * 4 MiB, then asks for an impossible break (fails, weighs nothing).
 */
#include <stdint.h>
#include <sys/syscall.h>
#include "target.h"

int main(void)
{
	char *start = sbrk(0);

	for (int i = 0; i < 3; i++)
		if (sbrk(8 * MiB) == (void *)-1)
			return 99;
	if (sbrk(-(intptr_t)(4 * MiB)) == (void *)-1)
		return 99;
	char *end = sbrk(0);
	/* a break beyond the address space: the kernel refuses it */
	long r = syscall(SYS_brk, (long)0x7ffffffff000L + 4096 * 1000L);

	expect("brk", 4, 3 * 8 * MiB, 4 * MiB);
	printf("brk done growth=%ld refused=%d\n", (long)(end - start), r == (long)end);
	return 0;
}

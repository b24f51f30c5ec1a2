/*
 * jit.c - code in an anonymous mapping, as a JIT makes it: a stub
 * written into a page that is then made executable (mprotect) calls
 * work(), which maps and unmaps 1 MiB, N times.
 *
 *   jit N
 *
 * Every munmap's stack has a frame in anonymous code: memtap must not
 * read /proc/PID/maps again for each of them.  Prints "OK".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((noinline)) static void work(void)
{
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(99);
	munmap(p, 1 << 20);
}

int main(int argc, char **argv)
{
	/* sub $8,%rsp; movabs $work,%rax; call *%rax; add $8,%rsp; ret */
	unsigned char stub[] = {
		0x48, 0x83, 0xec, 0x08, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3,
	};
	uint64_t fn = (uint64_t)(uintptr_t)work;
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*call)(void);

	if (page == MAP_FAILED)
		return 99;
	memcpy(stub + 6, &fn, sizeof(fn));
	memcpy(page, stub, sizeof(stub));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		return 99;
	*(void **)&call = page;
	for (unsigned long i = 0; i < n; i++)
		call();
	printf("OK\n");
	return 0;
}

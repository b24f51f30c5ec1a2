/*
 * int80 - memory syscalls through the i386 ABI (int $0x80) from a 64-bit
 * process: mmap2 of 4 MiB (nr 192), munmap of it (nr 91).  The seccomp
 * filter must catch them by their i386 numbers.
 */
#include "target.h"

#include <signal.h>

/*
 * A kernel without IA-32 emulation (CONFIG_IA32_EMULATION off, or
 * ia32_emulation=0) answers int $0x80 with a general protection fault:
 * SIGSEGV.  Say so and exit 77 (skip) instead of dying.
 */
static void on_segv(int sig)
{
	static const char msg[] = "int80 unsupported: SIGSEGV\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(99);
	_exit(77);
}

static long int80(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long rbp __asm__("rbp");

	(void)rbp;
	__asm__ volatile("push %%rbp\n\tmov %7, %%rbp\n\tint $0x80\n\tpop %%rbp"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e), "g"(f)
			 : "memory");
	return ret;
}

int main(void)
{
	signal(SIGSEGV, on_segv);
	/* mmap2(NULL, 4 MiB, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) */
	long addr = int80(192, 0, 4 * MiB, 3, 0x22, -1, 0);

	if (addr < 0 && addr > -4096) {
		printf("int80 unsupported %ld\n", addr);
		return 77;
	}
	signal(SIGSEGV, SIG_DFL);	/* from here on a fault is a failure */
	((volatile char *)(unsigned long)(unsigned int)addr)[0] = 1;
	if (int80(91, (unsigned int)addr, 4 * MiB, 0, 0, 0, 0) != 0)
		return 99;
	expect("mmap", 1, 4 * MiB, 0);
	expect("munmap", 1, 0, 4 * MiB);
	printf("int80 done addr=%#lx\n", (unsigned long)(unsigned int)addr);
	return 0;
}

/*
 * detour-regs.c - probed functions that check, at their entry, the
 * registers their caller set: what a detour's glue and prefilter hand
 * the function, whichever way they go (recorded, left out, counted).
 *
 *   detour-regs [-n ITERS]
 *
 * mallocx, rallocx and sdallocx (jemalloc's names, which memtap probes)
 * are defined here in assembly: each first stores rax, rdi, rsi, rdx,
 * rcx, r8 and r9 as it finds them (its first instruction is among the
 * bytes a detour displaces), then goes on in C.  call_regs() calls one
 * with its arguments and known values in rax, r8 and r9, as a caller
 * that uses the registers at a function's entry would (al of a
 * variadic call; a syscall number: tests/targets/detour-inside-lib.c).
 * Each iteration calls mallocx(3000), rallocx(NULL, 5000),
 * rallocx(p, 7000) and sdallocx(p, 7000, 0) (each block freed
 * exactly once).  Prints "BAD <function> <register> <got> <want>" for
 * each register that differed (at most 20 lines), then "OK" (exit 0)
 * or "FAIL" (exit 1).  On another CPU: "SKIP", exit 77.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef __x86_64__
void *mallocx(size_t size, int flags);
void *rallocx(void *p, size_t size, int flags);
void sdallocx(void *p, size_t size, int flags);
/* fn(a, b, c) with rax, r8 and r9 = ax, r8, r9 at its entry */
uintptr_t call_regs(void *fn, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t ax,
		    uintptr_t r8, uintptr_t r9);

/* rax rdi rsi rdx rcx r8 r9 at the last entry */
uintptr_t seen[7];

__attribute__((visibility("hidden"))) void *mallocx_body(size_t size, int flags);
__attribute__((visibility("hidden"))) void *rallocx_body(void *p, size_t size, int flags);
__attribute__((visibility("hidden"))) void sdallocx_body(void *p, size_t size, int flags);

#define ENTRY(name)							\
	".globl " name "\n.type " name ", @function\n" name ":\n"	\
	"	mov %rax, seen(%rip)\n"					\
	"	mov %rdi, seen+8(%rip)\n"				\
	"	mov %rsi, seen+16(%rip)\n"				\
	"	mov %rdx, seen+24(%rip)\n"				\
	"	mov %rcx, seen+32(%rip)\n"				\
	"	mov %r8, seen+40(%rip)\n"				\
	"	mov %r9, seen+48(%rip)\n"				\
	"	jmp " name "_body\n"					\
	".size " name ", . - " name "\n"

__asm__(".text\n" ENTRY("mallocx") ENTRY("rallocx") ENTRY("sdallocx")
	".globl call_regs\n"
	".type call_regs, @function\n"
	"call_regs:\n"
	"	mov %rdi, %r11\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %rax\n"
	"	mov %r9, %r8\n"
	"	mov 8(%rsp), %r9\n"
	"	mov $0x5eed, %ecx\n"
	"	jmp *%r11\n"
	".size call_regs, . - call_regs\n");

void *mallocx_body(size_t size, int flags)
{
	(void)flags;
	return malloc(size);
}

void *rallocx_body(void *p, size_t size, int flags)
{
	(void)flags;
	return realloc(p, size);
}

void sdallocx_body(void *p, size_t size, int flags)
{
	(void)size;
	(void)flags;
	free(p);
}

static int bad;

/* fn(a, b, c) with known rax, r8, r9; its entry's registers checked. */
static void *call(const char *name, void *fn, uintptr_t a, uintptr_t b, uintptr_t c,
		  unsigned long i)
{
	static const char *const regs[7] = { "rax", "rdi", "rsi", "rdx", "rcx", "r8", "r9" };
	/* rax: a small number, as a syscall's or a variadic call's al */
	uintptr_t want[7] = { 0x3c - i % 8, a, b, c, 0x5eed, 0x8888000000000000 | i,
			      0x9999000000000000 | i };
	void *p;

	p = (void *)call_regs(fn, a, b, c, want[0], want[5], want[6]);
	for (int r = 0; r < 7; r++)
		if (seen[r] != want[r] && bad++ < 20)
			printf("BAD %s %s %#lx %#lx\n", name, regs[r], (unsigned long)seen[r],
			       (unsigned long)want[r]);
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000;

	if (argc == 3 && argv[1][0] == '-' && argv[1][1] == 'n')
		n = strtoul(argv[2], NULL, 10);
	for (unsigned long i = 0; i < n; i++) {
		void *p = call("mallocx", (void *)mallocx, 3000, 0, 0, i), *q;

		if (!p)
			abort();
		sdallocx(p, 3000, 0);
		p = call("rallocx", (void *)rallocx, 0, 5000, 0, i);
		if (!p)
			abort();
		q = call("rallocx", (void *)rallocx, (uintptr_t)p, 7000, 0, i);
		if (!q)
			abort();
		call("sdallocx", (void *)sdallocx, (uintptr_t)q, 7000, 0, i);
	}
	printf("%s\n", bad ? "FAIL" : "OK");
	return bad != 0;
}
#else
int main(void)
{
	printf("SKIP: x86-64 only\n");
	return 77;
}
#endif

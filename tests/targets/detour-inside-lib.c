/*
 * detour-inside-lib.c - mallocx and rallocx for detour-inside.c: each
 * begins with a `syscall` whose number its caller puts in rax.
 */
#include <stdlib.h>

#include "detour-inside.h"

__attribute__((visibility("hidden"))) void *mallocx_body(size_t size, int flags);
__attribute__((visibility("hidden"))) void *rallocx_body(void *p, size_t size, int flags);

__asm__(".text\n"
	".globl mallocx\n"
	".type mallocx, @function\n"
	"mallocx:\n"
	"	syscall\n"
	"	nopl 0(%rax)\n"
	"	jmp mallocx_body\n"
	".size mallocx, . - mallocx\n"
	".globl rallocx\n"
	".type rallocx, @function\n"
	"rallocx:\n"
	"	nopl (%rax)\n"
	"	syscall\n"
	"	jmp rallocx_body\n"
	".size rallocx, . - rallocx\n"
	".globl call_nr\n"
	".type call_nr, @function\n"
	"call_nr:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %r11\n"
	"	mov %rdx, %rdi\n"
	"	mov %rcx, %rsi\n"
	"	mov %r8, %rdx\n"
	"	jmp *%r11\n"
	".size call_nr, . - call_nr\n");

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


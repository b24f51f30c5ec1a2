/*
 * lines-gc.c, lines-other.c - frames without line information between
 * frames with it, for --lines.  Built with -ffunction-sections and
 * linked with --gc-sections: the linker drops unused(), and its line
 * table and DWARF ranges stay, relocated to address 0, where they cover
 * _start and the assembly function below, both without line
 * information of their own.  The stack that allocates:
 *
 *   _start ... main -> with_lines -> asm_alloc -> other_alloc -> malloc
 *
 * Source lines marked "LINE name" are the call sites memtap --lines must
 * give for function name; _start and asm_alloc must have none.
 */
#include <stdio.h>
#include <stdlib.h>

void *with_lines(size_t n);

/* No line information: assembly, in this CU's .text. */
__asm__(".text\n"
	".globl asm_alloc\n"
	".type asm_alloc, @function\n"
	"asm_alloc:\n"
	"\t.cfi_startproc\n"
	"\tsub $8, %rsp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tcall other_alloc@PLT\n"
	"\tadd $8, %rsp\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size asm_alloc, .-asm_alloc\n");

/* Never called: dropped at link time; long enough to cover _start. */
unsigned unused(unsigned x)
{
#define STEP(i) x = x * 2654435761u + (i); if (x % 7 == (i) % 7) x ^= x >> 3;
#define STEP10(i) STEP(i * 10) STEP(i * 10 + 1) STEP(i * 10 + 2) STEP(i * 10 + 3) \
	STEP(i * 10 + 4) STEP(i * 10 + 5) STEP(i * 10 + 6) STEP(i * 10 + 7) \
	STEP(i * 10 + 8) STEP(i * 10 + 9)
#define STEP100(i) STEP10(i * 10) STEP10(i * 10 + 1) STEP10(i * 10 + 2) STEP10(i * 10 + 3) \
	STEP10(i * 10 + 4) STEP10(i * 10 + 5) STEP10(i * 10 + 6) STEP10(i * 10 + 7) \
	STEP10(i * 10 + 8) STEP10(i * 10 + 9)
	STEP100(1) STEP100(2) STEP100(3) STEP100(4)
	return x;
}

int main(void)
{
	void *p = with_lines(4321); /* LINE main */

	__asm__ volatile("" : : "r"(p) : "memory");
	printf("OK\n");
	return 0;
}

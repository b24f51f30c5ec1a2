/* stack-fcall.c - main of the known-stack target (see stack-fcall.h). */
#include <stdio.h>
#include <string.h>

#include "stack-fcall.h"

volatile int stack_sink;

int main(int argc, char **argv)
{
	int mode = argc > 1 && strcmp(argv[1], "malloc") == 0 ? MODE_MALLOC : MODE_MMAP;
	int r = stack_f0(mode);

	stack_sink = r;
	return r == 4 ? 0 : 1;
}

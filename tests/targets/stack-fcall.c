/* stack-fcall.c - main of the known-stack target (see stack-fcall.h). */
#include <stdio.h>
#include <string.h>

#include "stack-fcall.h"

volatile int stack_sink;

int main(int argc, char **argv)
{
	int mode = MODE_MMAP, r;

	if (argc > 1 && strcmp(argv[1], "malloc") == 0)
		mode = MODE_MALLOC;
	else if (argc > 1 && strcmp(argv[1], "signal") == 0)
		mode = MODE_SIGNAL;
	else if (argc > 1 && strcmp(argv[1], "brk") == 0)
		mode = MODE_BRK;
	r = stack_f0(mode);

	stack_sink = r;
	return r == 4 ? 0 : 1;
}

/* stack-fcall-1.c - one frame of the known-stack target. */
#include "stack-fcall.h"

__attribute__((noinline)) int stack_f1(int mode)
{
	int r = stack_f2(mode);

	stack_sink = r;
	return r + 1;
}

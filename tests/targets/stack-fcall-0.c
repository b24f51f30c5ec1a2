/* stack-fcall-0.c - one frame of the known-stack target. */
#include "stack-fcall.h"

__attribute__((noinline)) int stack_f0(int mode)
{
	int r = stack_f1(mode);

	stack_sink = r;
	return r + 1;
}

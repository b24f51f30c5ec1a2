/* stack-fcall-2.c - one frame of the known-stack target. */
#include "stack-fcall.h"

__attribute__((noinline)) int stack_f2(int mode)
{
	int r = stack_f3(mode);

	stack_sink = r;
	return r + 1;
}

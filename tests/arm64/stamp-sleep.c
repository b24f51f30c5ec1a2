/*
 * stamp-sleep - two calls of malloc a known sleep apart, for the times
 * memtap's --trace gives them (tests/arm64/stamps-detach.test):
 * malloc(90001), a sleep of SLEEP_MS, malloc(90002).  Each call's time
 * must come after the one before it by the sleep at least.  Prints
 * "SLEEP <ms>" and "done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLEEP_MS 500

int main(void)
{
	struct timespec nap = { SLEEP_MS / 1000, (SLEEP_MS % 1000) * 1000000L };
	volatile char *a, *b;

	a = malloc(90001);
	if (!a)
		return 2;
	a[0] = 1;
	while (nanosleep(&nap, &nap))
		;
	b = malloc(90002);
	if (!b)
		return 2;
	b[0] = 1;
	free((void *)a);
	free((void *)b);
	printf("SLEEP %d\ndone\n", SLEEP_MS);
	return 0;
}

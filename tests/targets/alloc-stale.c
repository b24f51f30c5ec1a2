/*
 * alloc-stale.c - a call of posix_memalign that never returns, then
 * calls from the same frame.  Its memptr is an address that faults, so
 * that glibc's store of the result raises SIGSEGV inside it, and the
 * handler leaves by siglongjmp: the call's frame is gone, its return
 * never comes.  The next posix_memalign, made by the same function
 * from the same sp, has its return address where the lost call had
 * its: a tracer that kept the lost call open would take the new one
 * for a call nested in it (and report the lost call's size at its
 * return).  Each round's block is freed.
 *
 *   alloc-stale [N]
 *
 * Prints "RANGE <pid> <start> <end>" (its section "alloc_text") and
 * "EXPECT <pid> <event> <calls> <bytes> <failed>" (tests/alloc-lib.sh)
 * for the calls that return, then "OK".
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECTION __attribute__((section("alloc_text"), noinline))

extern char __start_alloc_text[], __stop_alloc_text[];

/* an address no process maps (the first page) */
#define FAULTING ((void **)(unsigned long)64)

static sigjmp_buf jb;
static volatile int faults;

static void on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(jb, 1);
}

static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

/* Both calls of posix_memalign come from here: the same sp each time. */
static SECTION int pm(void **out, size_t n)
{
	int r = posix_memalign(out, 64, n);

	barrier();
	return r;
}

static SECTION void fr(void *p)
{
	free(p);
	barrier();
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 10;
	/* kept across siglongjmp */
	static unsigned long calls, bytes;
	volatile unsigned long i;
	struct sigaction sa;
	int pid = (int)getpid();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL))
		return 99;
	for (i = 0; i < n; i++) {
		void *p = NULL;

		if (sigsetjmp(jb, 1) == 0) {
			pm(FAULTING, 100 + i);
			fprintf(stderr, "posix_memalign stored at %p\n", (void *)FAULTING);
			return 99;
		}
		if (pm(&p, 200 + i) || !p)
			return 99;
		memset(p, 1, 200 + i);
		calls++;
		bytes += 200 + i;
		fr(p);
	}
	if (faults != (int)n)
		return 99;
	printf("RANGE %d 0x%016lx 0x%016lx\n", pid, (unsigned long)__start_alloc_text,
	       (unsigned long)__stop_alloc_text);
	printf("EXPECT %d posix_memalign %lu %lu 0\n", pid, calls, bytes);
	printf("EXPECT %d free %lu %lu 0\n", pid, calls, bytes);
	printf("OK\n");
	return 0;
}

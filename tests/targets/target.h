/*
 * target.h - helpers for the test targets.  Each target makes known
 * memory syscalls and prints, for each, what memtap must count:
 *
 *   EXPECT <pid> <event> <calls> <acquired> <released>
 *
 * Tests sum these lines per (pid, event) and compare with memtap's
 * summary, run with a --min-size that leaves out libc's own start-up
 * calls (all smaller than the sizes used here).
 */
#ifndef TARGET_H
#define TARGET_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MiB (1024UL * 1024UL)

static inline void expect(const char *event, unsigned long calls,
			  unsigned long acquired, unsigned long released)
{
	printf("EXPECT %d %s %lu %lu %lu\n", (int)getpid(), event, calls, acquired, released);
	fflush(stdout);
}

static inline void *xmmap_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(99);
	}
	((volatile char *)p)[0] = 1;
	return p;
}

/*
 * Block SIGUSR1 and SIGUSR2 (before any thread is created, which then
 * inherits the mask), for sigwait(set).
 */
static inline void block_usr_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	sigprocmask(SIG_BLOCK, set, NULL);
}

static inline void xmunmap(void *p, size_t len)
{
	if (munmap(p, len) != 0) {
		perror("munmap");
		exit(99);
	}
}

/* The state letter of the leader in /proc/self/stat ('Z': it exited, a zombie). */
static inline char leader_state(void)
{
	char buf[512], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

#endif

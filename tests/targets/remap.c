/*
 * remap - mappings replaced in place, for the VmSize account.  Steps:
 *
 *   1  mmap 8 MiB, every page touched                  VmSize +8 MiB
 *   2  mmap MAP_FIXED 4 MiB over the middle of it      +0
 *   3  mremap it from 8 to 12 MiB (it may move)        +4 MiB
 *   4  munmap 2 MiB of it                              -2 MiB
 *   5  mmap 1 MiB, mremap it to 2 MiB with
 *      MREMAP_FIXED over 2 MiB of the 12              +1 MiB, then -1 MiB
 *
 * The mappings of steps 2 and 5 replace 4 and 2 MiB of resident pages.
 * -s K: the first K steps only (default 5).  Prints "STEP k VmSize" (in
 * bytes, from /proc/self/status) before step 1 and after each step,
 * with write(2) and a buffer on the stack, so that printing maps
 * nothing.  -w: prints "ready PID" first and waits for SIGUSR1, then
 * after the steps for SIGUSR1 again (for memtap -p).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "usr1.h"

#define MiB (1024UL * 1024UL)

static void die(const char *what)
{
	perror(what);
	exit(99);
}

static void say(const char *line)
{
	if (write(1, line, strlen(line)) < 0)
		exit(99);
}

static void step(int k)
{
	char buf[4096], line[64], *p;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		die("/proc/self/status");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		die("read /proc/self/status");
	buf[n] = 0;
	p = strstr(buf, "\nVmSize:");
	if (!p)
		die("VmSize");
	snprintf(line, sizeof(line), "STEP %d %lu\n", k, strtoul(p + 8, NULL, 10) * 1024);
	say(line);
}

__attribute__((noinline)) static void *map_anon(void *at, size_t len, int flags)
{
	void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags,
		       -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

int main(int argc, char **argv)
{
	int opt, steps = 5, wait = 0;
	char *a, *c;

	while ((opt = getopt(argc, argv, "s:w")) != -1) {
		switch (opt) {
		case 's':
			steps = atoi(optarg);
			break;
		case 'w':
			wait = 1;
			break;
		default:
			return 99;
		}
	}
	if (wait) {
		char line[32];

		usr1_block();
		snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
		say(line);
		usr1_wait();
	}
	step(0);
	if (steps >= 1) {
		a = map_anon(NULL, 8 * MiB, 0);
		for (size_t i = 0; i < 8 * MiB; i += 4096)
			((volatile char *)a)[i] = 1;
		step(1);
	}
	if (steps >= 2) {
		map_anon(a + 2 * MiB, 4 * MiB, MAP_FIXED);
		step(2);
	}
	if (steps >= 3) {
		a = mremap(a, 8 * MiB, 12 * MiB, MREMAP_MAYMOVE);
		if (a == MAP_FAILED)
			die("mremap");
		step(3);
	}
	if (steps >= 4) {
		if (munmap(a + 1 * MiB, 2 * MiB) < 0)
			die("munmap");
		step(4);
	}
	if (steps >= 5) {
		c = map_anon(NULL, 1 * MiB, 0);
		if (mremap(c, 1 * MiB, 2 * MiB, MREMAP_MAYMOVE | MREMAP_FIXED, a + 6 * MiB) ==
		    MAP_FAILED)
			die("mremap MREMAP_FIXED");
		step(5);
	}
	if (wait) {
		say("done\n");
		usr1_wait();
	}
	return 0;
}

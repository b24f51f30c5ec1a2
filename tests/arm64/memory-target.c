/*
 * tests/arm64/memory-target.c - known memory syscalls for
 * tests/arm64-guest.test, built static for aarch64.
 *
 * Between two markers, madvise(NULL, 0, MADV_SEQUENTIAL) and
 * madvise(NULL, 0, MADV_RANDOM), it makes, by raw syscalls:
 *   mmap    65536, 12288, 1048576 here and 8192 in a forked child
 *   munmap  65536 and the upper 524288 of the 1 MiB mapping
 *   mremap  12288 to 24576 (may move)
 *   brk     +40960, +8192, then back to the start + 16384
 * so mmap 4 calls 1134592 bytes, munmap 2 calls 589824 bytes, mremap
 * 1 call +12288 bytes, brk 49152 bytes acquired and 32768 released.
 * The test asserts these totals from strace's lines.  Exit status 0
 * when every call succeeded.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *map(size_t len)
{
	void *p = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static void unmap(void *p, size_t len)
{
	if (syscall(SYS_munmap, p, len) != 0) {
		perror("munmap");
		exit(1);
	}
}

static unsigned long brk_to(unsigned long to)
{
	return (unsigned long)syscall(SYS_brk, to);
}

int main(void)
{
	syscall(SYS_madvise, NULL, 0, MADV_SEQUENTIAL);

	char *a = map(65536), *b = map(12288), *c = map(1048576);

	unmap(a, 65536);
	unmap(c + 524288, 524288);
	b = (char *)syscall(SYS_mremap, b, 12288, 24576, MREMAP_MAYMOVE);
	if (b == MAP_FAILED) {
		perror("mremap");
		return 1;
	}

	unsigned long base = brk_to(0);

	if (brk_to(base + 40960) != base + 40960 ||
	    brk_to(base + 49152) != base + 49152 ||
	    brk_to(base + 16384) != base + 16384) {
		fprintf(stderr, "brk failed\n");
		return 1;
	}

	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		map(8192);
		_exit(0);
	}
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "child failed\n");
		return 1;
	}
	syscall(SYS_madvise, NULL, 0, MADV_RANDOM);
	return 0;
}

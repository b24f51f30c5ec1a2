/*
 * iobusy [N] - N (default 200000) writes to /dev/null and getppid()
 * calls, with 4 mmaps of 4 MiB among them.  Under the seccomp filter
 * only the memory syscalls may stop it.
 */
#include <fcntl.h>
#include "target.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	int fd = open("/dev/null", O_WRONLY);
	char c = 'x';

	if (fd < 0)
		return 99;
	for (long i = 0; i < n; i++) {
		if (write(fd, &c, 1) != 1)
			return 99;
		getppid();
		if (i % (n / 4 > 0 ? n / 4 : 1) == 0 && i / (n / 4 > 0 ? n / 4 : 1) < 4)
			xmmap_anon(4 * MiB);
	}
	expect("mmap", 4, 16 * MiB, 0);
	printf("iobusy done syscalls=%ld\n", 2 * n);
	return 0;
}

/*
 * iowrite N [BS] - N write(2) calls of BS bytes (default 512) to
 * /dev/null: an I/O-bound loop that makes almost no memory syscalls.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 400000;
	size_t bs = argc > 2 ? (size_t)atol(argv[2]) : 512;
	char *buf = calloc(1, bs ? bs : 1);
	int fd = open("/dev/null", O_WRONLY);

	if (buf == NULL || fd < 0 || n < 0) {
		perror("iowrite");
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (write(fd, buf, bs) != (ssize_t)bs) {
			perror("write");
			return 1;
		}
	close(fd);
	free(buf);
	return 0;
}

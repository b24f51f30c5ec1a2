/*
 * spawn [-wait] [PROGRAM ARGS...] - maps 5 MiB + 8 KiB (the size of
 * go-grow's blocks), then runs PROGRAM in a fork child (fork, execv)
 * and waits for it; exits with its status.  -wait: prints "ready PID"
 * and waits for SIGUSR1 first.
 */
#include <sys/wait.h>
#include "target.h"
#include "usr1.h"

#define BLOCK (5 * MiB + 8 * 1024)

int main(int argc, char **argv)
{
	int status, i = 1;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-wait")) {
		usr1_block();
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		usr1_wait();
		i++;
	}
	xmmap_anon(BLOCK);
	expect("mmap", 1, BLOCK, 0);
	if (i >= argc)
		return 0;
	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		execv(argv[i], argv + i);
		perror("execv");
		_exit(99);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 98;
	return WEXITSTATUS(status);
}

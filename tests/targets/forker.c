/*
 * forker - a child (fork) maps 2 x 64 MiB and unmaps one; a vfork child
 * execs /bin/true; the parent maps 32 MiB after both are done.
 */
#include <sys/wait.h>
#include "target.h"

int main(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		void *a = xmmap_anon(64 * MiB);

		xmmap_anon(64 * MiB);
		xmunmap(a, 64 * MiB);
		expect("mmap", 2, 128 * MiB, 0);
		expect("munmap", 1, 0, 64 * MiB);
		_exit(7);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
		return 98;
	pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 97;
	xmmap_anon(32 * MiB);
	expect("mmap", 1, 32 * MiB, 0);
	printf("forker done\n");
	return 0;
}

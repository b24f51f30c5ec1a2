/*
 * exec-held - start a command stopped at its first instruction, before
 * its dynamic loader has run a line of its own.
 *
 *   exec-held COMMAND [ARGS...]
 *
 * The command is exec'd under PTRACE_TRACEME; at its exec stop this
 * process lets it go with SIGSTOP, so that it is group-stopped at the
 * loader's entry, untraced.  It prints "held PID", then waits for the
 * command and exits with its status (128 + signal if killed).  A
 * tracer can attach to the held process; a SIGCONT starts the loader.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	pid_t pid;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: exec-held COMMAND [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0L, 0L) < 0)
			_exit(126);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP ||
	    ptrace(PTRACE_DETACH, pid, 0L, (void *)(long)SIGSTOP) < 0) {
		kill(pid, SIGKILL);
		fprintf(stderr, "exec-held: cannot hold %s\n", argv[1]);
		return 2;
	}
	printf("held %d\n", (int)pid);
	fflush(stdout);
	while (waitpid(pid, &st, 0) < 0 || !(WIFEXITED(st) || WIFSIGNALED(st)))
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

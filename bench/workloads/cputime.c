/*
 * cputime FILE CMD [ARGS...] - run CMD; append to FILE one line
 *
 *   WALL_US SELF_USER SELF_SYS CHILD_USER CHILD_SYS RUNQ_WAIT
 *
 * the wall time of CMD in microseconds, then the CPU seconds that CMD
 * itself used (all its threads) and those of the children it waited
 * for, and the seconds CMD's main thread spent runnable but waiting for
 * a CPU (/proc/PID/schedstat; 0 where schedstats are not available).  Under a tracer that launched its target, "self" is the tracer
 * and "children" the target.  The figures are read from
 * /proc/PID/stat while CMD is a zombie (waitid with WNOWAIT), before it
 * is reaped.  Exit status: CMD's (128 + signal if it was killed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* utime, stime, cutime, cstime (fields 14-17) of /proc/PID/stat */
static int read_times(pid_t pid, double t[4])
{
	char path[64], buf[4096], *p;
	unsigned long long v[4];
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after ")": state (3), then fields 4..13, then 14..17 */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	for (int i = 0; i < 4; i++)
		t[i] = (double)v[i] / (double)tck;
	return 0;
}

/* run-queue wait of the main thread, seconds */
static double read_runq(pid_t pid)
{
	char path[64];
	unsigned long long run, wait;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? (double)wait / 1e9 : 0;
}

int main(int argc, char **argv)
{
	double rq;
	double t[4] = { 0, 0, 0, 0 };
	long long t0, t1;
	siginfo_t si;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: cputime FILE CMD [ARGS...]\n");
		return 64;
	}
	out = fopen(argv[1], "a");
	if (!out) {
		perror(argv[1]);
		return 64;
	}
	t0 = now_us();
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 71;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "cputime: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR) {
			perror("waitid");
			return 71;
		}
	t1 = now_us();
	if (read_times(pid, t) < 0)
		fprintf(stderr, "cputime: cannot read /proc/%d/stat\n", (int)pid);
	rq = read_runq(pid);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			return 71;
		}
	fprintf(out, "%lld %.2f %.2f %.2f %.2f %.3f\n", t1 - t0, t[0], t[1], t[2], t[3], rq);
	fclose(out);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * stopper - a helper child stops this process with SIGSTOP, checks from
 * /proc that it is stopped, continues it with SIGCONT and sends SIGUSR1.
 * The process maps 16 MiB before and after; it prints which signals
 * arrived and exits 0 only if the stop, the SIGCONT and SIGUSR1 all
 * behaved as without a tracer.
 */
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include "target.h"

static volatile sig_atomic_t got_cont, got_usr1;

static void on_cont(int sig) { (void)sig; got_cont++; }
static void on_usr1(int sig) { (void)sig; got_usr1++; }

static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	p = strrchr(buf, ')');
	return p ? p[2] : '?';
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(void)
{
	pid_t parent = getpid(), helper;
	int status;

	signal(SIGCONT, on_cont);
	signal(SIGUSR1, on_usr1);
	xmmap_anon(16 * MiB);
	fflush(stdout);
	helper = fork();
	if (helper == 0) {
		char st = '?';

		kill(parent, SIGSTOP);
		for (int i = 0; i < 200; i++) {
			nap(10);
			st = proc_state(parent);
			if (st == 'T' || st == 't')
				break;
		}
		nap(100);
		st = proc_state(parent);
		kill(parent, SIGCONT);
		nap(50);
		kill(parent, SIGUSR1);
		_exit(st == 'T' || st == 't' ? 0 : 1);
	}
	while (!got_usr1)
		nap(5);
	if (waitpid(helper, &status, 0) != helper)
		return 99;
	xmmap_anon(16 * MiB);
	expect("mmap", 2, 32 * MiB, 0);
	printf("stopper stopped=%d cont=%d usr1=%d\n",
	       WIFEXITED(status) && WEXITSTATUS(status) == 0, (int)got_cont, (int)got_usr1);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && got_cont == 1 && got_usr1 == 1 ? 0 : 1;
}

/*
 * sandboxed MODE - a target under a seccomp filter of its own, as
 * sandboxed daemons run (systemd's SystemCallFilter= and
 * MemoryDenyWriteExecute=, browsers, container runtimes).
 *
 * MODE is the filter, installed at start (no_new_privs set first):
 *   exec       kill the process on mmap with PROT_EXEC
 *   exec-anon  kill the process on anonymous mmap with PROT_EXEC
 *              (files, as ld.so maps them, are allowed)
 *   munmap-page kill the process on munmap of one page (memtap's page
 *              may be mapped, but never unmapped)
 *   munmap-ip  kill the process on munmap made from outside the C
 *              library's code (a filter that checks instruction_pointer)
 *   wx         kill the process on mmap with PROT_WRITE and PROT_EXEC
 *              and on mprotect with PROT_EXEC (MemoryDenyWriteExecute=),
 *              fail personality() with EPERM: nothing memtap injects
 *   memfd      kill the process on memfd_create (memtap's shared ring
 *              is refused: its ring is then private)
 *   yield      kill the process on sched_yield (the stubs' wait on a
 *              full ring: no stubs, breakpoints)
 *   none       no filter
 *   MODE+LATER MODE's filter at start, LATER's at the start of the first
 *              round: a filter that comes while memtap is attached
 *   strict     strict mode (SECCOMP_MODE_STRICT: read, write, exit and
 *              sigreturn only): after "ready PID" it echoes each byte
 *              read on stdin as "got C", and exits 0 at end of file
 *
 * Then it prints "ready PID" and waits for signals:
 *   SIGUSR1  one round: maps 2 x 32 MiB, unmaps one, mallocs and frees
 *            ROUND_MALLOCS x ROUND_SIZE bytes; prints EXPECT lines (see
 *            target.h), "ALLOC <pid> malloc <calls> <bytes> 0" and
 *            "round N done"
 *   SIGUSR2  prints "done rounds=N OK" and exits 0
 * With -t N, N new threads make the round's mmaps and munmap, each.
 * With -l LIB, each round also dlopen()s LIB (and dlcloses it).  With
 * -x PROG ARGS..., it execs PROG ARGS... once the filter is in, as a
 * sandboxing wrapper does (filters stay across exec).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "target.h"

#ifndef SECCOMP_RET_KILL_PROCESS
# define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

#define ROUND_MALLOCS 10
#define ROUND_SIZE 12345

#define S(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define J(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))
#define OFF(f) offsetof(struct seccomp_data, f)
#define KILL S(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define ALLOW S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static volatile sig_atomic_t rounds_wanted, done_wanted;

static void on_usr1(int sig)
{
	(void)sig;
	rounds_wanted++;
}

static void on_usr2(int sig)
{
	(void)sig;
	done_wanted = 1;
}

static void install(struct sock_filter *f, size_t n)
{
	struct sock_fprog prog = { (unsigned short)n, f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		perror("seccomp");
		exit(99);
	}
}

/* The executable mapping of the C library (the one holding munmap). */
static void libc_text(uint64_t *lo, uint64_t *hi)
{
	uint64_t want = (uint64_t)(uintptr_t)&munmap, s, e;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "re");

	*lo = *hi = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 && perms[2] == 'x' &&
		    want >= s && want < e) {
			*lo = s;
			*hi = e;
		}
	if (f)
		fclose(f);
	if (!*lo || (*lo >> 32) != ((*hi - 1) >> 32)) {
		fprintf(stderr, "cannot find the C library's code\n");
		exit(99);
	}
}

/* A filter that kills the process on syscall nr, and allows the rest. */
static void kill_on(uint32_t nr)
{
	struct sock_filter f[] = {
		S(BPF_LD | BPF_W | BPF_ABS, OFF(arch)),
		J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 2),
		S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
		J(BPF_JMP | BPF_JEQ | BPF_K, nr, 1, 0),
		ALLOW,
		KILL,
	};

	install(f, sizeof(f) / sizeof(f[0]));
}

static void install_mode(const char *mode)
{
	if (!strcmp(mode, "exec")) {
		struct sock_filter f[] = {
			S(BPF_LD | BPF_W | BPF_ABS, OFF(arch)),
			J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
			J(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 2),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(args[2])),
			J(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 1, 0),
			ALLOW,
			KILL,
		};
		install(f, sizeof(f) / sizeof(f[0]));
	} else if (!strcmp(mode, "exec-anon")) {
		struct sock_filter f[] = {
			S(BPF_LD | BPF_W | BPF_ABS, OFF(arch)),
			J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 6),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
			J(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 4),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(args[2])),
			J(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 2),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(args[3])),
			J(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 1, 0),
			ALLOW,
			KILL,
		};
		install(f, sizeof(f) / sizeof(f[0]));
	} else if (!strcmp(mode, "munmap-page")) {
		struct sock_filter f[] = {
			S(BPF_LD | BPF_W | BPF_ABS, OFF(arch)),
			J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 6),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
			J(BPF_JMP | BPF_JEQ | BPF_K, SYS_munmap, 0, 4),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(args[1]) + 4),
			J(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(args[1])),
			J(BPF_JMP | BPF_JEQ | BPF_K, 4096, 1, 0),
			ALLOW,
			KILL,
		};
		install(f, sizeof(f) / sizeof(f[0]));
	} else if (!strcmp(mode, "munmap-ip")) {
		uint64_t lo, hi;

		libc_text(&lo, &hi);
		struct sock_filter f[] = {
			S(BPF_LD | BPF_W | BPF_ABS, OFF(arch)),
			J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 7),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
			J(BPF_JMP | BPF_JEQ | BPF_K, SYS_munmap, 0, 5),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(instruction_pointer) + 4),
			J(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(lo >> 32), 0, 4),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(instruction_pointer)),
			J(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)lo, 0, 2),
			J(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)hi, 1, 0),
			ALLOW,
			KILL,
		};
		install(f, sizeof(f) / sizeof(f[0]));
	} else if (!strcmp(mode, "wx")) {
		struct sock_filter f[] = {
			S(BPF_LD | BPF_W | BPF_ABS, OFF(arch)),
			J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 11),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(nr)),
			J(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 1),
			S(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
			J(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 4, 0),
			J(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 6),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(args[2])),
			S(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC),
			J(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE | PROT_EXEC, 4, 3),
			S(BPF_LD | BPF_W | BPF_ABS, OFF(args[2])),
			J(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 2, 1),
			ALLOW,
			ALLOW,
			KILL,
		};
		install(f, sizeof(f) / sizeof(f[0]));
	} else if (!strcmp(mode, "memfd")) {
		kill_on(SYS_memfd_create);
	} else if (!strcmp(mode, "yield")) {
		kill_on(SYS_sched_yield);
	} else if (!strcmp(mode, "strict")) {
		char line[32] = "got ?\n", c;

		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) < 0) {
			perror("seccomp strict");
			exit(99);
		}
		/* raw syscalls only from here: exit_group is not allowed */
		while (syscall(SYS_read, 0, &c, 1) == 1) {
			line[4] = c;
			syscall(SYS_write, 1, line, 6);
		}
		syscall(SYS_exit, 0);
	} else if (strcmp(mode, "none")) {
		fprintf(stderr, "sandboxed: unknown mode '%s'\n", mode);
		exit(2);
	}
}

/* keep the compiler from eliding the calls */
static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static int nthreads;

static void *maps(void *arg)
{
	void *a = xmmap_anon(32 * MiB);

	(void)arg;
	xmmap_anon(32 * MiB);
	xmunmap(a, 32 * MiB);
	return NULL;
}

static void one_round(int n, const char *lib)
{
	void *p[ROUND_MALLOCS];
	pthread_t t[64];
	int pid = (int)getpid(), k = nthreads ? nthreads : 1;

	if (!nthreads)
		maps(NULL);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, maps, NULL) != 0)
			exit(99);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < ROUND_MALLOCS; i++) {
		p[i] = malloc(ROUND_SIZE);
		escape(p[i]);
		memset(p[i], i, ROUND_SIZE);
	}
	for (int i = 0; i < ROUND_MALLOCS; i++)
		free(p[i]);
	if (lib) {
		void *h = dlopen(lib, RTLD_NOW);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			exit(99);
		}
		dlclose(h);
	}
	expect("mmap", 2 * k, 64 * MiB * k, 0);
	expect("munmap", k, 0, 32 * MiB * k);
	printf("ALLOC %d malloc %d %d 0\n", pid, ROUND_MALLOCS, ROUND_MALLOCS * ROUND_SIZE);
	printf("round %d done\n", n);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *lib = NULL;
	char *later;
	sigset_t block, old;
	int n = 0;

	if (argc >= 4 && !strcmp(argv[2], "-l"))
		lib = argv[3];
	else if (argc == 4 && !strcmp(argv[2], "-t") && atoi(argv[3]) > 0 && atoi(argv[3]) <= 64)
		nthreads = atoi(argv[3]);
	else if (argc >= 4 && !strcmp(argv[2], "-x"))
		lib = NULL;
	else if (argc != 2) {
		fprintf(stderr, "usage: sandboxed MODE [-t N | -l LIB | -x PROG ARGS...]\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigprocmask(SIG_BLOCK, &block, &old);
	later = strchr(argv[1], '+');
	if (later)
		*later++ = '\0';
	install_mode(argv[1]);
	if (argc >= 4 && !strcmp(argv[2], "-x")) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(argv[3], argv + 3);
		perror("execvp");
		return 99;
	}
	if (!strcmp(argv[1], "wx") && syscall(SYS_personality, 0xffffffffUL) != -1) {
		fprintf(stderr, "the wx filter did not fail personality()\n");
		return 99;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		while (!rounds_wanted && !done_wanted)
			sigsuspend(&old);
		if (rounds_wanted) {
			rounds_wanted--;
			if (n == 0 && later)
				install_mode(later);
			one_round(++n, lib);
			continue;
		}
		break;
	}
	printf("done rounds=%d OK\n", n);
	return 0;
}

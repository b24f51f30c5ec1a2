/*
 * unwind-bench.c - how long a stack snapshot and an unwind take, per
 * back end and stack depth.  Not a test: timings depend on the machine
 * and its load, so nothing here passes or fails.
 *
 *   unwind-bench [-n ITERATIONS] TARGET...
 *
 * Each TARGET is a build of tests/targets/stack-deep.c; it is run with
 * 5, 30 and 60 frames of distinct functions and stopped (PTRACE_SYSCALL)
 * at its mmap.  While it stays stopped, the bench times
 * stack_snapshot_take() at three sizes, then for each unwinder (libdw
 * twice: "libdwfl" is libdwfl's unwinder alone, "libdw" the back end
 * with its rule cache, checked to give the same frames): the
 * first walk (cold caches), warm walks (ITERATIONS in all, in 9
 * batches: the median batch mean is shown, since the machine may be
 * busy with other work), and a walk right after unwinder_maps_changed()
 * (which re-reads /proc/PID/maps).  Times in microseconds.
 */
#include "config.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "stack/modules.h"
#include "stack/unwind/unwind.h"

#define STACK_DEEP_MAGIC 0x2347000UL
#define BATCHES 9

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Start target with depth frames, stopped at the entry of its big mmap. */
static pid_t start_target(const char *target, int depth, arch_regs_t *regs)
{
	char arg[16];
	int status, in_syscall = 0;
	pid_t pid;

	snprintf(arg, sizeof(arg), "%d", depth);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(target, target, arg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		return -1;
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, NULL) < 0 ||
		    waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
			return -1;
		if (WSTOPSIG(status) != (SIGTRAP | 0x80))
			continue;
		in_syscall = !in_syscall;
		if (ptrace(PTRACE_GETREGS, pid, NULL, regs) < 0)
			return -1;
		if (in_syscall && regs->orig_rax == 9 && regs->rsi == STACK_DEEP_MAGIC)
			return pid;
	}
}

static void bench_target(const char *target, int depth, int iters)
{
	static const size_t sizes[] = { 8192, 32768, 65536 };
	struct stack_snapshot snap = STACK_SNAPSHOT_INIT;
	uint64_t pcs[UNWIND_MAX_DEPTH];
	arch_regs_t regs;
	pid_t pid = start_target(target, depth, &regs);
	const char *name = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;

	if (pid < 0) {
		fprintf(stderr, "unwind-bench: cannot start %s\n", target);
		exit(99);
	}
	printf("%s, %d deep_* frames:\n", name, depth);
	printf("  snapshot:");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double batch[BATCHES];

		for (int b = 0; b < BATCHES; b++) {
			double t0 = now_us();

			for (int k = 0; k < iters / BATCHES + 1; k++)
				stack_snapshot_take(&snap, pid, pid, &regs, sizes[i]);
			batch[b] = (now_us() - t0) / (iters / BATCHES + 1);
		}
		qsort(batch, BATCHES, sizeof(batch[0]), cmp_double);
		printf(" %zu KiB %.2f us (%zu read)%s", sizes[i] / 1024,
		       batch[BATCHES / 2], snap.len, i + 1 < 3 ? "," : "\n");
	}
	stack_snapshot_take(&snap, pid, pid, &regs, STACK_SNAPSHOT_DEFAULT);

	/* libdw twice: libdwfl alone, then with the rule cache */
	for (int kind = UNWIND_FP; kind <= UNWIND_NKINDS; kind++) {
		struct proc_modules *pm;
		struct unwinder *uw;
		double t0, cold, warm, changed;
		int d = 0;
		const char *label = kind == UNWIND_LIBDW ? "libdwfl" :
				    kind == UNWIND_NKINDS ? "libdw" : unwind_kind_name(kind);

		unwind_libdw_rule_cache = kind == UNWIND_NKINDS;
		if (kind == UNWIND_NKINDS)
			kind = UNWIND_LIBDW;
		if (!unwind_kind_available(kind))
			continue;
		pm = proc_modules_new(pid);
		modules_refresh(pm, 1);
		uw = unwinder_new(kind, pid, pm);
		if (!uw) {
			printf("  %-6s unavailable\n", unwind_kind_name(kind));
			proc_modules_free(pm);
			continue;
		}
		t0 = now_us();
		d = unwinder_walk(uw, &snap, pcs, UNWIND_MAX_DEPTH);
		cold = now_us() - t0;
		for (int k = 0; k < 10; k++)
			unwinder_walk(uw, &snap, pcs, UNWIND_MAX_DEPTH);
		/* the median of BATCHES batches: the machine may be busy */
		double batch[BATCHES];

		for (int b = 0; b < BATCHES; b++) {
			t0 = now_us();
			for (int k = 0; k < iters / BATCHES + 1; k++)
				d = unwinder_walk(uw, &snap, pcs, UNWIND_MAX_DEPTH);
			batch[b] = (now_us() - t0) / (iters / BATCHES + 1);
		}
		qsort(batch, BATCHES, sizeof(batch[0]), cmp_double);
		warm = batch[BATCHES / 2];
		unwinder_maps_changed(uw);
		t0 = now_us();
		unwinder_walk(uw, &snap, pcs, UNWIND_MAX_DEPTH);
		changed = now_us() - t0;
		printf("  %-7s depth %3d: %8.2f us/walk warm, first %8.1f us, after maps change %8.1f us\n",
		       label, d, warm, cold, changed);
		if (kind == UNWIND_LIBDW) {
			/* the two libdw ways must agree */
			uint64_t full[UNWIND_MAX_DEPTH];
			int df;

			unwind_libdw_rule_cache = 0;
			df = unwinder_walk(uw, &snap, full, UNWIND_MAX_DEPTH);
			unwind_libdw_rule_cache = 1;
			d = unwinder_walk(uw, &snap, pcs, UNWIND_MAX_DEPTH);
			if (df != d || memcmp(full, pcs, (size_t)d * sizeof(pcs[0])) != 0)
				printf("  MISMATCH: libdwfl depth %d, rule cache depth %d\n", df, d);
		}
		unwinder_free(uw);
		proc_modules_free(pm);
		if (label[0] == 'l' && label[5] == '\0')
			break;
	}
	stack_snapshot_release(&snap);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	static const int depths[] = { 5, 30, 60 };
	int iters = 2000, opt;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt == 'n')
			iters = atoi(optarg);
		else
			return 99;
	}
	if (optind >= argc || iters < 1) {
		fprintf(stderr, "usage: unwind-bench [-n ITERATIONS] TARGET...\n");
		return 99;
	}
	for (int i = optind; i < argc; i++)
		for (size_t j = 0; j < sizeof(depths) / sizeof(depths[0]); j++)
			bench_target(argv[i], depths[j], iters);
	modules_release_all();
	return 0;
}

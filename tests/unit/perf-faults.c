/*
 * perf-faults.c - run a command under ptrace with the page-fault perf
 * events of linux/perf.c on each of its threads, unwind every sample,
 * and print the fault bytes by function.
 *
 *   perf-faults [-e faults|minor-faults|major-faults] [-c PERIOD]
 *               [-s STACK-BYTES] [-r RING-KIB] [-u KIND] [-S] [-v]
 *               -- COMMAND [ARGS]
 *   perf-faults -o TID      open the events of thread TID, close them
 *
 * The command's threads are followed (PTRACE_O_TRACECLONE): the events
 * of a new thread are opened at its clone event or first stop, before
 * it runs.  The loop polls a SIGCHLD signalfd and the sample fds (ready
 * at half a ring), reaps the stops and drains the rings.  Each sample is unwound (-u, default libdw) and interned; at a thread's
 * exit its count is read.  When the command has exited:
 *
 *   thread I: count C samples S lost L throttles T bytes B
 *   function NAME self B total B      (every function seen: bytes of
 *                                       the samples where it is the leaf,
 *                                       and where it is on the stack)
 *   stack B: FUNCTION ...             (with -S: each stack, leaf first)
 *   total count C samples S lost L throttles T bytes B
 *
 * Threads are numbered in creation order.  Bytes are the samples' page
 * bytes scaled to the thread's exact count (perf_sample_scale()).  -v
 * prints to stderr the memtap-side cost per sample: CPU ns of the drain
 * (reading the ring, copying the sample out) and of unwind + intern.
 * The thread lines end in " user-only" when the kernel's own faults on
 * user memory could not be counted (exclude_kernel had to be set).
 * Exit status: 0, 77 when perf events or ptrace are refused (the
 * reason on stderr), 99 on any other failure.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "linux/perf.h"
#include "stack/modules.h"
#include "stack/unwind/snapshot-perf.h"
#include "stack/stacks.h"
#include "stack/symbols/symbolize.h"
#include "stack/unwind/unwind.h"
#include "util/xmalloc.h"

#define MAX_THREADS 256

struct thread {
	pid_t tid;
	int live;
	int fresh;		/* added at its clone event: first SIGSTOP to come */
	struct perf_thread pt;
	uint64_t count;
	uint64_t *bytes;	/* page bytes sampled, by stack id */
	size_t nbytes;
};

struct func {
	char *name;
	double self, total;
};

static struct thread threads[MAX_THREADS];
static int nthreads, nlive;
static struct perf_fault_config config = {
	.kind = PERF_FAULTS_ALL,
	.period = 1,
	.stack_bytes = PERF_STACK_DEFAULT,
	.ring_bytes = PERF_RING_DEFAULT,
};
static pid_t pid;
static struct proc_modules *pm;
static struct unwinder *uw;
static struct stack_table *st;
static struct stack_snapshot snap = STACK_SNAPSHOT_INIT;
static uint64_t page_bytes, drain_ns, drained;

static void usage(void)
{
	fprintf(stderr, "usage: perf-faults [-e faults|minor-faults|major-faults] [-c PERIOD] "
		"[-s STACK-BYTES] [-r RING-KIB] [-u KIND] [-S] [-v] -- COMMAND [ARGS]\n"
		"       perf-faults -o TID\n");
	exit(99);
}

/* CPU time of this thread: the cost, without the waits for a CPU. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct thread *thread_find(pid_t tid)
{
	for (int i = 0; i < nthreads; i++)
		if (threads[i].tid == tid && threads[i].live)
			return &threads[i];
	return NULL;
}

/* Open the events of a thread that has not run yet; exits 77 if refused. */
static struct thread *thread_add(pid_t tid)
{
	struct thread *t = thread_find(tid);

	if (t)
		return t;
	if (nthreads == MAX_THREADS) {
		fprintf(stderr, "perf-faults: more than %d threads\n", MAX_THREADS);
		kill(pid, SIGKILL);
		exit(99);
	}
	t = &threads[nthreads];
	if (perf_thread_open(&t->pt, tid, &config) < 0) {
		int err = errno;

		fprintf(stderr, "perf-faults: %s\n", perf_open_reason(err));
		kill(pid, SIGKILL);
		exit(err == ESRCH ? 99 : 77);
	}
	t->tid = tid;
	t->live = 1;
	nthreads++;
	nlive++;
	return t;
}

/*
 * Samples are copied out of the ring as they are read (registers and
 * the stack bytes the kernel could copy), so the ring is free again
 * after a memcpy per sample; they are unwound afterwards.
 */
struct queued {
	struct thread *t;
	struct perf_sample s;
	unsigned char *stack;
	size_t cap;
};

static struct queued *queue;
static size_t nqueued, queue_cap;
static uint64_t unwind_ns;

static void on_sample(const struct perf_sample *s, void *arg)
{
	struct queued *q;

	if (nqueued == queue_cap) {
		queue = xgrowarray(queue, &queue_cap, nqueued + 1, sizeof(*queue));
		memset(queue + nqueued, 0, (queue_cap - nqueued) * sizeof(*queue));
	}
	q = &queue[nqueued++];
	q->t = arg;
	q->s = *s;
	if (q->cap < s->stack_len) {
		free(q->stack);
		q->cap = s->stack_len;
		q->stack = xmalloc(q->cap);
	}
	if (s->stack_len)
		memcpy(q->stack, s->stack, s->stack_len);
	q->s.stack = q->stack;
}

static void unwind_queued(void)
{
	uint64_t t0 = cpu_ns();

	for (size_t i = 0; i < nqueued; i++) {
		struct queued *q = &queue[i];
		struct thread *t = q->t;
		uint64_t pcs[UNWIND_MAX_DEPTH];
		uint32_t id;
		int depth;

		stack_snapshot_from_perf(&snap, pid, &q->s);
		depth = unwinder_walk(uw, &snap, pcs, UNWIND_MAX_DEPTH);
		id = stack_table_intern_pcs(st, pm, pcs, depth < 0 ? 0 : depth);
		if (id >= t->nbytes)
			t->bytes = xgrowarray(t->bytes, &t->nbytes, id + 1, sizeof(*t->bytes));
		t->bytes[id] += page_bytes;
	}
	nqueued = 0;
	unwind_ns += cpu_ns() - t0;
}

static void thread_drain(struct thread *t)
{
	uint64_t t0 = cpu_ns();

	drained += perf_thread_drain(&t->pt, 0, on_sample, t);
	drain_ns += cpu_ns() - t0;
}

static void thread_gone(struct thread *t)
{
	thread_drain(t);
	unwind_queued();
	if (perf_thread_count(&t->pt, &t->count) < 0) {
		fprintf(stderr, "perf-faults: reading the count of %d: %s\n", t->tid,
			strerror(errno));
		exit(99);
	}
	perf_thread_close(&t->pt);
	t->live = 0;
	nlive--;
}

static void resume(pid_t tid, int sig)
{
	if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH) {
		perror("perf-faults: PTRACE_CONT");
		exit(99);
	}
}

/* One wait status of thread tid; returns the exit status of pid if done. */
static void on_stop(pid_t tid, int status)
{
	struct thread *t = thread_find(tid);
	unsigned long msg;
	int sig;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (t)
			thread_gone(t);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	if (!t) {
		/* a new thread's first stop, before its clone event */
		thread_add(tid);
		resume(tid, 0);
		return;
	}
	if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_CLONE << 8))) {
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && !thread_find((pid_t)msg))
			thread_add((pid_t)msg)->fresh = 1;
		resume(tid, 0);
		return;
	}
	if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
		modules_map_changed(pm);
		unwinder_maps_changed(uw);
		resume(tid, 0);
		return;
	}
	/* the first SIGSTOP of a thread added at its clone event */
	if (sig == SIGSTOP && t->fresh) {
		t->fresh = 0;
		resume(tid, 0);
		return;
	}
	resume(tid, sig == SIGTRAP ? 0 : sig);
}

static struct func *func_get(struct func **funcs, size_t *n, size_t *cap, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*funcs)[i].name, name))
			return &(*funcs)[i];
	*funcs = xgrowarray(*funcs, cap, *n + 1, sizeof(**funcs));
	(*funcs)[*n].name = xstrdup(name);
	(*funcs)[*n].self = (*funcs)[*n].total = 0;
	return &(*funcs)[(*n)++];
}

/* The functions of stack id, leaf first, inlined frames included. */
static int stack_names(struct symbolizer *sz, uint32_t id, const char **names, int max)
{
	const struct stack_frame *frames;
	int depth, n = 0;

	if (stack_table_get(st, id, &frames, &depth) < 0)
		return 0;
	for (int i = 0; i < depth; i++) {
		const struct sym_info *si = symbolizer_lookup(sz, frames[i].module, frames[i].addr);

		for (int j = 0; j < si->nframes && n < max; j++)
			names[n++] = si->frames[j].function ? si->frames[j].function : "[unknown]";
	}
	return n;
}

static void print_results(int print_stacks)
{
	struct symbolizer *sz = symbolizer_new(0);
	struct func *funcs = NULL;
	size_t nfuncs = 0, cap = 0;
	uint64_t count = 0, samples = 0, lost = 0, throttles = 0;
	double total = 0;
	const char *names[UNWIND_MAX_DEPTH * 4];

	for (int i = 0; i < nthreads; i++) {
		struct thread *t = &threads[i];
		double scale = perf_sample_scale(&t->pt, t->count), tb = 0;

		for (size_t id = 0; id < t->nbytes; id++) {
			double b = (double)t->bytes[id] * scale;
			int n;

			if (!t->bytes[id])
				continue;
			tb += b;
			n = stack_names(sz, (uint32_t)id, names, (int)(sizeof(names) / sizeof(*names)));
			if (print_stacks) {
				printf("stack %.0f:", b);
				for (int k = 0; k < n; k++)
					printf(" %s", names[k]);
				printf("\n");
			}
			for (int k = 0; k < n; k++) {
				int seen = 0;

				for (int m = 0; m < k; m++)
					seen |= !strcmp(names[m], names[k]);
				if (!seen)
					func_get(&funcs, &nfuncs, &cap, names[k])->total += b;
			}
			func_get(&funcs, &nfuncs, &cap, n ? names[0] : "[none]")->self += b;
		}
		printf("thread %d: count %" PRIu64 " samples %" PRIu64 " lost %" PRIu64
		       " throttles %" PRIu64 " bytes %.0f%s\n", i, t->count, t->pt.samples,
		       t->pt.lost, t->pt.throttles, tb, t->pt.user_only ? " user-only" : "");
		count += t->count;
		samples += t->pt.samples;
		lost += t->pt.lost;
		throttles += t->pt.throttles;
		total += tb;
		free(t->bytes);
	}
	for (size_t i = 0; i < nfuncs; i++) {
		printf("function %s self %.0f total %.0f\n", funcs[i].name, funcs[i].self,
		       funcs[i].total);
		free(funcs[i].name);
	}
	printf("total count %" PRIu64 " samples %" PRIu64 " lost %" PRIu64 " throttles %"
	       PRIu64 " bytes %.0f\n", count, samples, lost, throttles, total);
	free(funcs);
	symbolizer_free(sz);
}

/* -o: what opening the events of a thread gives, alone. */
static int open_only(pid_t tid)
{
	struct perf_thread pt;

	if (perf_thread_open(&pt, tid, &config) < 0) {
		fprintf(stderr, "perf-faults: %s\n", perf_open_reason(errno));
		return 77;
	}
	perf_thread_close(&pt);
	return 0;
}

int main(int argc, char **argv)
{
	const char *kind_name = "libdw";
	int opt, kind, status, verbose = 0, print_stacks = 0, sfd, exit_status = -1;
	sigset_t mask;

	while ((opt = getopt(argc, argv, "e:c:s:r:u:o:Sv")) != -1) {
		switch (opt) {
		case 'e':
			kind = perf_fault_kind_from_name(optarg);
			if (kind < 0)
				usage();
			config.kind = (enum perf_fault_kind)kind;
			break;
		case 'c':
			config.period = strtoull(optarg, NULL, 0);
			if (!config.period)
				usage();
			break;
		case 's':
			config.stack_bytes = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			config.ring_bytes = strtoul(optarg, NULL, 0) << 10;
			break;
		case 'u':
			kind_name = optarg;
			break;
		case 'o':
			return open_only((pid_t)strtol(optarg, NULL, 0));
		case 'S':
			print_stacks = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	kind = unwind_kind_from_name(kind_name);
	if (kind < 0)
		usage();
	if (!unwind_kind_available(kind)) {
		fprintf(stderr, "perf-faults: --unwind=%s not compiled in\n", kind_name);
		return 77;
	}
	page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		perror("perf-faults: signalfd");
		return 99;
	}
	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(77);
		execv(argv[optind], &argv[optind]);
		_exit(127);
	}
	/* the exec stop: nothing of the new image has run */
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "perf-faults: %s did not start (status %#x)\n",
			argv[optind], status);
		return WIFEXITED(status) && WEXITSTATUS(status) == 77 ? 77 : 99;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0) {
		perror("perf-faults: PTRACE_SETOPTIONS");
		return 99;
	}
	pm = proc_modules_new(pid);
	uw = unwinder_new(kind, pid, pm);
	st = stack_table_new(0);
	if (!uw) {
		fprintf(stderr, "perf-faults: unwinder_new(%s): %s\n", kind_name, strerror(errno));
		kill(pid, SIGKILL);
		return 77;
	}
	thread_add(pid);
	resume(pid, 0);

	while (nlive > 0) {
		struct pollfd pfd[MAX_THREADS + 1];
		struct signalfd_siginfo ssi;
		int n = 0;
		pid_t w;

		while ((w = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
			if (w == pid && (WIFEXITED(status) || WIFSIGNALED(status)))
				exit_status = status;
			on_stop(w, status);
		}
		if (w < 0 && errno == ECHILD)
			break;
		for (int i = 0; i < nthreads; i++)
			if (threads[i].live)
				thread_drain(&threads[i]);
		unwind_queued();
		pfd[n].fd = sfd;
		pfd[n++].events = POLLIN;
		for (int i = 0; i < nthreads; i++)
			if (threads[i].live) {
				pfd[n].fd = threads[i].pt.sample_fd;
				pfd[n++].events = POLLIN;
			}
		if (poll(pfd, (nfds_t)n, 100) < 0 && errno != EINTR) {
			perror("perf-faults: poll");
			return 99;
		}
		while (read(sfd, &ssi, sizeof(ssi)) == (ssize_t)sizeof(ssi))
			;
	}
	for (int i = 0; i < nthreads; i++)
		if (threads[i].live)
			thread_gone(&threads[i]);

	if (exit_status < 0 || WIFSIGNALED(exit_status) || WEXITSTATUS(exit_status) != 0) {
		fprintf(stderr, "perf-faults: %s failed (status %#x)\n", argv[optind], exit_status);
		return 99;
	}
	print_results(print_stacks);
	if (verbose)
		fprintf(stderr, "perf-faults: %" PRIu64 " samples, ns each: %.0f drain, "
			"%.0f unwind + intern; %" PRIu64 " walks, %" PRIu64 " failures, "
			"%u stacks\n", drained, drained ? (double)drain_ns / (double)drained : 0.0,
			drained ? (double)unwind_ns / (double)drained : 0.0,
			uw->walks, uw->failures, stack_table_count(st));
	unwinder_free(uw);
	proc_modules_free(pm);
	stack_table_free(st);
	stack_snapshot_release(&snap);
	for (size_t i = 0; i < queue_cap; i++)
		free(queue[i].stack);
	free(queue);
	modules_release_all();
	return 0;
}

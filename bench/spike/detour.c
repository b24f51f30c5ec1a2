/*
 * detour.c - detour-spike: run a command with malloc and free of its
 * libc detoured to an in-target stub (stubs.S), measure what it costs.
 *
 *   detour-spike [OPTIONS] -- COMMAND [ARGS...]
 *
 * The command is launched stopped, seized, and run to its program entry
 * (a one-shot int3 at AT_ENTRY: libc is mapped, one thread exists).
 * There, the stub page and the ring are mapped by injected syscalls,
 * the stubs written, the entries patched; then the command runs with no
 * stop per call while this process drains the ring.  At the command's
 * exit (PTRACE_EVENT_EXIT of its main thread, memory still there) the
 * counters are read and printed on stderr as one line:
 *
 *   SPIKE variant=... calls=... bytes=... frees=... kept=... ...
 *
 * --detach-after=S restores the entries S seconds in, with every thread
 * stopped, and lets the command finish untraced (the pages stay).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/ptrace.h>

#include "elfsym.h"
#include "error.h"
#include "patch.h"
#include "probe-abi.h"
#include "procfs.h"
#include "remote.h"
#include "ring.h"
#include "xmalloc.h"

extern const uint8_t spike_page[], spike_page_end[];
extern const uint8_t spike_malloc_orig[], spike_free_orig[];
extern const uint8_t stub_count[], stub_count_slot[], stub_count_nolock[],
	stub_filter[], stub_keep[], stub_sample[], stub_result[], stub_free[];

static const struct variant {
	const char *name;
	const uint8_t *entry;
	int keeps;		/* writes ring records */
} variants[] = {
	{ "count", stub_count, 0 },
	{ "slot", stub_count_slot, 0 },
	{ "nolock", stub_count_nolock, 0 },
	{ "filter", stub_filter, 0 },
	{ "keep", stub_keep, 1 },
	{ "sample", stub_sample, 1 },
	{ "result", stub_result, 1 },
};

static struct {
	const struct variant *v;
	uint64_t min_size, copy_len, nrec, sample_mean, wait_spins;
	int memcpy_copy, tid_tcb, drain;
	double detach_after;
	unsigned poll_us;
} opt = {
	.v = &variants[0], .copy_len = 512, .nrec = 4096, .sample_mean = 65536,
	.wait_spins = 64, .drain = 1, .poll_us = 200,
};

struct target {
	pid_t pid;
	uint64_t syscall_insn;
	uint64_t page, ring, commit;	/* in the target */
	uint64_t rec_size;
	struct patch pm, pf;		/* malloc, free */
	int patched;
	struct ring_reader rr;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: detour-spike [OPTIONS] -- COMMAND [ARGS...]\n"
"  --variant=V        count slot nolock filter keep sample result [count]\n"
"  --min-size=N       filter threshold (filter, keep, result) [0]\n"
"  --copy=N           bytes of stack per record [512]\n"
"  --copy-mode=M      vmreadv (process_vm_readv) or memcpy (rep movsb) [vmreadv]\n"
"  --tid=M            syscall (gettid) or tcb (glibc's struct pthread) [syscall]\n"
"  --ring=N           records in the ring, a power of 2 [4096]\n"
"  --sample-mean=N    mean bytes between samples (sample) [65536]\n"
"  --wait=N           sched_yield()s on a full ring before a drop [64]\n"
"  --no-drain         never read the ring (it fills: drops)\n"
"  --poll-us=N        sleep between empty drains [200]\n"
"  --detach-after=S   restore the entries after S seconds, let it finish\n");
}

static uint64_t num_arg(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		usage_error("bad %s '%s'", what, s);
	return v;
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "min-size", required_argument, NULL, 'm' },
		{ "copy", required_argument, NULL, 'c' },
		{ "copy-mode", required_argument, NULL, 'C' },
		{ "tid", required_argument, NULL, 't' },
		{ "ring", required_argument, NULL, 'r' },
		{ "sample-mean", required_argument, NULL, 's' },
		{ "wait", required_argument, NULL, 'w' },
		{ "no-drain", no_argument, NULL, 'n' },
		{ "poll-us", required_argument, NULL, 'p' },
		{ "detach-after", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	size_t i;

	while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		switch (c) {
		case 'v':
			for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
				if (!strcmp(optarg, variants[i].name))
					break;
			if (i == sizeof(variants) / sizeof(variants[0]))
				usage_error("unknown variant '%s'", optarg);
			opt.v = &variants[i];
			break;
		case 'm': opt.min_size = num_arg(optarg, "--min-size"); break;
		case 'c': opt.copy_len = num_arg(optarg, "--copy"); break;
		case 'C':
			if (strcmp(optarg, "vmreadv") && strcmp(optarg, "memcpy"))
				usage_error("bad --copy-mode '%s'", optarg);
			opt.memcpy_copy = !strcmp(optarg, "memcpy");
			break;
		case 't':
			if (strcmp(optarg, "syscall") && strcmp(optarg, "tcb"))
				usage_error("bad --tid '%s'", optarg);
			opt.tid_tcb = !strcmp(optarg, "tcb");
			break;
		case 'r': opt.nrec = num_arg(optarg, "--ring"); break;
		case 's': opt.sample_mean = num_arg(optarg, "--sample-mean"); break;
		case 'w': opt.wait_spins = num_arg(optarg, "--wait"); break;
		case 'n': opt.drain = 0; break;
		case 'p': opt.poll_us = (unsigned)num_arg(optarg, "--poll-us"); break;
		case 'd': opt.detach_after = atof(optarg); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (optind >= argc)
		usage_error("no command");
	if (!opt.nrec || (opt.nrec & (opt.nrec - 1)) || opt.nrec > (1u << 20))
		usage_error("--ring must be a power of 2 up to 1M");
	if (opt.copy_len > (1u << 20) || opt.copy_len % 8)
		usage_error("--copy must be a multiple of 8 up to 1M");
}

/* ---- launching ---- */

static int wait_stop(pid_t tid, int *status)
{
	for (;;) {
		if (waitpid(tid, status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		return 0;
	}
}

/* Fork, exec stopped, seize, and run to the program entry. */
static pid_t launch(char **argv)
{
	struct user_regs_struct regs;
	uint64_t entry;
	uint8_t orig, trap = 0xcc;
	int st;
	pid_t pid = fork();

	if (pid < 0)
		perror_msg_and_die("fork");
	if (pid == 0) {
		raise(SIGSTOP);
		execvp(argv[0], argv);
		perror_msg("exec '%s'", argv[0]);
		_exit(EXIT_NOTFOUND);
	}
	if (waitpid(pid, &st, WUNTRACED) < 0 || !WIFSTOPPED(st))
		error_msg_and_die("child %d did not stop", pid);
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT) < 0)
		perror_msg_and_die("PTRACE_SEIZE");
	kill(pid, SIGCONT);
	for (;;) {
		int sig = 0;

		if (wait_stop(pid, &st) < 0 || !WIFSTOPPED(st))
			error_msg_and_die("'%s' ended before its exec", argv[0]);
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			break;
		if (st >> 16 == 0 && WSTOPSIG(st) != SIGSTOP)
			sig = WSTOPSIG(st);
		ptrace(PTRACE_CONT, pid, 0, sig);
	}
	entry = procfs_auxv_entry(pid);
	if (!entry || remote_read(pid, -1, entry, &orig, 1) < 0 ||
	    remote_write(pid, -1, pid, entry, &trap, 1) < 0)
		error_msg_and_die("cannot break at the entry of '%s'", argv[0]);
	ptrace(PTRACE_CONT, pid, 0, 0);
	if (wait_stop(pid, &st) < 0 || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP ||
	    ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0 || regs.rip != entry + 1)
		error_msg_and_die("'%s' did not reach its entry", argv[0]);
	regs.rip = entry;
	if (remote_write(pid, -1, pid, entry, &orig, 1) < 0 ||
	    ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
		error_msg_and_die("cannot restore the entry of '%s'", argv[0]);
	return pid;
}

/* ---- installing ---- */

static void plan(struct target *t, struct elfsym_proc *ep, const char *name, struct patch *p)
{
	struct elfsym_result r;
	const char *why = "";
	uint8_t *buf;
	size_t size;

	if (elfsym_lookup(ep, name, NULL, &r) < 0 || r.ifunc)
		error_msg_and_die("no %s in the target", name);
	size = r.size ? r.size : 64;
	if (size > 65536)
		size = 65536;
	buf = xmalloc(size);
	if (remote_read(t->pid, -1, r.addr, buf, size) < 0)
		error_msg_and_die("cannot read %s", name);
	if (patch_plan(r.addr, buf, size, p, &why) < 0)
		error_msg_and_die("cannot detour %s: %s", name, why);
	free(buf);
	fprintf(stderr, "detour-spike: %s at %#" PRIx64 " in %s: %u bytes, %u instructions%s\n",
		name, r.addr, r.module->path, p->len, p->ninsns, p->endbr ? " after endbr64" : "");
}

static int64_t inject(struct target *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	const uint64_t args[6] = { a0, a1, a2, 0, 0, 0 };
	struct remote_result res;
	int err = remote_syscall(t->pid, t->syscall_insn, nr, args, &res);

	return err < 0 ? err : res.ret;
}

/* The offset of the thread's tid in glibc's struct pthread, from %fs. */
static uint64_t tcb_tid_offset(pid_t pid)
{
	struct user_regs_struct regs;
	int32_t buf[1024];

	if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0 ||
	    remote_read(pid, -1, regs.fs_base, buf, sizeof(buf)) < 0)
		return 0;
	for (size_t i = 0x100 / 4; i < 1024; i++)
		if (buf[i] == pid)
			return i * 4;
	return 0;
}

static void install(struct target *t)
{
	struct elfsym_proc *ep = elfsym_proc_load(t->pid);
	struct procfs_map *maps;
	size_t n;
	uint64_t lo, hi, hole, data[PA_PAGE / 8] = { 0 }, ringsz, tid_off = 0;
	uint8_t code[PA_PAGE], jm[32], jf[32];
	struct remote_result res;
	int64_t got;

	if (!ep)
		perror_msg_and_die("reading the objects of %d", t->pid);
	plan(t, ep, "malloc", &t->pm);
	plan(t, ep, "free", &t->pf);
	elfsym_proc_free(ep);
	if (remote_find_syscall_insn(t->pid, &t->syscall_insn) < 0)
		error_msg_and_die("no syscall instruction in the target");

	/* the stub page within reach of both functions and their rip targets */
	lo = t->pm.site < t->pf.site ? t->pm.site : t->pf.site;
	hi = (t->pm.site > t->pf.site ? t->pm.site : t->pf.site) + 32;
	for (int k = 0; k < 2; k++) {
		const struct patch *p = k ? &t->pf : &t->pm;

		for (unsigned i = 0; i < p->ninsns; i++) {
			if (!p->insns[i].riprel && p->insns[i].kind != BPI_JCC)
				continue;
			if (p->insns[i].target < lo)
				lo = p->insns[i].target;
			if (p->insns[i].target >= hi)
				hi = p->insns[i].target + 1;
		}
	}
	if (procfs_read_maps(t->pid, &maps, &n) < 0)
		perror_msg_and_die("maps of %d", t->pid);
	hole = patch_find_hole(maps, n, lo, hi, PA_MAP_SIZE);
	procfs_maps_free(maps);
	if (!hole)
		error_msg_and_die("no room for the stub page within 2 GiB of libc");
	got = remote_mmap(t->pid, t->syscall_insn, hole, PA_MAP_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, &res);
	if (got < 0 || (uint64_t)got != hole)
		error_msg_and_die("mmap of the stub page: %" PRId64, got);
	t->page = hole;
	t->rec_size = R_STACK + opt.copy_len;
	ringsz = (opt.nrec * (t->rec_size + 8) + PA_PAGE - 1) & ~(uint64_t)(PA_PAGE - 1);
	got = remote_mmap(t->pid, t->syscall_insn, 0, ringsz, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, &res);
	if (got < 0 && got > -4096)
		error_msg_and_die("mmap of the ring: %" PRId64, got);
	t->commit = (uint64_t)got;
	t->ring = t->commit + opt.nrec * 8;

	/* code: the templates, the relocated entries */
	memcpy(code, spike_page, PA_PAGE);
	if (patch_relocate(&t->pm, t->page + (uint64_t)(spike_malloc_orig - spike_page),
			   code + (spike_malloc_orig - spike_page)) < 0 ||
	    patch_relocate(&t->pf, t->page + (uint64_t)(spike_free_orig - spike_page),
			   code + (spike_free_orig - spike_page)) < 0)
		error_msg_and_die("cannot relocate the entries");
	if (remote_write(t->pid, -1, t->pid, t->page, code, PA_PAGE) < 0)
		error_msg_and_die("cannot write the stub page");
	got = inject(t, SYS_mprotect, t->page, PA_PAGE, PROT_READ | PROT_EXEC);
	if (got < 0)
		error_msg_and_die("mprotect of the stub page: %" PRId64, got);

	/* data */
	if (opt.tid_tcb && !(tid_off = tcb_tid_offset(t->pid)))
		error_msg_and_die("no tid in the thread's TCB");
	data[D_MIN_SIZE / 8] = opt.min_size;
	data[D_PID / 8] = (uint64_t)t->pid;
	data[D_RING / 8] = t->ring;
	data[D_COMMIT / 8] = t->commit;
	data[D_NREC / 8] = opt.nrec;
	data[D_MASK / 8] = opt.nrec - 1;
	data[D_REC_SIZE / 8] = t->rec_size;
	data[D_COPY_LEN / 8] = opt.copy_len;
	data[D_STALL_TAIL / 8] = ~(uint64_t)0;
	data[D_TID_OFF / 8] = tid_off;
	data[D_WAIT_SPINS / 8] = opt.wait_spins;
	data[D_COPY_MODE / 8] = (uint64_t)opt.memcpy_copy;
	srand48(getpid());
	for (int i = 0; i < D_NIVALS; i++)
		data[D_IVALS / 8 + i] = (uint64_t)(-(double)opt.sample_mean * log(1.0 - drand48())) + 1;
	data[D_COUNTDOWN / 8] = data[D_IVALS / 8 + D_NIVALS - 1];
	if (remote_write(t->pid, -1, t->pid, t->page + PA_DATA, data, sizeof(data)) < 0)
		error_msg_and_die("cannot write the data page");

	/* the entries, last: the only bytes of the target's code we change */
	if (patch_jmp(&t->pm, t->page + (uint64_t)(opt.v->entry - spike_page), jm) < 0 ||
	    patch_jmp(&t->pf, t->page + (uint64_t)(stub_free - spike_page), jf) < 0 ||
	    remote_write(t->pid, -1, t->pid, t->pm.site, jm, t->pm.len) < 0 ||
	    remote_write(t->pid, -1, t->pid, t->pf.site, jf, t->pf.len) < 0)
		error_msg_and_die("cannot patch the entries");
	t->patched = 1;
	ring_reader_init(&t->rr, t->pid, t->page + PA_DATA, t->ring, t->commit, opt.nrec,
			 t->rec_size);
	fprintf(stderr, "detour-spike: stub page %#" PRIx64 ", ring %#" PRIx64 " (%" PRIu64
		" x %" PRIu64 " bytes), variant %s%s\n", t->page, t->commit, opt.nrec,
		t->rec_size, opt.v->name, tid_off ? ", tid from the TCB" : "");
}

/* ---- the counters ---- */

static void report(struct target *t, const char *when)
{
	uint64_t d[PA_PAGE / 8], s[PA_PAGE / 8], scalls = 0, sbytes = 0;
	struct rusage ru;
	double cpu;
	int used = 0;

	if (remote_read(t->pid, -1, t->page + PA_DATA, d, sizeof(d)) < 0 ||
	    remote_read(t->pid, -1, t->page + PA_SLOTS, s, sizeof(s)) < 0) {
		error_msg("cannot read the counters %s", when);
		return;
	}
	for (int i = 0; i < S_NSLOTS; i++) {
		uint64_t c = s[(i << S_SHIFT) / 8 + S_CALLS / 8];

		scalls += c;
		sbytes += s[(i << S_SHIFT) / 8 + S_BYTES / 8];
		used += c != 0;
	}
	getrusage(RUSAGE_SELF, &ru);
	cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	fprintf(stderr, "SPIKE when=%s variant=%s copy=%" PRIu64 " calls=%" PRIu64
		" bytes=%" PRIu64 " frees=%" PRIu64 " slot_calls=%" PRIu64 " slot_bytes=%"
		PRIu64 " slots_used=%d kept=%" PRIu64 " kept_bytes=%" PRIu64 " dropped=%"
		PRIu64 " head=%" PRIu64 " drained=%" PRIu64 " drained_bytes=%" PRIu64
		" bad=%" PRIu64 " short=%" PRIu64 " drains=%" PRIu64 " drain_syscalls=%"
		PRIu64 " drain_ns_per_rec=%.1f tracer_cpu_ns_per_rec=%.1f\n",
		when, opt.v->name, opt.copy_len, d[D_CALLS / 8], d[D_BYTES / 8],
		d[D_FREES / 8], scalls, sbytes, used, d[D_KEPT_CALLS / 8],
		d[D_KEPT_BYTES / 8], d[D_DROPPED / 8], d[D_HEAD / 8], t->rr.records,
		t->rr.bytes, t->rr.bad, t->rr.copied_short, t->rr.drains, t->rr.syscalls,
		t->rr.records ? (double)t->rr.ns / t->rr.records : 0.0,
		t->rr.records ? cpu / t->rr.records : 0.0);
}

/* ---- detaching ---- */

struct tlist {
	pid_t *tids;
	size_t n, cap;
};

static int tlist_has(const struct tlist *l, pid_t tid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->tids[i] == tid)
			return 1;
	return 0;
}

/* Seize and stop every thread (the main one is seized already). */
static void stop_all(pid_t pid, struct tlist *l)
{
	char path[64];
	int again = 1;

	while (again) {
		DIR *d;
		struct dirent *e;

		again = 0;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		if (!(d = opendir(path)))
			return;
		while ((e = readdir(d))) {
			pid_t tid = atoi(e->d_name);
			int st;

			if (tid <= 0 || tlist_has(l, tid))
				continue;
			if (tid != pid && ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
				continue;	/* exiting */
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
				continue;
			/* the main thread may report other stops first: pass them */
			while (wait_stop(tid, &st) == 0 && WIFSTOPPED(st) &&
			       st >> 16 != PTRACE_EVENT_STOP) {
				int sig = st >> 16 ? 0 : WSTOPSIG(st);

				ptrace(PTRACE_CONT, tid, 0, sig);
			}
			l->tids = xgrowarray(l->tids, &l->cap, l->n + 1, sizeof(pid_t));
			l->tids[l->n++] = tid;
			again = 1;	/* it may have made threads meanwhile */
		}
		closedir(d);
	}
}

static int in_patch(const struct patch *p, uint64_t pc)
{
	return pc > p->site && pc < p->site + p->len;
}

/*
 * Restore the entries with every thread stopped; a thread may be in the
 * stub page (it stays mapped: its relocated code jumps back into the
 * function), never inside the 5 bytes (they were written with all
 * threads stopped and nothing branches there).
 */
static void detach(struct target *t)
{
	struct tlist l = { 0 };
	uint64_t t0 = now_ns();
	int in_stub = 0;

	stop_all(t->pid, &l);
	for (size_t i = 0; i < l.n; i++) {
		struct user_regs_struct regs;

		if (ptrace(PTRACE_GETREGS, l.tids[i], 0, &regs) < 0)
			continue;
		if (in_patch(&t->pm, regs.rip) || in_patch(&t->pf, regs.rip))
			error_msg_and_die("thread %d inside a patch at %#llx", l.tids[i], regs.rip);
		in_stub += regs.rip >= t->page && regs.rip < t->page + PA_PAGE;
	}
	if (remote_write(t->pid, -1, l.tids[0], t->pm.site, t->pm.orig, t->pm.len) < 0 ||
	    remote_write(t->pid, -1, l.tids[0], t->pf.site, t->pf.orig, t->pf.len) < 0)
		error_msg_and_die("cannot restore the entries");
	t->patched = 0;
	if (opt.drain)
		while (ring_drain(&t->rr) > 0)
			;
	report(t, "detach");
	for (size_t i = 0; i < l.n; i++)
		ptrace(PTRACE_DETACH, l.tids[i], 0, 0);
	fprintf(stderr, "detour-spike: restored and detached %zu threads (%d in the stub page)"
		" in %.0f us\n", l.n, in_stub, (now_ns() - t0) / 1e3);
	free(l.tids);
}

/* ---- running ---- */

static int run(struct target *t)
{
	uint64_t detach_at = opt.detach_after > 0 ?
		now_ns() + (uint64_t)(opt.detach_after * 1e9) : 0;
	const struct timespec poll = { 0, (long)opt.poll_us * 1000 };
	int st, traced = 1;

	ptrace(PTRACE_CONT, t->pid, 0, 0);
	for (;;) {
		pid_t w = waitpid(t->pid, &st, __WALL | (traced ? WNOHANG : 0));
		long got = 0;

		if (w < 0 && errno != EINTR)
			perror_msg_and_die("waitpid");
		if (w == t->pid) {
			if (WIFEXITED(st))
				return WEXITSTATUS(st);
			if (WIFSIGNALED(st))
				return 128 + WTERMSIG(st);
			if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
				if (opt.drain)
					while (ring_drain(&t->rr) > 0)
						;
				report(t, "exit");
				traced = 0;
				ptrace(PTRACE_CONT, t->pid, 0, 0);
				continue;
			}
			ptrace(PTRACE_CONT, t->pid, 0, st >> 16 ? 0 : WSTOPSIG(st));
			continue;
		}
		if (!traced)
			continue;
		if (detach_at && now_ns() >= detach_at) {
			detach(t);
			traced = 0;
			continue;
		}
		if (opt.drain && t->patched)
			got = ring_drain(&t->rr);
		if (got <= 0)
			nanosleep(&poll, NULL);
	}
}

int main(int argc, char **argv)
{
	struct target t = { 0 };
	int code;

	program_name = "detour-spike";
	parse_args(argc, argv);
	t.pid = launch(argv + optind);
	install(&t);
	code = run(&t);
	ring_reader_free(&t.rr);
	return code;
}

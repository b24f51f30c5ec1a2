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
 * stop per call while this process drains the ring.  Threads are traced
 * for their first stop (clone events: an entry in the stub page's stack
 * table) and their exit stop (the entry cleared).  At the command's
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
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
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

#include "probe/elfsym.h"
#include "probe/hole.h"
#include "util/error.h"
#include "patch.h"
#include "probe-abi.h"
#include "linux/procfs.h"
#include "probe/remote.h"
#include "ring.h"
#include "util/xmalloc.h"

extern const uint8_t spike_page[], spike_page_end[];
extern const uint8_t spike_malloc_orig[], spike_free_orig[];
extern const uint8_t stub_count[], stub_count_slot[], stub_count_nolock[],
	stub_filter[], stub_keep[], stub_sample[], stub_result[], stub_free[],
	stub_free_slot[], stub_free_nolock[];

static const struct variant {
	const char *name;
	const uint8_t *entry;
	const uint8_t *free_entry;
} variants[] = {
	{ "count", stub_count, stub_free },
	{ "slot", stub_count_slot, stub_free_slot },
	{ "nolock", stub_count_nolock, stub_free_nolock },
	{ "filter", stub_filter, stub_free },
	{ "keep", stub_keep, stub_free },
	{ "sample", stub_sample, stub_free },
	{ "result", stub_result, stub_free },
};

static struct {
	const struct variant *v;
	uint64_t min_size, copy_len, nrec, sample_mean, wait_spins;
	int memcpy_copy, tid_tcb, drain, overwrite, shared;
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
	void *shared;			/* our mapping of the ring (--shared) */
	struct patch pm, pf;		/* malloc, free */
	int patched;
	struct ring_reader rr;
	uint64_t keys[K_NENT];		/* the stack page's keys, as written */
	struct thread *th;
	size_t nth, thcap;
	uint64_t stack_rlimit;		/* how far below its top the main stack may grow */
};

struct thread {
	pid_t tid;
	uint64_t key;			/* %fs base; 0 before the first stop */
	int stopped;			/* detach: in a stop */
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
"  --copy-mode=M      vmreadv (process_vm_readv) or memcpy (rep movsb within\n"
"                     the thread's stack, known from its first stop) [vmreadv]\n"
"  --tid=M            syscall (gettid) or tcb (glibc's struct pthread, offset\n"
"                     from libc's _thread_db_pthread_tid) [syscall]\n"
"  --ring=N           records in the ring, a power of 2 [4096]\n"
"  --sample-mean=N    mean bytes between samples (sample) [65536]\n"
"  --wait=N           sched_yield()s on a full ring before a drop [64]\n"
"  --no-drain         never read the ring (it fills: drops)\n"
"  --shared           the ring is a memfd mapped here too: drained in place\n"
"  --overwrite        (measuring) the ring never fills: records overwrite\n"
"                     the oldest, nothing is read; the producer's cost alone\n"
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
		{ "overwrite", no_argument, NULL, 'o' },
		{ "shared", no_argument, NULL, 'S' },
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
		case 'o': opt.overwrite = 1; opt.drain = 0; break;
		case 'S': opt.shared = 1; break;
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
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
						  PTRACE_O_TRACECLONE) < 0)
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

static const struct elfsym_module *plan(struct target *t, struct elfsym_proc *ep,
					const char *name, struct patch *p)
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
	return r.module;
}

static int64_t inject6(struct target *t, long nr, const uint64_t args[6])
{
	struct remote_result res;
	int err = remote_syscall(t->pid, t->syscall_insn, nr, args, &res);

	return err < 0 ? err : res.ret;
}

static int64_t inject(struct target *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	const uint64_t args[6] = { a0, a1, a2, 0, 0, 0 };

	return inject6(t, nr, args);
}

/*
 * The offset of the tid in glibc's struct pthread (from %fs), from the
 * descriptor that glibc exports for libthread_db: {bits, count, offset}.
 */
static uint64_t tcb_tid_offset(struct target *t, const struct elfsym_module *libc)
{
	char path[4096];
	struct elfsym_image *img;
	uint64_t value;
	uint32_t desc[3];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/root%s", t->pid, libc->path);
	if (!(img = elfsym_image_open(path)))
		return 0;
	err = elfsym_image_lookup(img, "_thread_db_pthread_tid", &value);
	elfsym_image_free(img);
	if (err < 0 || remote_read(t->pid, -1, value + libc->bias, desc, sizeof(desc)) < 0 ||
	    desc[0] != 32)
		return 0;
	return desc[2];
}

/* ---- threads and their stacks ---- */

static struct thread *thread_find(struct target *t, pid_t tid)
{
	for (size_t i = 0; i < t->nth; i++)
		if (t->th[i].tid == tid)
			return &t->th[i];
	return NULL;
}

static struct thread *thread_new(struct target *t, pid_t tid)
{
	struct thread *th = thread_find(t, tid);

	if (th)
		return th;
	t->th = xgrowarray(t->th, &t->thcap, t->nth + 1, sizeof(*t->th));
	th = &t->th[t->nth++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	return th;
}

static void thread_drop(struct target *t, pid_t tid)
{
	struct thread *th = thread_find(t, tid);

	if (th)
		*th = t->th[--t->nth];
}

static unsigned key_hash(uint64_t key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ULL) >> K_HASH_SHIFT);
}

/* Write lo and hi, then the key, of the entry of key (a free one if new). */
static void stack_set(struct target *t, uint64_t key, uint64_t lo, uint64_t hi)
{
	uint64_t at = t->page + PA_STACKS, e[2] = { lo, hi };
	unsigned h = key_hash(key), free_i = K_NENT;

	for (unsigned k = 0; k < K_PROBES; k++) {
		unsigned i = (h + k) & (K_NENT - 1);

		if (t->keys[i] == key) {
			free_i = i;
			break;
		}
		if (!t->keys[i] && free_i == K_NENT)
			free_i = i;
	}
	if (free_i == K_NENT)
		return;	/* its copies go through process_vm_readv */
	at += (uint64_t)free_i << K_SHIFT;
	if (t->keys[free_i] != key) {
		remote_write(t->pid, -1, 0, at + K_LO, e, sizeof(e));
		remote_write(t->pid, -1, 0, at + K_KEY, &key, sizeof(key));
		t->keys[free_i] = key;
	}
}

static void stack_clear(struct target *t, uint64_t key)
{
	unsigned h = key_hash(key);
	uint64_t zero = 0;

	for (unsigned k = 0; k < K_PROBES && key; k++) {
		unsigned i = (h + k) & (K_NENT - 1);

		if (t->keys[i] == key) {
			remote_write(t->pid, -1, 0, t->page + PA_STACKS +
				     ((uint64_t)i << K_SHIFT) + K_KEY, &zero, sizeof(zero));
			t->keys[i] = 0;
			return;
		}
	}
}

/*
 * At a thread's first stop: its %fs base and the mapping of its stack.
 * The main thread's stack grows down: its entry reaches the rlimit.
 */
static void thread_register(struct target *t, struct thread *th)
{
	struct user_regs_struct regs;
	struct procfs_map *maps;
	size_t n;

	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs) < 0 || !regs.fs_base)
		return;
	th->key = regs.fs_base;
	if (procfs_read_maps(t->pid, &maps, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = maps[i].start;

		if (regs.rsp < maps[i].start || regs.rsp >= maps[i].end)
			continue;
		if (maps[i].path && !strcmp(maps[i].path, "[stack]"))
			lo = maps[i].end - t->stack_rlimit;
		stack_set(t, th->key, lo, maps[i].end);
		break;
	}
	procfs_maps_free(maps);
}

static uint64_t stack_rlimit(pid_t pid)
{
	struct rlimit rl;

	if (prlimit(pid, RLIMIT_STACK, NULL, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 8ULL << 20;
	return rl.rlim_cur;
}

/*
 * Write the ring once from here: MAP_POPULATE is not enough under a
 * hypervisor that backs guest memory at its first write (first writes
 * cost ~10 us per page on the machine of bench/spike/README.md).
 */
static void prewarm(pid_t pid, uint64_t addr, uint64_t len)
{
	static uint8_t zero[1 << 20];

	for (uint64_t off = 0; off < len; off += sizeof(zero)) {
		uint64_t n = len - off < sizeof(zero) ? len - off : sizeof(zero);

		int err = remote_write(pid, -1, 0, addr + off, zero, n);

		if (err < 0) {
			error_msg("prewarm: %s", strerror(-err));
			return;
		}
	}
}

/*
 * The ring as a memfd mapped shared by the target and by us: created,
 * sized and mapped by injected syscalls, opened here through
 * /proc/PID/fd, then closed in the target.  A fork child of the target
 * gets no ring (MADV_DONTFORK) and a zeroed data page (MADV_WIPEONFORK,
 * done at the end of install()): NREC = 0, so its stubs only count and
 * drop, never touching a ring it does not have.
 */
static int64_t map_shared_ring(struct target *t, uint64_t len)
{
	static const char name[] = "memtap-ring";
	char path[64];
	int64_t fd, addr;
	int lfd;

	if (remote_write(t->pid, -1, t->pid, t->page + PA_DATA + D_NAME, name, sizeof(name)) < 0)
		error_msg_and_die("cannot write the memfd's name");
	fd = inject6(t, SYS_memfd_create, (uint64_t[6]){ t->page + PA_DATA + D_NAME, MFD_CLOEXEC });
	if (fd < 0)
		error_msg_and_die("memfd_create in the target: %s", strerror((int)-fd));
	if (inject6(t, SYS_ftruncate, (uint64_t[6]){ (uint64_t)fd, len }) < 0)
		error_msg_and_die("ftruncate of the ring");
	addr = inject6(t, SYS_mmap, (uint64_t[6]){ 0, len, PROT_READ | PROT_WRITE,
						   MAP_SHARED | MAP_POPULATE, (uint64_t)fd, 0 });
	snprintf(path, sizeof(path), "/proc/%d/fd/%" PRId64, t->pid, fd);
	lfd = open(path, O_RDWR);
	inject6(t, SYS_close, (uint64_t[6]){ (uint64_t)fd });
	if (addr < 0 && addr > -4096)
		return addr;
	if (lfd < 0)
		perror_msg_and_die("open %s", path);
	t->shared = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, lfd, 0);
	close(lfd);
	if (t->shared == MAP_FAILED)
		perror_msg_and_die("mmap of the shared ring");
	if (inject6(t, SYS_madvise, (uint64_t[6]){ (uint64_t)addr, len, MADV_DONTFORK }) < 0)
		error_msg_and_die("madvise(MADV_DONTFORK) of the ring");
	return addr;
}

static void install(struct target *t)
{
	struct elfsym_proc *ep = elfsym_proc_load(t->pid);
	struct procfs_map *maps;
	size_t n;
	uint64_t lo, hi, hole, data[PA_PAGE / 8] = { 0 }, ringsz, tid_off = 0;
	uint8_t code[PA_PAGE], jm[32], jf[32];
	const struct elfsym_module *libc;
	struct elfsym_result self;
	struct remote_result res;
	int64_t got;

	if (!ep)
		perror_msg_and_die("reading the objects of %d", t->pid);
	libc = plan(t, ep, "malloc", &t->pm);
	plan(t, ep, "free", &t->pf);
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
	hole = hole_find(maps, n, lo, hi, PA_MAP_SIZE);
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
	if (opt.shared) {
		got = map_shared_ring(t, ringsz);
	} else {
		/* populated: the stubs' first lap must not take the page faults */
		got = remote_mmap(t->pid, t->syscall_insn, 0, ringsz, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, &res);
	}
	if (got < 0 && got > -4096)
		error_msg_and_die("mmap of the ring: %" PRId64, got);
	t->commit = (uint64_t)got;
	t->ring = t->commit + opt.nrec * 8;
	if (!opt.shared)
		prewarm(t->pid, t->commit, ringsz);

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
	/* the libc that has the threads, wherever malloc came from */
	if (elfsym_lookup(ep, "pthread_self", NULL, &self) == 0)
		libc = self.module;
	if (opt.tid_tcb && !(tid_off = tcb_tid_offset(t, libc)))
		error_msg_and_die("no _thread_db_pthread_tid in the target's libc");
	data[D_MIN_SIZE / 8] = opt.min_size;
	data[D_PID / 8] = (uint64_t)t->pid;
	data[D_RING / 8] = t->ring;
	data[D_COMMIT / 8] = t->commit;
	data[D_NREC / 8] = opt.overwrite ? (uint64_t)1 << 62 : opt.nrec;
	data[D_MASK / 8] = opt.nrec - 1;
	data[D_REC_SIZE / 8] = t->rec_size;
	data[D_COPY_LEN / 8] = opt.copy_len;
	data[D_STALL_TAIL / 8] = ~(uint64_t)0;
	data[D_TID_OFF / 8] = tid_off;
	data[D_WAIT_SPINS / 8] = opt.wait_spins;
	data[D_COPY_MODE / 8] = (uint64_t)opt.memcpy_copy;
	elfsym_proc_free(ep);
	srand48(getpid());
	for (int i = 0; i < D_NIVALS; i++)
		data[D_IVALS / 8 + i] =
			(uint64_t)(-(double)opt.sample_mean * log(1.0 - drand48())) + 1;
	data[D_COUNTDOWN / 8] = data[D_IVALS / 8 + D_NIVALS - 1];
	if (remote_write(t->pid, -1, t->pid, t->page + PA_DATA, data, sizeof(data)) < 0)
		error_msg_and_die("cannot write the data page");

	/* the entries, last: the only bytes of the target's code we change */
	if (patch_jmp(&t->pm, t->page + (uint64_t)(opt.v->entry - spike_page), jm) < 0 ||
	    patch_jmp(&t->pf, t->page + (uint64_t)(opt.v->free_entry - spike_page), jf) < 0 ||
	    remote_write(t->pid, -1, t->pid, t->pm.site, jm, t->pm.len) < 0 ||
	    remote_write(t->pid, -1, t->pid, t->pf.site, jf, t->pf.len) < 0)
		error_msg_and_die("cannot patch the entries");
	if (opt.shared &&
	    inject(t, SYS_madvise, t->page + PA_DATA, PA_MAP_SIZE - PA_DATA, MADV_WIPEONFORK) < 0)
		error_msg_and_die("madvise(MADV_WIPEONFORK) of the data pages");
	t->patched = 1;
	t->stack_rlimit = stack_rlimit(t->pid);
	thread_register(t, thread_new(t, t->pid));
	ring_reader_init(&t->rr, t->pid, t->page + PA_DATA, t->ring, t->commit, opt.nrec,
			 t->rec_size);
	if (t->shared)
		ring_reader_share(&t->rr, t->shared);
	fprintf(stderr, "detour-spike: pid %d: stub page %#" PRIx64 ", ring %#" PRIx64 " (%" PRIu64
		" x %" PRIu64 " bytes), variant %s%s\n", t->pid, t->page, t->commit, opt.nrec,
		t->rec_size, opt.v->name, tid_off ? ", tid from the TCB" : "");
}

/* ---- the counters ---- */

static void report(struct target *t, const char *when)
{
	uint64_t d[PA_PAGE / 8], s[PA_PAGE / 8], scalls = 0, sbytes = 0, sfrees = 0;
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
		sfrees += s[(i << S_SHIFT) / 8 + S_FREES / 8];
		used += c != 0;
	}
	getrusage(RUSAGE_SELF, &ru);
	cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	fprintf(stderr, "SPIKE when=%s variant=%s copy=%" PRIu64 " calls=%" PRIu64
		" bytes=%" PRIu64 " frees=%" PRIu64 " slot_calls=%" PRIu64 " slot_bytes=%"
		PRIu64 " slots_used=%d kept=%" PRIu64 " kept_bytes=%" PRIu64 " dropped=%"
		PRIu64 " head=%" PRIu64 " drained=%" PRIu64 " drained_bytes=%" PRIu64
		" bad=%" PRIu64 " short=%" PRIu64 " copied_avg=%.0f copy_slow=%" PRIu64
		" drains=%" PRIu64 " drain_syscalls=%"
		PRIu64 " drain_ns_per_rec=%.1f drain_cpu_ns_per_rec=%.1f tracer_cpu_ns=%.0f\n",
		when, opt.v->name, opt.copy_len, d[D_CALLS / 8], d[D_BYTES / 8],
		d[D_FREES / 8] + sfrees, scalls, sbytes, used, d[D_KEPT_CALLS / 8],
		d[D_KEPT_BYTES / 8], d[D_DROPPED / 8], d[D_HEAD / 8], t->rr.records,
		t->rr.bytes, t->rr.bad, t->rr.copied_short,
		t->rr.records ? (double)t->rr.copied / t->rr.records : 0.0,
		d[D_COPY_SLOW / 8], t->rr.drains, t->rr.syscalls,
		t->rr.records ? (double)t->rr.ns / t->rr.records : 0.0,
		t->rr.records ? (double)t->rr.cpu_ns / t->rr.records : 0.0, cpu);
}

/* ---- running ---- */

/*
 * One wait status of a thread while the command runs.  Returns 1 when
 * the command has ended (*code set), else 0.  New threads are
 * registered at their first stop; exiting ones unregistered at their
 * exit stop; signals are passed on.  In a detach (t->detaching), an
 * interrupt stop leaves the thread stopped.
 */
static int detaching;

static int on_status(struct target *t, pid_t tid, int st, int *code)
{
	struct thread *th = thread_find(t, tid);
	int event = st >> 16, sig = 0;
	unsigned long msg;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		thread_drop(t, tid);
		if (tid != t->pid)
			return 0;
		*code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		return 1;
	}
	if (!WIFSTOPPED(st))
		return 0;
	if (!th) {
		th = thread_new(t, tid);	/* its first stop */
		thread_register(t, th);
		if (detaching) {
			th->stopped = 1;
			return 0;
		}
	} else if (!th->key) {
		thread_register(t, th);
	}
	switch (event) {
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0)
			thread_new(t, (pid_t)msg);
		break;
	case PTRACE_EVENT_EXIT:
		if (tid == t->pid && t->patched) {
			if (opt.drain)
				while (ring_drain(&t->rr) > 0)
					;
			report(t, "exit");
		}
		stack_clear(t, th->key);
		th->key = 0;
		if (detaching) {
			th->stopped = 1;
			return 0;
		}
		break;
	case PTRACE_EVENT_STOP:
		if (detaching) {
			th->stopped = 1;
			return 0;
		}
		break;
	case 0:
		sig = WSTOPSIG(st);
		break;
	default:
		break;
	}
	ptrace(PTRACE_CONT, tid, 0, sig);
	return 0;
}

/*
 * After the detach, while the command runs on: the entries hold their
 * original bytes, and the counters no longer move.
 */
static void verify_detached(struct target *t)
{
	uint8_t m[32], f[32];
	uint64_t before[2], after[2];
	const struct timespec pause = { 0, 200 * 1000 * 1000 };

	if (remote_read(t->pid, -1, t->page + PA_DATA + D_CALLS, before, sizeof(before)) < 0)
		return;
	nanosleep(&pause, NULL);
	if (remote_read(t->pid, -1, t->pm.site, m, t->pm.len) < 0 ||
	    remote_read(t->pid, -1, t->pf.site, f, t->pf.len) < 0 ||
	    remote_read(t->pid, -1, t->page + PA_DATA + D_CALLS, after, sizeof(after)) < 0)
		return;	/* it ended meanwhile */
	fprintf(stderr, "DETACH entries=%s calls_after=%" PRIu64 "\n",
		!memcmp(m, t->pm.orig, t->pm.len) && !memcmp(f, t->pf.orig, t->pf.len) ?
		"original" : "CHANGED", after[0] - before[0]);
}

static int in_patch(const struct patch *p, uint64_t pc)
{
	return pc > p->site && pc < p->site + p->len;
}

/*
 * Stop every thread, restore the entries, detach.  A thread may be in
 * the stub page (it stays mapped: its relocated code jumps back into the
 * function), never inside the bytes of a patch (written with all threads
 * stopped, and nothing branches there).  Returns 1 if the command ended
 * meanwhile (*code set).
 */
static int detach(struct target *t, int *code)
{
	uint64_t t0 = now_ns();
	int in_stub = 0, st, all;

	detaching = 1;
	for (size_t i = 0; i < t->nth; i++)
		ptrace(PTRACE_INTERRUPT, t->th[i].tid, 0, 0);
	do {
		pid_t w = waitpid(-1, &st, __WALL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			perror_msg_and_die("waitpid");
		}
		if (on_status(t, w, st, code))
			return 1;
		all = 1;
		for (size_t i = 0; i < t->nth; i++)
			all &= t->th[i].stopped;
	} while (!all);
	for (size_t i = 0; i < t->nth; i++) {
		struct user_regs_struct regs;

		if (ptrace(PTRACE_GETREGS, t->th[i].tid, 0, &regs) < 0)
			continue;
		if (in_patch(&t->pm, regs.rip) || in_patch(&t->pf, regs.rip))
			error_msg_and_die("thread %d inside a patch at %#llx", t->th[i].tid,
					  regs.rip);
		in_stub += regs.rip >= t->page && regs.rip < t->page + PA_PAGE;
	}
	if (remote_write(t->pid, -1, t->th[0].tid, t->pm.site, t->pm.orig, t->pm.len) < 0 ||
	    remote_write(t->pid, -1, t->th[0].tid, t->pf.site, t->pf.orig, t->pf.len) < 0)
		error_msg_and_die("cannot restore the entries");
	if (opt.drain)
		while (ring_drain(&t->rr) > 0)
			;
	report(t, "detach");
	t->patched = 0;
	for (size_t i = 0; i < t->nth; i++)
		ptrace(PTRACE_DETACH, t->th[i].tid, 0, 0);
	fprintf(stderr, "detour-spike: restored and detached %zu threads (%d in the stub page)"
		" in %.0f us\n", t->nth, in_stub, (now_ns() - t0) / 1e3);
	verify_detached(t);
	return 0;
}

static int run(struct target *t)
{
	uint64_t detach_at = opt.detach_after > 0 ?
		now_ns() + (uint64_t)(opt.detach_after * 1e9) : 0;
	const struct timespec poll = { 0, (long)opt.poll_us * 1000 };
	int st, code = 0, traced = 1;

	ptrace(PTRACE_CONT, t->pid, 0, 0);
	for (;;) {
		pid_t w;
		long got = 0;

		if (!traced) {
			/* detached: the command is our child still */
			if (waitpid(t->pid, &st, 0) < 0 && errno == EINTR)
				continue;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		while ((w = waitpid(-1, &st, __WALL | WNOHANG)) > 0)
			if (on_status(t, w, st, &code))
				return code;
		if (detach_at && now_ns() >= detach_at) {
			if (detach(t, &code))
				return code;
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

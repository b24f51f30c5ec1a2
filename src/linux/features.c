/*
 * features.c - the run-time feature table: MEMTAP_DISABLE, the probe,
 * and features lost at use.
 *
 * The probe asks the kernel, never its version:
 *   seccomp_filter        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL)
 *                         fails with EFAULT (the filter pointer) where
 *                         filters exist, EINVAL where they do not;
 *   map_fixed_noreplace   an mmap with MAP_FIXED_NOREPLACE over a page of
 *                         ours: EEXIST where the flag is known; an older
 *                         kernel ignores it and maps elsewhere (a hint);
 *   the ptrace ones and   on a child of ours that waits (ppoll() of
 *                         nothing: arm64 has no pause), in our memory
 *                         (CLONE_VM: no address space to copy): PTRACE_SEIZE
 *   the memory ones       with PTRACE_O_EXITKILL, PTRACE_INTERRUPT, then
 *                         at its stop PTRACE_GETSIGMASK, PTRACE_GET_
 *                         SYSCALL_INFO, process_vm_readv/writev of a word
 *                         and /proc/CHILD/mem read and written over a
 *                         read-only page (as breakpoints are written into
 *                         text).  The child is SIGKILLed and reaped.
 *   perf                  not probed here: -e faults opens its events per
 *                         thread and says once why the kernel refused;
 *                         MEMTAP_DISABLE=perf refuses them all.
 *   seccomp_entry         not probed: learnt from the first seccomp stop
 *                         and the syscall stop after it (syscalls.c);
 *                         assumed until then.
 *   pagemap_scan, kpageflags, smaps_thp
 *                         not probed: the ways to a fault's huge page
 *                         size, tried at the first fault (linux/thp.h).
 *   seccomp_get_filter, seccomp_filters
 *                         not probed: a process's seccomp filters and
 *                         their number, tried when memtap would make it
 *                         run a syscall (probe/sandbox.c).
 *   shared_ring           not probed: the in-target ring made a memfd
 *                         that memtap maps too, tried when a ring is made
 *                         (probe/detour-ring.c); else memtap reads it
 *                         with process_vm_readv.
 *   openat2               not probed: the lookup of a target's file
 *                         (linux/tfile.c), tried at use; else a walk
 *                         one component at a time.
 *   dl_debug_state        not probed, not the kernel's: the dynamic
 *                         linker's hook (trace/alloc-arm.c); off, a
 *                         command's probes go in at its entry point,
 *                         after the libraries' constructors.  Not in
 *                         "all": the results would not be the same.
 * When no child can be traced, the ptrace and memory features keep
 * "yes": the fallbacks are then taken at the first failure instead
 * (feature_lost()).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/ptrace.h>
#include <linux/seccomp.h>
#include "arch/arch.h"
#include "linux/features.h"
#include "util/error.h"

#ifndef MAP_FIXED_NOREPLACE
# define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef PTRACE_O_EXITKILL
# define PTRACE_O_EXITKILL (1 << 20)
#endif

enum state { UNKNOWN, YES, NO, FORCED_OFF, LOST, ASSUMED };

static const char *const names[F_NFEATURES] = {
	[F_PROCESS_VM_READV] = "process_vm_readv",
	[F_PROCESS_VM_WRITEV] = "process_vm_writev",
	[F_PROC_MEM] = "proc_mem",
	[F_PROC_MEM_WRITE] = "proc_mem_write",
	[F_GETSIGMASK] = "getsigmask",
	[F_MAP_FIXED_NOREPLACE] = "map_fixed_noreplace",
	[F_SECCOMP_FILTER] = "seccomp_filter",
	[F_SEIZE] = "seize",
	[F_EXITKILL] = "exitkill",
	[F_GET_SYSCALL_INFO] = "get_syscall_info",
	[F_PERF] = "perf",
	[F_SECCOMP_ENTRY] = "seccomp_entry",
	[F_PAGEMAP_SCAN] = "pagemap_scan",
	[F_KPAGEFLAGS] = "kpageflags",
	[F_SMAPS_THP] = "smaps_thp",
	[F_SECCOMP_GET_FILTER] = "seccomp_get_filter",
	[F_SECCOMP_FILTERS] = "seccomp_filters",
	[F_SHARED_RING] = "shared_ring",
	[F_PREFETCHW] = "prefetchw",
	[F_OPENAT2] = "openat2",
	[F_DL_DEBUG_STATE] = "dl_debug_state",
	[F_STUB_CLOCK] = "stub_clock",
};

static enum state state[F_NFEATURES];
static int lost_err[F_NFEATURES];
static int probed;
static const char *child_problem;	/* why no child could be probed */

const char *feature_name(enum feature f)
{
	return f < F_NFEATURES ? names[f] : "?";
}

/*
 * MEMTAP_DISABLE=a,b,c: each a feature name, or "all": every feature
 * with a fallback (memtap cannot trace without PTRACE_SEIZE) that gives
 * the same results (not dl_debug_state, nor stub_clock: the times differ).
 */
static void read_disable(void)
{
	const char *env = getenv("MEMTAP_DISABLE");

	while (env && *env) {
		size_t len = strcspn(env, ", ");
		int found = 0;

		for (int f = 0; f < F_NFEATURES && len; f++)
			if ((strlen(names[f]) == len && strncmp(env, names[f], len) == 0) ||
			    (len == 3 && strncmp(env, "all", 3) == 0 && f != F_SEIZE &&
			     f != F_DL_DEBUG_STATE && f != F_STUB_CLOCK)) {
				state[f] = FORCED_OFF;
				found = 1;
			}
		if (len && !found)
			error_msg_and_die_code(EXIT_USAGE, "MEMTAP_DISABLE: unknown feature "
					       "'%.*s' (see memtap(1), ENVIRONMENT)", (int)len, env);
		env += len;
		env += strspn(env, ", ");
	}
}

static void set(enum feature f, int yes)
{
	if (state[f] == UNKNOWN)
		state[f] = yes ? YES : NO;
}

static void probe_seccomp(void)
{
	if (state[F_SECCOMP_FILTER] != UNKNOWN)
		return;
	errno = 0;
	prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0);
	set(F_SECCOMP_FILTER, errno != EINVAL);
}

/* The CPU's, as the arch asks it (an x86-64 before Broadwell lacks it). */
static void probe_prefetchw(void)
{
	set(F_PREFETCHW, (arch_cpu_features() & ARCH_CPU_PREFETCHW) != 0);
	set(F_STUB_CLOCK, (arch_cpu_features() & ARCH_CPU_COUNTER) != 0);
}

static void probe_noreplace(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *a, *b;

	if (state[F_MAP_FIXED_NOREPLACE] != UNKNOWN)
		return;
	a = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		set(F_MAP_FIXED_NOREPLACE, 0);
		return;
	}
	b = mmap(a, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (b == MAP_FAILED)
		set(F_MAP_FIXED_NOREPLACE, errno == EEXIST);
	else {
		set(F_MAP_FIXED_NOREPLACE, 0);	/* taken as a hint */
		if (b != a)
			munmap(b, page);
	}
	munmap(a, page);
}

/* Wait for child's next stop; 0, or -1 if it died or waiting failed. */
static int wait_stop(pid_t child, int *status)
{
	while (waitpid(child, status, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return WIFSTOPPED(*status) ? 0 : -1;
}

static volatile uint64_t probe_word = 0x6d656d746170ULL;

/* The memory features on the stopped child: ro is a read-only page of it. */
static void probe_memory(pid_t child, uint8_t *ro)
{
	uint64_t w = 0, v = ~0ULL;
	struct iovec local = { &w, sizeof(w) };
	struct iovec remote = { (void *)&probe_word, sizeof(w) };
	char path[64];
	uint8_t byte = 0;
	int fd;

	set(F_PROCESS_VM_READV, process_vm_readv(child, &local, 1, &remote, 1, 0) == 8 &&
	    w == probe_word);
	local.iov_base = &v;
	set(F_PROCESS_VM_WRITEV, process_vm_writev(child, &local, 1, &remote, 1, 0) == 8);

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)child);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	set(F_PROC_MEM, fd >= 0 && pread(fd, &byte, 1, (off_t)(uintptr_t)ro) == 1 &&
	    byte == 0x5a);
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	byte = 0xa5;
	if (fd >= 0 && pwrite(fd, &byte, 1, (off_t)(uintptr_t)ro) == 1) {
		byte = 0;
		set(F_PROC_MEM_WRITE, pread(fd, &byte, 1, (off_t)(uintptr_t)ro) == 1 &&
		    byte == 0xa5);
	} else {
		set(F_PROC_MEM_WRITE, 0);
	}
	if (fd >= 0)
		close(fd);
}

/* The ptrace features on the stopped child. */
static void probe_ptrace(pid_t child)
{
	uint64_t mask;
	struct ptrace_syscall_info info;

	set(F_GETSIGMASK, ptrace(PTRACE_GETSIGMASK, child, (void *)sizeof(mask), &mask) == 0);
	set(F_GET_SYSCALL_INFO,
	    ptrace(PTRACE_GET_SYSCALL_INFO, child, (void *)sizeof(info), &info) > 0);
}

/*
 * The probe child: it shares memtap's memory (CLONE_VM), so that making
 * it and reaping it copies and tears down no address space (a fork of
 * memtap and its exit took about 0.5 ms of every start), and it runs on
 * a stack of its own with raw syscalls only (no errno, no lock of the
 * C library memtap's thread might hold).
 */
static uint8_t child_stack[16384] __attribute__((aligned(64)));

__attribute__((no_sanitize_address)) static int child_main(void *arg)
{
	/* a memtap killed meanwhile (SIGKILL) takes its probe child along */
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if ((pid_t)syscall(SYS_getppid) != *(pid_t *)arg)
		syscall(SYS_exit, 0);
	for (;;)
		syscall(SYS_ppoll, NULL, 0, NULL, NULL, 0);
	return 0;
}

/* Trace a child of ours for a moment and ask. */
static void probe_child(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *ro;
	pid_t child, parent;
	int status, seized = 0;

	ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		child_problem = "mmap failed";
		return;
	}
	ro[0] = 0x5a;
	mprotect(ro, page, PROT_READ);
	parent = getpid();
	child = clone(child_main, child_stack + sizeof(child_stack), CLONE_VM | SIGCHLD, &parent);
	if (child < 0) {
		child_problem = "clone failed";
		munmap(ro, page);
		return;
	}
	if (state[F_SEIZE] != FORCED_OFF) {
		long opts = state[F_EXITKILL] == FORCED_OFF ? 0 : PTRACE_O_EXITKILL;

		if (ptrace(PTRACE_SEIZE, child, 0L, (void *)opts) == 0) {
			seized = 1;
			set(F_EXITKILL, opts != 0);
		} else if (opts && errno == EINVAL &&
			   ptrace(PTRACE_SEIZE, child, 0L, 0L) == 0) {
			seized = 1;
			set(F_EXITKILL, 0);
		}
		/* EIO: an unknown request; EPERM says nothing of SEIZE */
		if (seized || errno == EIO || errno == EINVAL)
			set(F_SEIZE, seized);
	}
	if (seized ? ptrace(PTRACE_INTERRUPT, child, 0L, 0L) < 0 :
	    ptrace(PTRACE_ATTACH, child, 0L, 0L) < 0) {
		child_problem = "it could not be traced";
	} else if (wait_stop(child, &status) < 0) {
		child_problem = "it did not stop";
		child = 0;	/* reaped */
	} else {
		if (!seized && state[F_EXITKILL] == UNKNOWN)
			set(F_EXITKILL, ptrace(PTRACE_SETOPTIONS, child, 0L,
					       (void *)PTRACE_O_EXITKILL) == 0);
		probe_ptrace(child);
		probe_memory(child, ro);
	}
	if (child > 0) {
		kill(child, SIGKILL);
		for (;;) {
			if (waitpid(child, &status, __WALL) < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			if (WIFEXITED(status) || WIFSIGNALED(status))
				break;
		}
	}
	munmap(ro, page);
}

void features_probe(void)
{
	if (probed)
		return;
	probed = 1;
	read_disable();
	probe_seccomp();
	probe_noreplace();
	probe_prefetchw();
	probe_child();
	if (state[F_SECCOMP_ENTRY] == UNKNOWN)
		state[F_SECCOMP_ENTRY] = ASSUMED;	/* until the first stops */
	/* what the child could not tell: keep the path, fall back at use */
	for (int f = 0; f < F_NFEATURES; f++)
		set(f, 1);
	debug_msg("kernel features probed%s%s", child_problem ? "; no child probe: " : "",
		  child_problem ? child_problem : "");
}

int feature_has(enum feature f)
{
	if (!probed)
		features_probe();
	return state[f] == YES || state[f] == ASSUMED;
}

void feature_found(enum feature f, int yes)
{
	if (!probed)
		features_probe();
	if (f >= F_NFEATURES || state[f] == FORCED_OFF)
		return;
	if (state[f] == ASSUMED || state[f] == UNKNOWN)
		debug_msg("%s: %s, seen at use", names[f], yes ? "yes" : "no");
	state[f] = yes ? YES : NO;
}

void feature_lost(enum feature f, int err)
{
	if (state[f] != YES)
		return;
	state[f] = LOST;
	lost_err[f] = err;
	debug_msg("%s: failed at use (%s): falling back", names[f], strerror(err));
}

void features_print(FILE *f)
{
	static const char *const what[] = {
		[UNKNOWN] = "unknown", [YES] = "yes", [NO] = "no",
		[FORCED_OFF] = "off (MEMTAP_DISABLE)", [LOST] = "no, failed at use",
		[ASSUMED] = "yes until the first stops say otherwise",
	};

	if (!probed)
		features_probe();
	for (int i = 0; i < F_NFEATURES; i++) {
		const char *whose = i == F_PREFETCHW || i == F_STUB_CLOCK ? "CPU" :
				    i == F_DL_DEBUG_STATE ? "loader" : "kernel";

		char why[64] = "";

		if (state[i] == LOST)
			snprintf(why, sizeof(why), " (%s)", strerror(lost_err[i]));
		if (f == stderr)
			verbose_msg("%s feature %s: %s%s", whose, names[i], what[state[i]], why);
		else
			fprintf(f, "%s: %s feature %s: %s%s\n", program_name, whose, names[i],
				what[state[i]], why);
	}
}

/*
 * seccomp-wrappers-run.c - the filter of detoured wrappers
 * (seccomp_filter_wrappers(), src/trace/seccomp.c) installed for real,
 * in a child, with the addresses after the syscall instructions of this
 * process's C library's mmap, munmap and brk (arch_syscall_sites()) and
 * no tracer, where SECCOMP_RET_TRACE makes a call fail with ENOSYS:
 * mmap, munmap and brk through the library run; the same calls made by
 * syscall(2), and an mmap with PROT_EXEC through the library, get
 * ENOSYS.  The kernel's seccomp_data.instruction_pointer is the address
 * after the instruction.  "skip" without seccomp filters (or under a
 * sanitizer, whose runtime makes raw syscalls).  Prints "ok" last.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#if defined(__GLIBC__)
# include <gnu/lib-names.h>
#endif

#include "trace/memtap.h"
#include "arch/detour-plan.h"
#include "linux/features.h"
#include "probe/sandbox.h"
#include "report/events.h"
#include "unit-check.h"

void sandbox_own_filter(const struct sock_filter *prog, size_t len)
{
	(void)prog;
	(void)len;
}

int feature_has(enum feature f)
{
	(void)f;
	return 1;
}

static uint64_t ips[SECCOMP_WRAPPER_IPS_MAX];
static size_t nips;

/* The addresses after the syscall instructions of the library's name. */
static int add_wrapper(void *libc, const char *name)
{
	void *fn = dlsym(libc, name);
	const ElfW(Sym) *sym = NULL;
	uint64_t sites[4];
	Dl_info info;
	size_t n;

	if (!fn || !dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size)
		return -1;
	n = arch_syscall_sites((uint64_t)(uintptr_t)fn, fn, sym->st_size, sites, 4);
	if (n == 0 || n > 4 || nips + n > SECCOMP_WRAPPER_IPS_MAX)
		return -1;
	for (size_t i = 0; i < n; i++)
		ips[nips++] = sites[i] + ARCH_SYSCALL_INSN_LEN;
	return 0;
}

/* The child's checks, one bit each in its exit status; no allocation. */
enum { C_MMAP = 1, C_MUNMAP = 2, C_BRK = 4, C_RAW_MMAP = 8, C_RAW_BRK = 16,
       C_EXEC_MMAP = 32, C_RAW_MUNMAP = 64 };

static int child(const struct sock_filter *f, size_t n)
{
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = (struct sock_filter *)f };
	void *keep = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int bad = 0;
	void *p, *top;
	long r;

	if (keep == MAP_FAILED || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return 125;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		bad |= C_MMAP;
	else if (munmap(p, 4096) != 0)
		bad |= C_MUNMAP;
	/* glibc's brk sees no ENOSYS: it takes -ENOSYS for the new break */
	top = sbrk(0);
	if (brk(top) != 0 || sbrk(0) != top)
		bad |= C_BRK;
	r = syscall(SYS_mmap, 0L, 4096L, (long)(PROT_READ | PROT_WRITE),
		    (long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
	if (r != -1 || errno != ENOSYS)
		bad |= C_RAW_MMAP;
	r = syscall(SYS_munmap, keep, 4096L);
	if (r != -1 || errno != ENOSYS)
		bad |= C_RAW_MUNMAP;
	r = syscall(SYS_brk, 0L);
	if (r != -1 || errno != ENOSYS)
		bad |= C_RAW_BRK;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED || errno != ENOSYS)
		bad |= C_EXEC_MMAP;
	return bad;
}

int main(void)
{
	static struct sock_filter f[SECCOMP_FILTER_MAX];
	const char *names[] = { "mmap", "munmap", "brk" };
	void *libc = RTLD_DEFAULT;
	size_t n;
	pid_t pid;
	int st;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("skip\n");
	return 0;
#endif
	if (!arch_bp_wrappers_detoured()) {
		printf("skip\n");
		return 0;
	}
#ifdef LIBC_SO
	libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
#endif
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(libc && add_wrapper(libc, names[i]) == 0, "%s: no syscall instruction found",
		      names[i]);
	if (failures)
		return 1;
	n = seccomp_filter_wrappers(f, EV_SYSCALLS, ips, nips);
	CHECK(n > 0, "no filter");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(f, n));
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid, "fork or wait: %s", strerror(errno));
	if (failures)
		return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 125) {
		printf("skip\n");	/* no seccomp filter here */
		return 0;
	}
	CHECK(WIFEXITED(st), "the child: status %#x", st);
	st = WEXITSTATUS(st);
	CHECK(!(st & C_MMAP), "the library's mmap failed");
	CHECK(!(st & C_MUNMAP), "the library's munmap failed");
	CHECK(!(st & C_BRK), "the library's brk failed");
	CHECK(!(st & C_RAW_MMAP), "syscall(SYS_mmap) was not stopped");
	CHECK(!(st & C_RAW_MUNMAP), "syscall(SYS_munmap) was not stopped");
	CHECK(!(st & C_RAW_BRK), "syscall(SYS_brk) was not stopped");
	CHECK(!(st & C_EXEC_MMAP), "the library's mmap of code was not stopped");
	return unit_status();
}

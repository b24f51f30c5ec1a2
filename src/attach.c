/*
 * attach.c - seize every thread of a running process, or explain in one
 * line why that is not possible: no such process, zombie, kernel thread,
 * already traced (by whom), another user's process, Yama ptrace_scope,
 * missing CAP_SYS_PTRACE.  Then, for a process under seccomp, choose
 * mechanisms that inject nothing its filters forbid.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "alloc.h"
#include "breakpoint.h"
#include "error.h"
#include "memtap.h"
#include "remote.h"
#include "sandbox.h"
#include "tracer.h"

#define PF_KTHREAD 0x00200000UL
#define CAP_SYS_PTRACE_BIT 19

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int have_cap_sys_ptrace(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return (caps >> CAP_SYS_PTRACE_BIT) & 1;
}

/* The four uids of the Uid: line; -1 when unreadable. */
static int task_uids(pid_t pid, long uids[4])
{
	char path[64], line[256];
	int ok = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %ld %ld %ld %ld", &uids[0], &uids[1], &uids[2], &uids[3]) == 4) {
			ok = 0;
			break;
		}
	fclose(f);
	return ok;
}

static void die_already_traced(pid_t pid, long tracer)
{
	char comm[32];

	procfs_read_comm((pid_t)tracer, comm, sizeof(comm));
	error_msg_and_die("cannot attach to process %d: already traced by process %ld (%s); "
			  "detach that tracer first", pid, tracer, comm);
}

/* Refuse what can be refused before any ptrace call. */
static void check_target(pid_t pid)
{
	char state;
	unsigned long flags;
	long tracer = 0;

	if (pid == getpid())
		error_msg_and_die("cannot attach to process %d: that is memtap itself", pid);
	if (procfs_stat_state(pid, &state, &flags) < 0)
		error_msg_and_die("cannot attach to process %d: no such process", pid);
	if (flags & PF_KTHREAD)
		error_msg_and_die("cannot attach to process %d: it is a kernel thread", pid);
	if (state == 'Z' || state == 'X')
		error_msg_and_die("cannot attach to process %d: it is a zombie (exited, not yet reaped)", pid);
	if (procfs_status_long(pid, "TracerPid", &tracer) == 0 && tracer != 0) {
		if (tracer == getpid())
			error_msg_and_die("cannot attach to process %d: named twice", pid);
		die_already_traced(pid, tracer);
	}
}

/* PTRACE_SEIZE said EPERM: find out why, say how to fix it, exit. */
static void __attribute__((noreturn)) die_eperm(pid_t pid)
{
	long uids[4], tracer = 0;
	int cap = have_cap_sys_ptrace();
	int yama = yama_scope();
	uid_t me = geteuid();

	if (procfs_status_long(pid, "TracerPid", &tracer) == 0 && tracer != 0)
		die_already_traced(pid, tracer);
	if (yama == 3)
		error_msg_and_die("cannot attach to process %d: Yama ptrace_scope is 3, "
				  "attaching is disabled until reboot", pid);
	if (task_uids(pid, uids) == 0 && !cap) {
		int same = 1;

		for (int i = 0; i < 3; i++)
			if (uids[i] != (long)me)
				same = 0;
		if (!same && me == 0)
			error_msg_and_die("cannot attach to process %d: memtap lacks CAP_SYS_PTRACE, "
					  "needed for a process of uid %ld", pid, uids[0]);
		if (!same && (uids[0] != uids[1] || uids[1] != uids[2]) &&
		    uids[0] == (long)me)
			error_msg_and_die("cannot attach to process %d: it changed its user ids "
					  "(set-user-ID program); run memtap as root "
					  "(CAP_SYS_PTRACE)", pid);
		if (!same)
			error_msg_and_die("cannot attach to process %d: it belongs to another user "
					  "(uid %ld, memtap runs as uid %ld); run memtap as that "
					  "user or as root", pid, uids[0], (long)me);
	}
	if (yama == 2 && !cap)
		error_msg_and_die("cannot attach to process %d: Yama ptrace_scope is 2, "
				  "only CAP_SYS_PTRACE may attach; run memtap as root", pid);
	if (yama == 1 && !cap)
		error_msg_and_die("cannot attach to process %d: Yama ptrace_scope is 1, "
				  "only its parent may attach; run memtap as root or set "
				  "kernel.yama.ptrace_scope=0", pid);
	if (!cap)
		error_msg_and_die("cannot attach to process %d: memtap lacks CAP_SYS_PTRACE "
				  "(the process is not dumpable or has capabilities memtap "
				  "lacks)", pid);
	error_msg_and_die("cannot attach to process %d: ptrace(PTRACE_SEIZE): %s "
			  "(a security module may forbid it)", pid, strerror(EPERM));
}

/* Seize one thread; 1 if seized now, 0 if ours already or gone. */
static int seize_thread(pid_t pid, pid_t tid, struct proc *p)
{
	struct thread *tcp;

	if (tracer_find_thread(tid))
		return 0;
	if (ptrace(PTRACE_SEIZE, tid, 0L, tracer_ptrace_options()) < 0) {
		long tracer = 0;

		if (errno == ESRCH)
			return 0;	/* exited meanwhile */
		if (errno == EPERM && procfs_status_long(tid, "TracerPid", &tracer) == 0 &&
		    tracer == getpid())
			return 0;	/* auto-attached as a child of a seized thread */
		if (errno == EPERM)
			die_eperm(pid);
		perror_msg_and_die("cannot attach to process %d: ptrace(PTRACE_SEIZE, %d)",
				   pid, tid);
	}
	tcp = tracer_new_thread(tid, p);
	if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tid);
	(void)tcp;
	return 1;
}

/*
 * Would the seccomp state of p's leader (seized, maybe not stopped yet)
 * let memtap map a scratch page and unmap it again?  1 yes (or no
 * seccomp); 0 no, with the reason in buf.  The filters are fetched at
 * the leader's first stop, which is waited for and left for the event
 * loop to report (WNOWAIT).  The page's address is not known yet: the
 * filters see a representative one, and remote_syscall() checks the
 * real calls again.
 */
static int scratch_allowed(struct proc *p, char *buf, size_t size)
{
	uint64_t insn = 0, a = 0x10000000;
	const uint64_t mmap_args[6] = { a, ARCH_PAGE_SIZE, BP_SCRATCH_PROT, BP_SCRATCH_FLAGS,
					(uint64_t)-1, 0 };
	const uint64_t munmap_args[6] = { a, ARCH_PAGE_SIZE, 0, 0, 0, 0 };
	struct sandbox_verdict v;
	siginfo_t si;
	long mode = 0;

	if (procfs_status_long(p->pid, "Seccomp", &mode) < 0 || mode == 0)
		return 1;
	while (waitid(P_PID, (id_t)p->pid, &si, WSTOPPED | WEXITED | WNOWAIT | __WALL) < 0)
		if (errno != EINTR)
			return 1;
	if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
		return 1;	/* gone: the event loop will tell */
	if (remote_find_syscall_insn(p->pid, &insn) < 0)
		return 1;	/* the probes will say why */
	if (!remote_may_inject(p->pid, &insn, SYS_mmap, mmap_args, &v)) {
		sandbox_reason(&v, "mmap", buf, size);
		return 0;
	}
	if (!remote_may_inject(p->pid, &insn, SYS_munmap, munmap_args, &v)) {
		sandbox_reason(&v, "munmap", buf, size);
		return 0;
	}
	return 1;
}

void attach_refuse_probes(struct proc *p, const char *why, int at_attach)
{
	int wrappers = !strcmp(syscall_source, "breakpoints") && (opt.events & EV_SYSCALLS);
	int allocs = (events_to_trace() & EV_BREAKPOINT) != 0;

	if (allocs && at_attach && !(opt.events & EV_SYSCALLS))
		error_msg_and_die("cannot probe allocator functions in process %d (%s): %s",
				  p->pid, p->comm, why);
	if (allocs)
		warn_msg("cannot probe allocator functions in process %d (%s): %s", p->pid,
			 p->comm, why);
	if (wrappers) {
		warn_msg("process %d (%s): %s: catching its syscalls with PTRACE_SYSCALL "
			 "(--syscalls=ptrace), which stops at every syscall", p->pid, p->comm,
			 why);
		p->ptrace_syscalls = 1;
		syscall_source = opt.npids > 1 || proc_list()->next || tracer_launch_mode() ?
			"breakpoints, or ptrace under seccomp" : "ptrace";
	}
}

/*
 * Mechanisms after attach: probes go in only where the target's seccomp
 * state lets memtap map a scratch page (attach_refuse_probes() else).
 * 1 when p's probes may go in.
 */
static int choose_mechanisms(struct proc *p)
{
	char why[256];

	if (!alloc_enabled() || scratch_allowed(p, why, sizeof(why)))
		return 1;
	attach_refuse_probes(p, why, 1);
	return 0;
}

void attach_pid(pid_t pid)
{
	char path[64];
	struct proc *p;
	int seized, total = 0;

	check_target(pid);
	p = tracer_new_proc(pid, 0);
	procfs_read_vmstat(pid, &p->vm_start);
	/* Seize the leader first: ESRCH there means the process is gone. */
	if (ptrace(PTRACE_SEIZE, pid, 0L, tracer_ptrace_options()) < 0) {
		if (errno == ESRCH)
			error_msg_and_die("cannot attach to process %d: no such process", pid);
		if (errno == EPERM)
			die_eperm(pid);
		perror_msg_and_die("cannot attach to process %d: ptrace(PTRACE_SEIZE)", pid);
	}
	tracer_new_thread(pid, p);
	ptrace(PTRACE_INTERRUPT, pid, 0L, 0L);
	total = 1;

	/* Threads may be created while we read: loop until none is new. */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		seized = 0;
		if (!d)
			break;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

			if (tid > 0 && seize_thread(pid, tid, p)) {
				seized++;
				total++;
			}
		}
		closedir(d);
	} while (seized);
	if (choose_mechanisms(p))
		alloc_attach(p);
	if (!p->alloc)
		info_msg("attached to process %d (%s), %d thread%s", pid, p->comm, total,
		 total == 1 ? "" : "s");
}

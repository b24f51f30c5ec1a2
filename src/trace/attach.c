/*
 * attach.c - seize every thread of a running process, or explain in one
 * line why that is not possible: no such process, zombie, kernel thread,
 * a thread already traced (by whom), and for EPERM the rule of
 * ptrace_may_access() that refused: another user's process, one that
 * is not dumpable, capabilities memtap lacks, Yama ptrace_scope, or a
 * security module.  A process whose leader exited while its other
 * threads run is attached through those threads.  Then the sources do
 * their part (source.h: the allocator probes go in where the process's
 * seccomp filters let them, attach_scratch_allowed()).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "trace/source.h"
#include "trace/attach.h"
#include "trace/sc-mech.h"
#include "probe/breakpoint.h"
#include "util/error.h"
#include "trace/memtap.h"
#include "probe/remote.h"
#include "probe/sandbox.h"
#include "util/xmalloc.h"

#define PF_KTHREAD 0x00200000UL

/* Why the last attach_pid() failed: one line, for the caller to say. */
static char why_not[1024];

static int __attribute__((format(printf, 1, 2))) refuse(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_not, sizeof(why_not), fmt, ap);
	va_end(ap);
	return -1;
}

const char *attach_error(void)
{
	return why_not;
}

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

/* Capability names by number, as capabilities(7) spells them. */
static const char *const cap_names[] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill",
	"setgid", "setuid", "setpcap", "linux_immutable", "net_bind_service",
	"net_broadcast", "net_admin", "net_raw", "ipc_lock", "ipc_owner",
	"sys_module", "sys_rawio", "sys_chroot", "sys_ptrace", "sys_pacct",
	"sys_admin", "sys_boot", "sys_nice", "sys_resource", "sys_time",
	"sys_tty_config", "mknod", "lease", "audit_write", "audit_control",
	"setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm",
	"block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore",
};

/* "cap_a, cap_b" for the bits of caps, into buf. */
static void cap_list(uint64_t caps, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 64 && n < size; i++) {
		if (!(caps >> i & 1))
			continue;
		if (i < sizeof(cap_names) / sizeof(cap_names[0]))
			n += (size_t)snprintf(buf + n, size - n, "%scap_%s", n ? ", " : "", cap_names[i]);
		else
			n += (size_t)snprintf(buf + n, size - n, "%scap_%u", n ? ", " : "", i);
	}
}

/* The security modules other than capability, Yama and lockdown, or NULL. */
static char *other_lsms(void)
{
	char buf[256], *names = NULL, *save = NULL;
	FILE *f = fopen("/sys/kernel/security/lsm", "re");

	if (!f)
		return NULL;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *prev = names;

		if (!strcmp(t, "capability") || !strcmp(t, "yama") || !strcmp(t, "lockdown"))
			continue;
		names = prev ? xasprintf("%s, %s", prev, t) : xstrdup(t);
		free(prev);
	}
	return names;
}

static int already_traced(pid_t pid, pid_t tid, long tracer)
{
	char comm[32];

	if (tracer == getpid())
		return refuse("cannot attach to process %d: memtap traces it already "
				  "(a thread of a process named before it in -p)", pid);
	procfs_read_comm((pid_t)tracer, comm, sizeof(comm));
	if (tid == pid)
		return refuse("cannot attach to process %d: already traced by process %ld (%s); "
				  "detach that tracer first", pid, tracer, comm);
	return refuse("cannot attach to process %d: thread %d is already traced by process "
			  "%ld (%s); detach that tracer first", pid, tid, tracer, comm);
}

/* Refuse when any thread of pid has a tracer: the leader's is named first. */
static int check_tracers(pid_t pid)
{
	char path[64];
	struct dirent *de;
	long tracer = 0;
	DIR *d;

	if (procfs_status_long(pid, "TracerPid", &tracer) == 0 && tracer != 0)
		return already_traced(pid, pid, tracer);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

		if (tid > 0 && procfs_status_long(tid, "TracerPid", &tracer) == 0 && tracer != 0) {
			closedir(d);
			return already_traced(pid, tid, tracer);
		}
	}
	closedir(d);
	return 0;
}

/*
 * Refuse what can be refused before any ptrace call (-1, attach_error()
 * says why).  Returns 1 when the leader has exited (a zombie) while other
 * threads of the process run: those are to be seized, the leader cannot
 * be.
 */
static int check_target(pid_t pid)
{
	char state;
	unsigned long flags;
	int leader_gone = 0;

	if (pid == getpid())
		return refuse("cannot attach to process %d: that is memtap itself", pid);
	if (procfs_stat_state(pid, &state, &flags) < 0)
		return refuse("cannot attach to process %d: no such process", pid);
	if (flags & PF_KTHREAD)
		return refuse("cannot attach to process %d: it is a kernel thread", pid);
	if (state == 'Z' || state == 'X') {
		if (procfs_live_task(pid) == pid)
			return refuse("cannot attach to process %d: it is a zombie (exited, not "
					  "yet reaped)", pid);
		leader_gone = 1;
	}
	if (check_tracers(pid) < 0)
		return -1;
	return leader_gone;
}

/*
 * PTRACE_SEIZE of thread tid said EPERM: find which rule of the kernel's
 * ptrace_may_access() refused, in its order, and how to fix it: -1,
 * attach_error() says it.
 * The uid and gid rule and the dumpable rule yield to CAP_SYS_PTRACE;
 * then the capability rule (the target's permitted set within memtap's),
 * then Yama, then any other security module.
 */
static int eperm(pid_t pid, pid_t tid)
{
	long uids[4], gids[4], tracer = 0, me = (long)getuid(), my_gid = (long)getgid();
	uint64_t my_eff = 0, my_prm = 0, prm = 0;
	int yama = yama_scope(), cap;
	struct stat st;
	char path[64], *lsms;

	if (procfs_status_long(tid, "TracerPid", &tracer) == 0 && tracer != 0)
		return already_traced(pid, tid, tracer);
	procfs_status_hex(getpid(), "CapEff", &my_eff);
	procfs_status_hex(getpid(), "CapPrm", &my_prm);
	cap = (my_eff >> CAP_SYS_PTRACE) & 1;
	if (yama == 3)
		return refuse("cannot attach to process %d: Yama ptrace_scope is 3, "
				  "attaching is disabled until reboot", pid);
	if (!cap && procfs_status_ids(tid, "Uid", uids) == 0) {
		int same = 1;

		for (int i = 0; i < 3; i++)
			if (uids[i] != me)
				same = 0;
		if (!same && me == 0)
			return refuse("cannot attach to process %d: memtap lacks CAP_SYS_PTRACE, "
					  "needed for a process of uid %ld", pid, uids[1]);
		if (!same && uids[0] == me)
			return refuse("cannot attach to process %d: it changed its user ids "
					  "(uid %ld, effective %ld, saved %ld: a set-user-ID program); "
					  "run memtap as root (CAP_SYS_PTRACE)", pid, uids[0],
					  uids[1], uids[2]);
		if (!same)
			return refuse("cannot attach to process %d: it belongs to another user "
					  "(uid %ld, memtap runs as uid %ld); run memtap as that "
					  "user or as root", pid, uids[0], me);
	}
	if (!cap && procfs_status_ids(tid, "Gid", gids) == 0 &&
	    (gids[0] != my_gid || gids[1] != my_gid || gids[2] != my_gid))
		return refuse("cannot attach to process %d: it runs with other group ids "
				  "(gid %ld, effective %ld, saved %ld; memtap has gid %ld: a "
				  "set-group-ID program?); run memtap as root (CAP_SYS_PTRACE)",
				  pid, gids[0], gids[1], gids[2], my_gid);
	/* a process that is not dumpable has its /proc/PID/ files owned by root */
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (!cap && stat(path, &st) == 0 && st.st_uid == 0 && me != 0)
		return refuse("cannot attach to process %d: it is not dumpable (it ran a "
				  "set-user-ID, set-group-ID or capability program, or called "
				  "prctl(PR_SET_DUMPABLE, 0)); only CAP_SYS_PTRACE may attach: "
				  "run memtap as root", pid);
	if (!cap && procfs_status_hex(tid, "CapPrm", &prm) == 0 && (prm & ~my_prm)) {
		char names[512];

		cap_list(prm & ~my_prm, names, sizeof(names));
		return refuse("cannot attach to process %d: it holds capabilities memtap "
				  "does not (%s) and memtap lacks CAP_SYS_PTRACE; run memtap with "
				  "those capabilities or as root", pid, names);
	}
	if (yama == 2 && !cap)
		return refuse("cannot attach to process %d: Yama ptrace_scope is 2, "
				  "only CAP_SYS_PTRACE may attach; run memtap as root", pid);
	if (yama == 1 && !cap)
		return refuse("cannot attach to process %d: Yama ptrace_scope is 1, "
				  "only its ancestors may attach; run memtap as root or set "
				  "kernel.yama.ptrace_scope=0", pid);
	lsms = other_lsms();
	if (lsms) {
		int r = refuse("cannot attach to process %d: ptrace(PTRACE_SEIZE, %d): %s, "
				  "though the uid, dumpable, capability and Yama rules allow it: "
				  "a security module (%s) refused it", pid, tid, strerror(EPERM), lsms);

		free(lsms);
		return r;
	}
	return refuse("cannot attach to process %d: ptrace(PTRACE_SEIZE, %d): %s, "
			  "though the uid, dumpable, capability and Yama rules allow it",
			  pid, tid, strerror(EPERM));
}

/* Seize one thread; 1 if seized now, 0 if ours already or gone, -1 refused. */
static int seize_thread(struct procs *pt, pid_t pid, pid_t tid, struct proc *p)
{
	struct thread *tcp;
	unsigned long flags;
	char state;

	if (procs_find(pt, tid))
		return 0;
	if (ptrace(PTRACE_SEIZE, tid, 0L, tracer_ptrace_options()) < 0) {
		long tracer = 0;

		if (errno == ESRCH)
			return 0;	/* exited meanwhile */
		if (errno == EPERM && procfs_status_long(tid, "TracerPid", &tracer) == 0 &&
		    tracer == getpid())
			return 0;	/* auto-attached as a child of a seized thread */
		if (errno == EPERM && procfs_stat_state(tid, &state, &flags) == 0 &&
		    (state == 'Z' || state == 'X'))
			return 0;	/* exited: an exited leader, or one exiting now */
		if (errno == EPERM)
			return eperm(pid, tid);
		return refuse("cannot attach to process %d: ptrace(PTRACE_SEIZE, %d): %s", pid, tid,
			      strerror(errno));
	}
	tcp = procs_new_thread(pt, tid, p);
	if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_INTERRUPT, %d)", tid);
	(void)tcp;
	return 1;
}

/* See attach.h. */
int attach_scratch_allowed(struct proc *p, char *buf, size_t size)
{
	uint64_t insn = 0, a = 0x10000000;
	const uint64_t mmap_args[6] = { a, arch_page_size(), BP_SCRATCH_PROT, BP_SCRATCH_FLAGS,
					(uint64_t)-1, 0 };
	const uint64_t munmap_args[6] = { a, arch_page_size(), 0, 0, 0, 0 };
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

void attach_refuse_probes(const struct trace_config *cfg, const struct procs *pt,
			  struct proc *p, const char *why, int at_attach)
{
	static size_t refused;	/* attached processes of which nothing is recorded */
	int wrappers = cfg->syscalls == SYSCALLS_BREAKPOINTS && (cfg->events & EV_SYSCALL_STOPS);
	int allocs = (events_to_trace() & EV_BREAKPOINT) != 0;

	if (allocs && at_attach && !(cfg->events & EV_SYSCALL_STOPS)) {
		/* probes are all memtap wants of it: one of several -p goes on */
		if (!cfg->agent && (cfg->npids <= 1 || ++refused == cfg->npids))
			error_msg_and_die("cannot probe allocator functions in process %d (%s): %s%s",
					  p->pid, p->rec->comm, why,
					  cfg->npids > 1 ? " (nor in the other processes)" : "");
		warn_msg("cannot probe allocator functions in process %d (%s): %s: "
			 "nothing is recorded of it", p->pid, p->rec->comm, why);
		return;
	}
	if (allocs)
		warn_msg("cannot probe allocator functions in process %d (%s): %s", p->pid,
			 p->rec->comm, why);
	if (wrappers) {
		warn_msg("process %d (%s): %s: catching its syscalls with PTRACE_SYSCALL "
			 "(--syscalls=ptrace), which stops at every syscall", p->pid, p->rec->comm,
			 why);
		sc_mech_ptrace(cfg, pt, p, PTRACE_SC_SANDBOX);
	}
}

/*
 * Let the threads of p seized so far go again: each is waited for at its
 * first stop (the PTRACE_INTERRUPT's, or a signal's, passed on) and
 * detached.  Nothing of memtap is in the process yet.
 */
static void unseize(struct procs *pt, struct proc *p)
{
	size_t it = 0;
	struct thread *tcp;

	while ((tcp = procs_next_thread(pt, &it))) {
		int status, sig = 0;

		if (tcp->proc != p)
			continue;
		while (waitpid(tcp->tid, &status, __WALL) < 0 && errno == EINTR)
			;
		if (WIFSTOPPED(status) && (status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
			sig = WSTOPSIG(status);
		if (WIFSTOPPED(status))
			ptrace(PTRACE_DETACH, tcp->tid, 0L, (unsigned long)sig);
		tracer_forget_thread(tcp);
	}
	p->rec->detached = 1;
}

int attach_pid(struct procs *pt, pid_t pid)
{
	char path[64];
	struct proc *p;
	int seized, total = 0, leader_gone;

	leader_gone = check_target(pid);
	if (leader_gone < 0)
		return -1;
	/* Seize the leader first: ESRCH there means the process is gone. */
	if (!leader_gone && ptrace(PTRACE_SEIZE, pid, 0L, tracer_ptrace_options()) < 0) {
		if (errno == ESRCH)
			return refuse("cannot attach to process %d: no such process", pid);
		if (errno == EPERM)
			return eperm(pid, pid);
		return refuse("cannot attach to process %d: ptrace(PTRACE_SEIZE): %s", pid,
			      strerror(errno));
	}
	p = procs_new_proc(pt, pid, 0);
	procfs_read_vmstat(pid, &p->rec->vm_start);
	if (!leader_gone) {
		procs_new_thread(pt, pid, p);
		ptrace(PTRACE_INTERRUPT, pid, 0L, 0L);
		total = 1;
	}

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
			int r = tid > 0 ? seize_thread(pt, pid, tid, p) : 0;

			if (r < 0) {
				closedir(d);
				unseize(pt, p);
				return -1;
			}
			seized += r;
			total += r;
		}
		closedir(d);
	} while (seized);
	if (!total) {
		p->rec->detached = 1;
		return refuse("cannot attach to process %d: no such process (its last threads "
			      "exited)", pid);
	}
	/* the sources' part: probes go in once every thread has stopped */
	if (!sources_attach(p))
		info_msg("attached to process %d (%s), %d thread%s", pid, p->rec->comm, total,
		 total == 1 ? "" : "s");
	return 0;
}

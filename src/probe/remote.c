/*
 * remote.c - remote syscall injection and tracee memory access.
 *
 * How a syscall is injected (see remote.h for the contract):
 *
 *   1. refuse syscall stops: a thread at a syscall-entry or -exit stop
 *      is inside a syscall, and changing its registers there would lose
 *      or restart that syscall;
 *   2. ask the thread's seccomp state (sandbox.c) whether the kernel
 *      would run this syscall from this instruction, else from another
 *      syscall instruction of the process; refuse if none will do;
 *   3. save the registers and the signal mask (PTRACE_GETSIGMASK), block
 *      every blockable signal, so that none is even dequeued (without
 *      PTRACE_GETSIGMASK: see block_signals());
 *   4. pc = a syscall instruction that exists already (the vdso has
 *      them), the syscall's number and arguments where the CPU's
 *      convention has them (arch_setup_syscall()), and no restart
 *      (arch_suppress_restart()): the stop may have interrupted a
 *      syscall (its return value is then -ERESTARTSYS), which the kernel
 *      would otherwise "restart" over our registers;
 *   5. PTRACE_SYSCALL to the syscall's entry stop, then its exit stop
 *      (SIGTRAP | 0x80, or a plain SIGTRAP for a tracer without
 *      PTRACE_O_TRACESYSGOOD; a seccomp stop for our own syscall is
 *      passed; SIGSTOP, which cannot be blocked, is suppressed now and
 *      queued again at the end);
 *   6. read the return value, put the registers and the mask back, and
 *      go from the exit stop to an interrupt stop (PTRACE_INTERRUPT), on
 *      the way out of which the kernel restarts a syscall that the first
 *      stop had interrupted (the registers of the stop, set back, restore
 *      the restart).
 *
 * Step 5 needs PTRACE_SEIZE and a SIGTRAP's stop (that of another
 * signal must stay one, for the caller to hand the signal on): else the
 * instruction is single-stepped (PTRACE_SINGLESTEP to the step trap
 * after it), and a memtap killed then leaves the trap flag set: the
 * thread dies of SIGTRAP.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/ptrace.h>

#include "arch/arch.h"
#include "util/error.h"
#include "linux/features.h"
#include "linux/memio.h"
#include "linux/procfs.h"
#include "probe/remote.h"
#include "probe/remote-tramp.h"
#include "probe/sandbox.h"

#ifndef PTRACE_EVENT_STOP
# define PTRACE_EVENT_STOP 128
#endif

/* Search [start, start+len), its first 64 KiB, for a syscall instruction. */
static int scan_for_syscall(pid_t pid, pid_t tid, uint64_t start, uint64_t len,
			    uint64_t *addr)
{
	static uint8_t buf[65536];
	long off;

	if (len > sizeof(buf))
		len = sizeof(buf);
	if (memio_read_all(pid, tid, start, buf, len) < 0)
		return -1;
	if ((off = arch_find_syscall_insn(buf, len)) < 0)
		return -1;
	*addr = start + (uint64_t)off;
	return 0;
}

/*
 * Up to max syscall instructions of pid, one per executable mapping:
 * the vdso's first, then the others' in address order.  How many, or
 * -errno when the maps cannot be read.  tid: a stopped thread of pid
 * (for PTRACE_PEEKDATA) or 0.
 */
static int find_syscall_insns(pid_t pid, pid_t tid, uint64_t *addrs, size_t max)
{
	struct procfs_map *maps;
	size_t n;
	int found = 0;

	if (procfs_read_maps(pid, &maps, &n) < 0)
		return -errno;
	/* pass 0: the vdso only; pass 1: any other executable mapping */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n && (size_t)found < max; i++) {
			const char *name = maps[i].path ? maps[i].path : "";
			int vdso = strstr(name, "[vdso]") != NULL;

			if (!(maps[i].perms & PROT_EXEC) || vdso != (pass == 0))
				continue;
			if (strstr(name, "[vsyscall]"))
				continue;
			if (scan_for_syscall(pid, tid, maps[i].start,
					     maps[i].end - maps[i].start, &addrs[found]) == 0)
				found++;
		}
	procfs_maps_free(maps);
	return found;
}

int remote_find_syscall_insn_tid(pid_t pid, pid_t tid, uint64_t *addr)
{
	int n = find_syscall_insns(pid, tid, addr, 1);

	return n < 0 ? n : n == 0 ? -ENOENT : 0;
}

int remote_find_syscall_insn(pid_t pid, uint64_t *addr)
{
	int n = find_syscall_insns(pid, pid, addr, 1);

	return n < 0 ? n : n == 0 ? -ENOENT : 0;
}

#define MAX_INSNS 64

static char refusal[256];

const char *remote_refusal(void)
{
	return refusal[0] ? refusal : NULL;
}

static const char *syscall_name(long nr)
{
	switch (nr) {
	case SYS_mmap: return "mmap";
	case SYS_munmap: return "munmap";
	default: return "a syscall";
	}
}

int remote_may_inject(pid_t tid, uint64_t *insn, long nr, const uint64_t args[6],
		      struct sandbox_verdict *v)
{
	struct sandbox *sb = sandbox_load(tid);
	uint64_t alt[MAX_INSNS];
	struct sandbox_verdict first;
	int n, ok = sandbox_allows(sb, nr, args, *insn, v);

	/*
	 * A filter may allow syscalls only from some code (the C
	 * library's, say): try the other executable mappings' syscall
	 * instructions.
	 */
	if (!ok && v->mode == 2 && !v->err) {
		first = *v;
		n = find_syscall_insns(tid, tid, alt, MAX_INSNS);
		for (int i = 0; i < n && !ok; i++)
			if (alt[i] != *insn && sandbox_allows(sb, nr, args, alt[i], v)) {
				debug_msg("thread %d: syscall %ld from %#" PRIx64 " instead of %#"
					  PRIx64 ", as its seccomp filter wants", tid, nr, alt[i],
					  *insn);
				*insn = alt[i];
				ok = 1;
			}
		if (!ok)
			*v = first;
	}
	sandbox_free(sb);
	return ok;
}

/*
 * 1 when tid is stopped inside a syscall: at a syscall-entry, -exit or
 * seccomp stop, or at a PTRACE_EVENT_{FORK,VFORK,CLONE,EXEC,EXIT} stop,
 * after which the kernel still stores the syscall's result in the
 * register of its return value (our injected syscall number would be
 * overwritten).  Signal-delivery-stops and PTRACE_EVENT_STOP happen on
 * the way back to user mode: safe.
 */
static int in_syscall_stop(pid_t tid)
{
	struct ptrace_syscall_info info;
	siginfo_t si;
	long n = 0;

	if (feature_has(F_GET_SYSCALL_INFO))
		n = ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info);
	if (n > 0 && info.op != PTRACE_SYSCALL_INFO_NONE)
		return 1;
	if (ptrace(PTRACE_GETSIGINFO, tid, 0L, &si) < 0)
		return 0;	/* a group-stop or PTRACE_EVENT_STOP: no siginfo */
	if (si.si_signo != SIGTRAP)
		return 0;
	if (si.si_code == (SIGTRAP | 0x80))
		return 1;	/* syscall stop (PTRACE_O_TRACESYSGOOD) */
	switch (si.si_code >> 8) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_EXEC:
	case PTRACE_EVENT_VFORK_DONE:
	case PTRACE_EVENT_EXIT:
	case PTRACE_EVENT_SECCOMP:
		return 1;
	default:
		return 0;
	}
}

/*
 * Signals dequeued by the thread while it ran our syscall: suppressed at
 * their signal-delivery-stop (no handler ran), queued again afterwards.
 */
#define MAX_HELD 8

struct held_signals {
	siginfo_t si[MAX_HELD];
	int n;
};

static void hold_signal(struct held_signals *h, pid_t tid, int sig)
{
	siginfo_t *si;

	if (h->n == MAX_HELD)
		return;		/* more than a handful in microseconds: a flood */
	si = &h->si[h->n++];
	if (ptrace(PTRACE_GETSIGINFO, tid, 0L, si) < 0) {
		memset(si, 0, sizeof(*si));
		si->si_code = SI_USER;
	}
	si->si_signo = sig;
}

/*
 * Queue the held signals again, in order.  rt_tgsigqueueinfo() keeps
 * the siginfo, but the kernel lets it through from another process only
 * for si_code < 0 (sigqueue, timers, aio) and not SI_TKILL; the others
 * (kill, tgkill, the kernel's own) are sent again by tkill(), which
 * names memtap as the sender.
 */
static void requeue_signals(const struct held_signals *h, pid_t tid)
{
	long tgid = tid;

	for (int i = 0; i < h->n; i++) {
		siginfo_t si = h->si[i];

		if (si.si_code < 0 && si.si_code != SI_TKILL) {
			if (tgid == tid)
				procfs_status_long(tid, "Tgid", &tgid);
			if (syscall(SYS_rt_tgsigqueueinfo, (pid_t)tgid, tid, si.si_signo,
				    &si) == 0)
				continue;
		}
		syscall(SYS_tkill, tid, si.si_signo);
	}
}

/*
 * Block every signal for the injection: 1 when done (*saved is the
 * mask to put back), 0 when the kernel has no PTRACE_GETSIGMASK (before
 * Linux 3.11, or MEMTAP_DISABLE=getsigmask), -errno on failure.
 *
 * Without it, nothing is blocked, and nothing needs to be for the
 * registers' sake: a traced thread never runs a handler that the tracer
 * did not let through, every signal but SIGKILL first stops it at a
 * signal-delivery-stop.  The step loop suppresses such a signal and
 * queues it again once the registers are back (requeue_signals()), so
 * that it is delivered where the thread was, as when it had been
 * blocked.  What differs: the siginfo of a kill()ed or kernel-sent
 * signal (memtap is named as its sender), and a process-directed signal
 * is bound to this thread; only for those that arrive during the few
 * microseconds of an injection.  Injecting rt_sigprocmask() instead
 * would need target memory and the seccomp filters' leave, and the
 * injection of it would be just as exposed.
 */
static int block_signals(pid_t tid, uint64_t *saved)
{
	uint64_t all = ~0ULL;

	if (!feature_has(F_GETSIGMASK))
		return 0;
	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(*saved), saved) < 0) {
		if (errno != EIO && errno != EINVAL)
			return -errno;
		feature_lost(F_GETSIGMASK, errno);	/* an unknown request */
		return 0;
	}
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(all), &all) < 0)
		return -errno;
	return 1;
}

/*
 * Can tid's syscall be driven by syscall stops (PTRACE_SYSCALL) rather
 * than single steps, ending in an interrupt stop (PTRACE_INTERRUPT:
 * seized)?  Only from a SIGTRAP's stop (an int3's, a step's, an
 * interrupt stop): that of another signal would become an interrupt
 * stop, and the signal the caller hands on at the resume be lost.
 */
static int drivable(pid_t tid)
{
	siginfo_t si;

	return feature_has(F_SEIZE) && ptrace(PTRACE_GETSIGINFO, tid, 0L, &si) == 0 &&
	       si.si_signo == SIGTRAP;
}

/*
 * Is there a trampoline for tid's process (remote-tramp.c) from which
 * its seccomp filters let both its syscalls run (nr, then the CPU's
 * ARCH_TRAMP_RESTORE_NR), and is the signal mask readable
 * (PTRACE_GETSIGMASK)?
 */
static int tramp_usable(pid_t tid, long nr, const uint64_t args[6], uint64_t *at, pid_t *pid)
{
	const uint64_t restore_args[6] = ARCH_TRAMP_RESTORE_ARGS;
	struct sandbox_verdict v;
	uint64_t insn, mask;

	if (!remote_tramp_find(tid, pid, at) || !feature_has(F_GETSIGMASK) ||
	    ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask) < 0)
		return 0;
	insn = *at;
	if (!remote_may_inject(tid, &insn, nr, args, &v) || insn != *at)
		return 0;
	insn = *at + ARCH_SYSCALL_INSN_LEN;	/* not the same instruction, the same mapping */
	return remote_may_inject(tid, &insn, ARCH_TRAMP_RESTORE_NR, restore_args, &v);
}

/*
 * A SIGTRAP stop of a syscall: SIGTRAP | 0x80 with PTRACE_O_TRACESYSGOOD,
 * else a plain SIGTRAP whose si_code says so.
 */
static int syscall_trap(pid_t tid, int sig)
{
	siginfo_t si;

	if (sig == (SIGTRAP | 0x80))
		return 1;
	return sig == SIGTRAP && ptrace(PTRACE_GETSIGINFO, tid, 0L, &si) == 0 &&
	       si.si_code == SIGTRAP;
}

/* A fault of the thread's own (not a kill()ed SIGSEGV, say). */
static int fault_signal(pid_t tid, int sig)
{
	siginfo_t si;

	if (sig != SIGSEGV && sig != SIGILL && sig != SIGBUS && sig != SIGFPE)
		return 0;
	return ptrace(PTRACE_GETSIGINFO, tid, 0L, &si) < 0 || si.si_code > 0;
}

/*
 * Resume tid with request (PTRACE_SINGLESTEP, PTRACE_SYSCALL,
 * PTRACE_CONT) and wait for its next stop, into *status.  0, -ESRCH
 * (dead and reaped: res says so; or at its exit event: its death
 * follows), or another -errno.
 */
static int resume_wait(pid_t tid, int request, int *status, struct remote_result *res)
{
	if (ptrace(request, tid, 0L, 0L) < 0)
		return -errno;
	while (waitpid(tid, status, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
		res->reaped = 1;
		res->status = *status;
		return -ESRCH;
	}
	return (unsigned)*status >> 16 == PTRACE_EVENT_EXIT ? -ESRCH : 0;
}

/*
 * The registers of syscall nr from the instruction at insn, the others
 * from *regs, with no restart of a syscall the stop interrupted.
 */
static void call_regs(arch_regs_t *regs, uint64_t insn, long nr, const uint64_t args[6])
{
	arch_setup_syscall(regs, insn, nr, args);
	arch_suppress_restart(regs);
}

/*
 * tid at a syscall-exit stop, its registers its own again: on to a
 * PTRACE_EVENT_STOP before it runs an instruction (signals that come
 * first are held).  0 or -errno (-ESRCH: reaped, see res).
 */
static int interrupt_stop(pid_t tid, struct held_signals *held, struct remote_result *res)
{
	int status;

	if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0)
		return -errno;
	for (;;) {
		int err = resume_wait(tid, PTRACE_CONT, &status, res);

		if (err < 0)
			return err;
		if ((unsigned)status >> 16 == PTRACE_EVENT_STOP)
			return 0;
		if (!((unsigned)status >> 16) && !syscall_trap(tid, WSTOPSIG(status)))
			hold_signal(held, tid, WSTOPSIG(status));
	}
}

/*
 * Test hook: MEMTAP_DIE_IN_SYSCALL=N, memtap SIGKILLs itself at the
 * entry stop of the Nth syscall it drives (1: the first), so that the
 * tests can see what a thread does that memtap leaves inside one.
 */
static void die_for_tests(void)
{
	static long left = -1;

	if (left < 0) {
		const char *env = getenv("MEMTAP_DIE_IN_SYSCALL");

		left = env ? strtol(env, NULL, 10) : 0;
	}
	if (left > 0 && --left == 0)
		raise(SIGKILL);
}

/*
 * remote_syscall() driven by syscall stops, from insn; from the
 * trampoline of pid when tramp (insn is its address): the registers
 * point there before the mask is changed, and come back after it is
 * restored, so that the thread, left alone at any moment, restores
 * both itself.  Without one, a thread left alone between the syscall's
 * entry and our restoring runs on with our registers.
 */
static int driven_syscall(pid_t tid, pid_t pid, int tramp, uint64_t insn, long nr,
			  const uint64_t args[6], const arch_regs_t *saved,
			  struct remote_result *res)
{
	struct held_signals held = { .n = 0 };
	arch_regs_t regs = *saved;
	uint64_t saved_mask = 0;
	int status, err, e, masked = 0, stops = 0;

	if (tramp) {
		if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(saved_mask), &saved_mask) < 0)
			return -errno;
		if ((err = remote_tramp_block(pid, tid, insn, saved, saved_mask)) < 0)
			return err;
	}
	call_regs(&regs, insn, nr, args);
	if ((err = arch_regs_set(tid, &regs)) < 0)
		return err;
	masked = block_signals(tid, &saved_mask);
	if (masked < 0) {
		err = masked;
		masked = 0;
		goto restore;
	}
	while (stops < 2) {
		int sig;

		if ((err = resume_wait(tid, PTRACE_SYSCALL, &status, res)) == -ESRCH)
			return err;
		if (err < 0)
			goto restore;
		sig = WSTOPSIG(status);
		if ((unsigned)status >> 16)
			continue;	/* our own seccomp stop, an interrupt */
		if (syscall_trap(tid, sig)) {
			stops++;	/* the syscall's entry, then its exit */
			if (stops == 1)
				die_for_tests();
			continue;
		}
		if (fault_signal(tid, sig)) {
			/* at insn: no syscall instruction there; never run on after one */
			if ((err = arch_regs_get(tid, &regs)) == 0)
				err = arch_pc(&regs) == insn ? -EFAULT : -EIO;
			goto restore;
		}
		/* SIGSTOP (never blocked), or any signal when none is */
		hold_signal(&held, tid, sig);
	}
	if ((err = arch_regs_get(tid, &regs)) < 0)
		goto restore;
	if (arch_pc(&regs) != insn + ARCH_SYSCALL_INSN_LEN) {
		err = -EIO;
		goto restore;
	}
	res->ret = arch_syscall_ret(&regs, ARCH_ABI_NATIVE);
restore:
	if (masked && ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(saved_mask),
			     &saved_mask) < 0 && !err)
		err = -errno;
	if ((e = arch_regs_set(tid, saved)) < 0 && !err)
		err = e;
	/*
	 * From the syscall stop to an interrupt stop, as the caller expects;
	 * on the way out of it, the kernel restarts the syscall the stop
	 * interrupted, if any (from a syscall stop it would not).
	 */
	if (stops > 0) {
		e = interrupt_stop(tid, &held, res);
		if (!err || e == -ESRCH)
			err = e;
	}
	requeue_signals(&held, tid);
	return err;
}

int remote_syscall(pid_t tid, uint64_t insn, long nr, const uint64_t args[6],
		   struct remote_result *res)
{
	uint64_t tp;
	pid_t tpid;
	arch_regs_t saved, regs;
	uint64_t saved_mask = 0;
	struct held_signals held;
	struct sandbox_verdict verdict;
	int status, err = 0, e, masked;

	res->ret = -ENOSYS;
	res->reaped = 0;
	res->status = 0;
	held.n = 0;
	refusal[0] = '\0';
	if (in_syscall_stop(tid))
		return -EBUSY;
	/* never run what the thread's seccomp filters forbid */
	if (!remote_may_inject(tid, &insn, nr, args, &verdict)) {
		sandbox_reason(&verdict, syscall_name(nr), refusal, sizeof(refusal));
		return -EPERM;
	}
	if ((err = arch_regs_get(tid, &saved)) < 0)
		return err;
	if (drivable(tid)) {
		if (tramp_usable(tid, nr, args, &tp, &tpid))
			return driven_syscall(tid, tpid, 1, tp, nr, args, &saved, res);
		return driven_syscall(tid, 0, 0, insn, nr, args, &saved, res);
	}

	/* else single steps: a memtap killed meanwhile leaves the trap flag set */

	regs = saved;
	call_regs(&regs, insn, nr, args);
	masked = block_signals(tid, &saved_mask);
	if (masked < 0)
		return masked;
	if ((err = arch_regs_set(tid, &regs)) < 0)
		goto restore;
	for (;;) {
		int sig, event;

		if ((err = resume_wait(tid, PTRACE_SINGLESTEP, &status, res)) == -ESRCH)
			return err;
		if (err < 0)
			goto restore;
		sig = WSTOPSIG(status);
		event = (unsigned)status >> 16;
		if (event)
			continue;	/* our own seccomp stop, an interrupt */
		if (sig == (SIGTRAP | 0x80))
			continue;
		if ((err = arch_regs_get(tid, &regs)) < 0)
			goto restore;
		if (sig == SIGTRAP && arch_pc(&regs) == insn + ARCH_SYSCALL_INSN_LEN)
			break;
		if (arch_pc(&regs) == insn && (sig == SIGSEGV || sig == SIGILL || sig == SIGBUS)) {
			err = -EFAULT;	/* no syscall instruction there */
			goto restore;
		}
		/* SIGSTOP (never blocked), or any signal when none is */
		if (sig != SIGTRAP)
			hold_signal(&held, tid, sig);
	}
	res->ret = arch_syscall_ret(&regs, ARCH_ABI_NATIVE);
restore:
	if ((e = arch_regs_set(tid, &saved)) < 0 && !err)
		err = e;
	if (masked && ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(saved_mask),
			     &saved_mask) < 0 && !err)
		err = -errno;
	requeue_signals(&held, tid);
	return err;
}

int64_t remote_mmap(pid_t tid, uint64_t insn, uint64_t addr, uint64_t len,
		    int prot, int flags, struct remote_result *res)
{
	const uint64_t args[6] = { addr, len, (uint64_t)prot, (uint64_t)flags,
				   (uint64_t)-1, 0 };
	int err = remote_syscall(tid, insn, SYS_mmap, args, res);

	return err < 0 ? err : res->ret;
}

int64_t remote_munmap(pid_t tid, uint64_t insn, uint64_t addr, uint64_t len,
		      struct remote_result *res)
{
	const uint64_t args[6] = { addr, len, 0, 0, 0, 0 };
	int err = remote_syscall(tid, insn, SYS_munmap, args, res);

	return err < 0 ? err : res->ret;
}

/*
 * remote.h - run one system call inside a traced thread (remote syscall
 * injection).
 *
 * The thread must already be in a ptrace-stop on its way back to user
 * mode: a signal-delivery-stop (an int3 SIGTRAP) or a PTRACE_EVENT_STOP
 * (the interrupt stop after PTRACE_SEIZE/PTRACE_INTERRUPT, the first stop
 * of a new task).  Syscall stops and PTRACE_EVENT_{FORK,VFORK,CLONE,EXEC,
 * EXIT} stops are refused with -EBUSY: the kernel is still inside the
 * syscall there.  After an exec event, PTRACE_INTERRUPT and resume the
 * thread: its next stop, before the first user instruction of the new
 * image, is a PTRACE_EVENT_STOP that will do.  No other thread is stopped
 * or disturbed.  remote_syscall() saves the registers and the signal
 * mask, blocks every signal (without PTRACE_GETSIGMASK, before Linux
 * 3.11: blocks none, and signals dequeued meanwhile are queued again
 * afterwards, see remote.c), points the pc at an existing syscall
 * instruction (the vdso has several; no byte of the target is written),
 * runs it to its syscall-exit stop (PTRACE_SYSCALL; from the stop of
 * another signal than SIGTRAP, or without PTRACE_SEIZE, single-steps
 * it), then puts registers and mask back: on return the thread is in a
 * stop on its way back to user mode again (a SIGTRAP's stop becomes a
 * PTRACE_EVENT_STOP), with the same registers.
 *
 * remote_syscall() waits for the thread with waitpid(tid, __WALL), so it
 * must be called from the tracer's own thread, between two waitpid(-1)
 * calls of the event loop.  If the thread dies meanwhile, its wait status
 * is consumed here and handed back in res->status (res->reaped set): the
 * caller must then treat the thread as dead.
 *
 * Seccomp: remote_syscall() runs nothing that the thread's seccomp
 * state forbids (strict mode, a filter that would kill, trap or fail
 * it, filters memtap cannot read): see sandbox.h.  Callers that want
 * to know beforehand, and why, ask remote_may_inject().
 *
 * Memory: linux/memio.h.
 */
#ifndef MEMTAP_REMOTE_H
#define MEMTAP_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

struct remote_result {
	int64_t ret;		/* the syscall's return value (-errno on failure) */
	int reaped;		/* 1: the thread died; status is its wait status */
	int status;
};

/*
 * Find the address of a syscall instruction (arch_find_syscall_insn())
 * in an executable mapping of pid: the vdso first, then any r-x
 * mapping.  0 or -errno.
 */
int remote_find_syscall_insn(pid_t pid, uint64_t *addr);
/* The same, tid a thread of pid in a ptrace-stop (pid itself above). */
int remote_find_syscall_insn_tid(pid_t pid, pid_t tid, uint64_t *addr);

/*
 * Run syscall nr with up to six arguments in thread tid, using the
 * syscall instruction at insn (from remote_find_syscall_insn() or one
 * that memtap wrote, or another one of the process if the thread's
 * seccomp filters allow the call from there only).  Returns 0 when the
 * syscall ran (its result, maybe negative, in res->ret), -errno when it
 * could not be run: -EBUSY (the thread is in a syscall stop), -EPERM
 * (its seccomp state does not allow it; nothing was done), -ESRCH
 * (gone; see res->reaped), -EIO.
 */
int remote_syscall(pid_t tid, uint64_t insn, long nr, const uint64_t args[6],
		   struct remote_result *res);

/*
 * Would remote_syscall(tid, *insn, nr, args) be let through by the
 * thread's seccomp state?  tid in a ptrace-stop.  1 yes (*insn may be
 * changed to another syscall instruction of the process that the
 * filters allow), 0 no; *v says why (sandbox_reason()).
 */
struct sandbox_verdict;
int remote_may_inject(pid_t tid, uint64_t *insn, long nr, const uint64_t args[6],
		      struct sandbox_verdict *v);

/*
 * Why the last remote_syscall() refused to run its syscall (-EPERM),
 * for a message after "process N (comm): ": "its seccomp filter forbids
 * mmap (...)"; NULL if it did not refuse.
 */
const char *remote_refusal(void);

/*
 * A trampoline in the process (remote-tramp.c): REMOTE_TRAMP_SIZE bytes
 * of executable memory of its own at at, written with the bytes of
 * remote_tramp_code(at, ...) (0 when room is too small; the CPU's code,
 * arch_tramp_code()).  Once set for
 * pid, remote_syscall() runs the syscalls of its threads from there
 * (when their seccomp filters allow it; else as before): stopped at the
 * syscall's exit (PTRACE_SYSCALL, no single step), so that a memtap
 * killed at any moment of it leaves the thread to restore its own
 * registers and signal mask and go on where it was.  _clear: the
 * memory is gone (exec) or no longer memtap's to use.
 */
#define REMOTE_TRAMP_SIZE ARCH_TRAMP_SIZE
size_t remote_tramp_code(uint64_t at, uint8_t *code, size_t room);
void remote_tramp_set(pid_t pid, uint64_t at);
void remote_tramp_clear(pid_t pid);

/*
 * A trampoline for the syscalls that map memtap's own memory, before
 * there is any (the first mapping of the stubs): written over the
 * REMOTE_TRAMP_SIZE bytes at at, executable memory that no code runs
 * (elfsym_code_gap()), and set for pid; remote_tramp_gap_end() puts the
 * bytes back (and clears it, unless another trampoline was set since).
 * A memtap killed in between leaves it there, never run.  0 or -errno.
 */
struct remote_gap {
	uint64_t at;
	int on;
	uint8_t orig[REMOTE_TRAMP_SIZE];
};
int remote_tramp_gap(pid_t pid, pid_t tid, uint64_t at, struct remote_gap *g);
void remote_tramp_gap_end(pid_t pid, pid_t tid, struct remote_gap *g);

/* Convenience wrappers: the mapped address, or -errno as an int64_t. */
int64_t remote_mmap(pid_t tid, uint64_t insn, uint64_t addr, uint64_t len,
		    int prot, int flags, struct remote_result *res);
int64_t remote_munmap(pid_t tid, uint64_t insn, uint64_t addr, uint64_t len,
		      struct remote_result *res);

#endif /* MEMTAP_REMOTE_H */

/*
 * sandbox.h - would a thread's seccomp filters let memtap inject this
 * syscall (sandbox.c)?
 *
 * A target may run under its own seccomp filters (systemd's
 * SystemCallFilter= and MemoryDenyWriteExecute=, browsers, container
 * runtimes), and a filter may kill the process for a syscall memtap
 * injects (the mmap of its scratch page: PROT_EXEC, anonymous).  Before
 * each injection, memtap reads Seccomp: in /proc/TID/status and, in
 * filter mode, fetches the thread's filters (PTRACE_SECCOMP_GET_FILTER,
 * root or CAP_SYS_ADMIN only; the thread must be in a ptrace-stop) and
 * runs them (bpf.c) on the struct seccomp_data the kernel would build:
 * nr, the native audit arch (arch.h's ARCH_AUDIT_NATIVE),
 * instruction_pointer (the address after the syscall instruction, where
 * the kernel takes it), args.
 *
 * Only SECCOMP_RET_ALLOW and SECCOMP_RET_LOG count as allowed, and
 * SECCOMP_RET_TRACE when every filter that returns it is memtap's own
 * launch filter (sandbox_own_filter()): memtap is then the tracer, with
 * PTRACE_O_TRACESECCOMP, and lets its own injected syscall through the
 * seccomp stop.  Strict mode (Seccomp: 1) allows nothing memtap injects;
 * filters that cannot be read allow nothing either (unknown), except
 * that a thread whose only filter is memtap's own is judged by it: as
 * its Seccomp_filters: says (Linux 5.9), or else as the tracer knows
 * (sandbox_count_hint()).  PTRACE_SECCOMP_GET_FILTER and Seccomp_filters:
 * are linux/features.h's seccomp_get_filter and seccomp_filters.
 */
#ifndef MEMTAP_SANDBOX_H
#define MEMTAP_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

struct sandbox_verdict {
	int allowed;		/* 1: the kernel would run the syscall */
	int mode;		/* Seccomp: 0 none, 1 strict, 2 filter; -1 unknown */
	int err;		/* filters unreadable: -errno of the fetch, else 0 */
	uint32_t action;	/* mode 2, filters read: the combined result */
};

/* The filters of one thread, as fetched. */
struct sandbox;

/*
 * Read thread tid's seccomp state (tid in a ptrace-stop, for the
 * filters).  Never fails: a state that cannot be read is kept as such
 * and allows nothing.  Free with sandbox_free().
 */
struct sandbox *sandbox_load(pid_t tid);
/* tid is gone: what sandbox_load() keeps of it goes too. */
void sandbox_forget(pid_t tid);
void sandbox_free(struct sandbox *sb);
/* 1 when sb has no seccomp at all (mode 0). */
int sandbox_none(const struct sandbox *sb);

/*
 * Would syscall nr (the native ABI) with args, run by the syscall
 * instruction at insn, be let through?  Fills *v; returns v->allowed.
 */
int sandbox_allows(const struct sandbox *sb, long nr, const uint64_t args[6], uint64_t insn,
		   struct sandbox_verdict *v);

/* sandbox_load() + sandbox_allows() + sandbox_free(). */
int sandbox_check(pid_t tid, long nr, const uint64_t args[6], uint64_t insn,
		  struct sandbox_verdict *v);

/*
 * Why v does not allow syscall call, for a message after "process N
 * (comm): ": "its seccomp filter forbids mmap (KILL_PROCESS)", ...
 */
void sandbox_reason(const struct sandbox_verdict *v, const char *call, char *buf,
		    size_t size);

/*
 * Launch mode: the filter memtap installs in the command (copied).
 * Its SECCOMP_RET_TRACE results are memtap's own stops.
 */
void sandbox_own_filter(const struct sock_filter *prog, size_t len);

/*
 * Where the kernel does not say how many filters a thread has (before
 * Linux 5.9), count(tid) says it if the tracer knows (a command it
 * launched with its filter, that installed none since), else -1.
 */
void sandbox_count_hint(long (*count)(pid_t tid));

#endif /* MEMTAP_SANDBOX_H */

/*
 * stop.h - the kinds of ptrace stop, as the CPU's cpu.h is asked about
 * them (arch_at_syscall_entry()): included by every cpu.h, so that it
 * needs nothing else of arch.h.
 */
#ifndef MEMTAP_ARCH_STOP_H
#define MEMTAP_ARCH_STOP_H

/*
 * The kinds of ptrace stop at which the registers may tell a syscall's
 * entry from its exit: a PTRACE_SYSCALL stop (SIGTRAP | 0x80), a
 * PTRACE_EVENT_SECCOMP stop (always an entry: the syscall has not run
 * yet), any other stop (the registers say nothing of a syscall there).
 */
enum arch_stop {
	ARCH_STOP_SYSCALL,
	ARCH_STOP_SECCOMP,
	ARCH_STOP_OTHER
};

#endif /* MEMTAP_ARCH_STOP_H */

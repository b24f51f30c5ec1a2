/*
 * bpf.h - a classic-BPF interpreter for seccomp filters (bpf.c), and the
 * kernel's rule for combining the results of several filters.
 *
 * memtap runs a target's own seccomp filters on the struct seccomp_data
 * of a syscall it is about to inject, to know beforehand what the kernel
 * would do with it.  The interpreter accepts what the kernel's
 * seccomp_check_filter() accepts (loads of 32-bit words of seccomp_data,
 * scratch memory, ALU, forward jumps, returns) and rejects anything
 * else: an unknown opcode, a load outside seccomp_data or the scratch
 * memory, a jump past the end, running off the end.  Pure functions: no
 * state, no allocation, usable by unit tests without a tracee.
 */
#ifndef MEMTAP_BPF_H
#define MEMTAP_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* Results that older headers lack. */
#ifndef SECCOMP_RET_KILL_PROCESS
# define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_RET_ACTION_FULL
# define SECCOMP_RET_ACTION_FULL 0xffff0000U
#endif
#ifndef SECCOMP_RET_LOG
# define SECCOMP_RET_LOG 0x7ffc0000U
#endif
#ifndef SECCOMP_RET_USER_NOTIF
# define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif

/* The kernel's limit on one program (BPF_MAXINSNS). */
#define BPF_PROG_MAX 4096

/*
 * Run prog (len instructions) on data; on success store what it
 * returned in *ret and return 0.  -EINVAL: the program is invalid
 * (nothing is known of its result).  Division by a zero X returns 0,
 * as in the kernel (SECCOMP_RET_KILL_THREAD for seccomp); shift counts
 * are taken modulo 32.
 */
int bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data,
	    uint32_t *ret);

/*
 * Combine the results of n filters, rets[0] being the most recently
 * installed one, as the kernel does: the most restrictive action wins
 * (KILL_PROCESS > KILL_THREAD > TRAP > ERRNO > USER_NOTIF > TRACE > LOG
 * > ALLOW, comparing the action bits as a signed number), and among
 * equal actions the most recent filter's value, data included.  n == 0
 * gives SECCOMP_RET_ALLOW.  *which, if not NULL, gets the index of the
 * filter whose value was taken (0 when n == 0).
 */
uint32_t bpf_seccomp_combine(const uint32_t *rets, size_t n, size_t *which);

/* "KILL_PROCESS", "ERRNO"...: the name of a result's action. */
const char *bpf_seccomp_action_name(uint32_t ret);

#endif /* MEMTAP_BPF_H */

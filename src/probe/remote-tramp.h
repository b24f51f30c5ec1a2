/*
 * remote-tramp.h - the trampoline of injected syscalls (remote-tramp.c),
 * for remote.c: private to the two.  The public part is in remote.h.
 */
#ifndef MEMTAP_REMOTE_TRAMP_H
#define MEMTAP_REMOTE_TRAMP_H

#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

/* The trampoline of tid's process: 1 (*pid, *at), or 0. */
int remote_tramp_find(pid_t tid, pid_t *pid, uint64_t *at);
/* Before an injection: what the thread goes back to, r and mask at its stop.  0 or -errno. */
int remote_tramp_block(pid_t pid, pid_t tid, uint64_t at, const arch_regs_t *r, uint64_t mask);

#endif /* MEMTAP_REMOTE_TRAMP_H */

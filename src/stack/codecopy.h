/*
 * codecopy.h - copies of run-time code taken at the stop where it was
 * made executable, for the unwinders' reads of code (codecopy.c).
 *
 * A JIT rewrites its code where it was (W^X: the page made writable,
 * written, made executable again) or maps other code at its address,
 * and memtap unwinds stacks after the thread went on: a stack of the
 * old code unwound after the rewrite (a breakpoint's, queued; an
 * in-target probe's record, read late from the ring), or of code
 * unmapped since, would be read by the instructions there now.  The
 * tracer copies the code of anonymous memory at the exit of the
 * mmap or mprotect that made it executable, the thread still stopped:
 * no call of that code was made before (it was not executable), and
 * every call of the code it replaced was made before (the tracer
 * unwinds those first, with the copy of before).  Until the next such
 * stop over the same addresses, the unwinders read the code there from
 * the copy, not from the process (unwind-insn.h's reads: the rules of
 * code without CFI).
 *
 * Bounded: CODE_COPY_MAX bytes of a range (a larger one is not copied,
 * its code read from the process as before), CODE_COPIES_MAX copies
 * per process (the oldest goes).  main thread only.
 */
#ifndef MEMTAP_CODECOPY_H
#define MEMTAP_CODECOPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CODE_COPY_MAX (1u << 20)
#define CODE_COPIES_MAX 16

struct code_copies;

/*
 * [addr, addr + len) of pid was made executable, thread tid stopped
 * (its memory as the code will run it): the copies overlapping the
 * range dropped, then the range copied into *cc (made at first use)
 * when it is anonymous memory (anon) and at most CODE_COPY_MAX bytes.
 * 1 copied, 0 not (dropped only), -errno when the read failed.
 */
int code_copy_take(struct code_copies **cc, pid_t pid, pid_t tid, uint64_t addr,
		   uint64_t len, int anon);

/*
 * len bytes at addr from a copy into buf: 1 when one copy holds them
 * all, 0 when none does (the caller reads the process).  cc may be
 * NULL.
 */
int code_copy_read(const struct code_copies *cc, uint64_t addr, void *buf, size_t len);

/* Copies held, and bytes (statistics, tests). */
size_t code_copies_count(const struct code_copies *cc, uint64_t *bytes);

void code_copies_free(struct code_copies *cc);

#endif /* MEMTAP_CODECOPY_H */

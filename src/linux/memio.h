/*
 * memio.h - read and write a tracee's memory, whatever the kernel offers.
 *
 * Reads: process_vm_readv, else /proc/PID/mem (which also reads PROT_NONE
 * and execute-only pages), else PTRACE_PEEKDATA word by word through
 * tid, a thread of the process in a ptrace-stop.  Writes:
 * process_vm_writev (writable pages), else /proc/PID/mem (text
 * included), else PTRACE_PEEKDATA/POKEDATA through tid, changing only the
 * bytes asked for, never the rest of a word.  Which paths exist is
 * linux/features.h's (MEMTAP_DISABLE forces them off).
 *
 * Call while tid is still stopped when the copy must be complete: the
 * PEEKDATA path works only then, and a running thread changes its stack.
 * /proc/PID/mem is opened once per process and kept (close-on-exec);
 * after the process exec'd, or died and its pid was reused, the stale
 * fd reads nothing and is reopened by itself.  memio_forget() closes it.
 */
#ifndef MEMTAP_MEMIO_H
#define MEMTAP_MEMIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read up to len bytes at addr of process pid (tid: a stopped thread of
 * it for the PEEKDATA fallback, or 0).  Returns how many bytes were
 * copied from addr on: fewer than len when the memory that follows
 * cannot be read (a stack's end; or the PEEKDATA path lost the thread),
 * which a caller that wanted them all reports (a stack cut short).
 * -errno when nothing could be read.
 */
ssize_t memio_read(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len);

/* All len bytes, or -errno (a short read is -EIO). */
int memio_read_all(pid_t pid, pid_t tid, uint64_t addr, void *buf, size_t len);

/* One range of memio_read_many(): len bytes at addr into buf. */
struct memio_seg {
	uint64_t addr;
	void *buf;
	size_t len;
};

/*
 * Every range of segs, all of it, or -errno: as many memio_read_all()
 * calls, in one process_vm_readv per IOV_MAX ranges when there is one.
 */
int memio_read_many(pid_t pid, const struct memio_seg *segs, size_t n);

/* Write len bytes at addr, read-only text included: 0 or -errno. */
int memio_write(pid_t pid, pid_t tid, uint64_t addr, const void *buf, size_t len);

/*
 * Write len bytes of code at addr (an instruction the target may run:
 * a breakpoint, its undo, a displaced instruction, a detour's jmp or
 * stub, a trampoline): 0 or -errno.  Through /proc/PID/mem or
 * PTRACE_POKETEXT only, never process_vm_writev: the kernel writes
 * those two through the target's mapping of the page and keeps the
 * instruction cache coherent with it (copy_to_user_page() in
 * access_remote_vm()), which a CPU whose instruction cache is not
 * coherent with its stores needs (arm64); process_vm_writev copies as
 * a plain store would.
 */
int memio_write_code(pid_t pid, pid_t tid, uint64_t addr, const void *buf, size_t len);

/* Close pid's cached /proc/PID/mem (it exited); harmless if none. */
void memio_forget(pid_t pid);

#endif /* MEMTAP_MEMIO_H */

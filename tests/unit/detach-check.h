/*
 * detach-check.h - what bp-harness -V and text-check look for in a
 * process that memtap (or the harness) has left: text changed by
 * breakpoints, threads still stopped or traced.
 */
#ifndef DETACH_CHECK_H
#define DETACH_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where the text first differs: offset in p_vaddr space, the two bytes. */
struct text_diff {
	size_t addr;
	uint8_t file, mem;
};

/*
 * Compare the executable PT_LOAD segments of the ELF file path (as pid
 * sees it, through /proc/PID/root) with pid's memory at bias: 0 when
 * equal, 1 when not (*diff: the first difference), -1 when a segment
 * cannot be read, -2 when the file cannot be opened or is no ELF file.
 */
int text_compare(pid_t pid, const char *path, uint64_t bias, struct text_diff *diff);

/* Threads of pid in a tracing stop or with a tracer; -1 when pid is gone. */
int traced_threads(pid_t pid);

#endif

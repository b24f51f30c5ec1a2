/*
 * jitnames.h - names of the code that a JIT or an interpreter made at
 * run time, in anonymous memory, from the files the runtime writes for
 * perf: /tmp/perf-PID.map and jit-PID.dump (jitdump).
 *
 * A frame at a pc in no file mapping of process PID is stored with the
 * module id jit_names_module(PID) (a name source of that process,
 * JIT_MODULE_BASE and up, never a real module's id: module_get() gives
 * NULL for it) and the raw pc.  The symbolizer names it with
 * jit_names_lookup(); a pc no file names stays "[unknown] (0x...)".
 * The id is that of the process's current epoch: code rewritten where
 * code was (a perf map line at the start of a range already named, a
 * jitdump CODE_LOAD there, a CODE_MOVE), once read, ends the epoch for
 * the frames stored under its id: they are named by the entries read
 * before the first such one (a pc that none of them names: by the
 * latest, or JIT_UNSURE_NAME when more than one was read since); not
 * a file's first read (jit_names_rewrites()).  The frames stored after jit_names_new_epoch() get the id of
 * a new epoch, named by the files as read from then on.  So a frame is
 * named by the line of the code that ran when its stack was stored, as
 * far as memtap had read the files by then, however late the report is.
 *
 * The perf map is /tmp/perf-PID.map in the process's own root
 * (containers included); the jitdump is found through the runtime's own
 * mapping of it (a /proc/PID/maps line naming jit-PID.dump, PROT_EXEC
 * as perf asks) and opened through /proc/PID/map_files (else by its
 * path in the process's root).  Both are opened with tfile_open()
 * (linux/tfile.h) only, and only when owned by one of the process's
 * uids, as perf requires (--trust-files: whoever owns them); a refused
 * file is one warning (tfile.c's) and the process goes without it: it
 * is looked for again at the retry interval only, with no new warning.
 * Both are appended to as code is made: each is read from where the
 * last read stopped, when a pc of an event is not covered by what was
 * read (jit_names_note()), when the process exits (jit_names_exiting():
 * a JVM with -XX:+DumpPerfMapAtExit writes its map then) and before the
 * names are looked up.  The files stay open: what was read, and what is
 * appended later, can be read after the process is gone.  Of ranges
 * that overlap, the one read last names the code (a map's later line, a
 * jitdump's CODE_MOVE).
 *
 * Bounds: JIT_NAME_MAX bytes a name (longer ones cut), JIT_MAX_ENTRIES
 * ranges (or fewer: jit_names_set_max_entries()) and JIT_MAX_BYTES
 * read a file.  A perf map's table that is full (of ranges, or of
 * names: JIT_POOL_MAX) keeps its newer half and reads on, the older
 * code unnamed from then on; a jitdump's stops.  A malformed file gives one
 * warning line and what was read before the fault.  The reads happen on
 * the tracer thread, while target threads may wait for it: a read for
 * an event or a lookup takes JIT_READ_STEP bytes of a file at most (the
 * rest at the next ones); the read at the exit and jit_names_read_all()
 * (a report) read up to JIT_MAX_BYTES.
 *
 * Not thread-safe: memtap's main thread only.  Everything lives until
 * jit_names_release_all(), or a process's names until
 * jit_names_forget() (a long run: the process exited and was reported).
 */
#ifndef MEMTAP_JITNAMES_H
#define MEMTAP_JITNAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JIT_MODULE_BASE 0xf0000000u	/* .. MODULE_NONE - 1 */
#define JIT_NAME_MAX 1024
#define JIT_MAX_ENTRIES (1u << 21)
#define JIT_MAX_BYTES (1ull << 30)
#define JIT_READ_STEP (4ull << 20)	/* bytes of a file read for an event */

static inline int jit_is_module(uint32_t module)
{
	return module >= JIT_MODULE_BASE && module != UINT32_MAX;
}

/*
 * The module id of pid's run-time code, its name source made on first
 * use (no file read yet).  UINT32_MAX (MODULE_NONE) when the table of
 * sources is full.
 */
uint32_t jit_names_module(pid_t pid);

/* An event's frame at pc of module (jit_names_module()): read more of
 * the files when no range read so far covers pc and they grew. */
void jit_names_note(uint32_t module, uint64_t pc);

/*
 * Code rewritten where code was, as pid's files say: the count of
 * ranges read over an earlier range's start (a perf map's later line, a
 * jitdump's CODE_LOAD) and of CODE_MOVEs, those of a file's first read
 * that found ranges not counted (made before memtap looked: its frames
 * are named by the latest), after reading what the files gained (JIT_READ_STEP bytes at most, as jit_names_note()).  0, with
 * no read and no file looked for, when no file of pid is open.  A
 * change of the count means the rules kept by pc of pid's run-time code
 * are stale (unwinder_code_changed()): the tracer asks at each stack
 * it copies, two fstat() calls for a process with a file.
 */
uint64_t jit_names_rewrites(pid_t pid);

/*
 * The stacks stored so far are stored (the caller flushed them): if
 * pid's files said code was rewritten since its epoch began, the
 * frames stored from now on get a new epoch's module id
 * (jit_names_module()).  At most MAX_EPOCHS (jitnames.c) for all
 * processes: past that, the epoch's frames are named by the latest
 * files, as the frames of all epochs were before.
 */
void jit_names_new_epoch(pid_t pid);

/*
 * on: the frames stored until jit_names_unsure(pid, 0) ran run-time
 * code of pid that is not known, rewritten around the call (a ring's
 * record, record/event.h's EV_CODE_UNSURE): jit_names_module(pid) gives
 * the id of an epoch whose every pc is named JIT_UNSURE_NAME.
 */
#define JIT_UNSURE_NAME "[rewritten code]"
void jit_names_unsure(pid_t pid, int on);

/*
 * jit_names_rewrites() for a reader that reads the files often, before
 * their code runs (trace/ring-code.h): pid's source made at once and its
 * perf map looked for at the retry interval while missing (its jitdump,
 * found by a read of /proc/PID/maps, only as jit_names_note() does).
 */
uint64_t jit_names_code_read(pid_t pid);

/*
 * Ranges a table keeps at most, from 2 to JIT_MAX_ENTRIES (the default),
 * for the tables filled from then on: a long-running tracer's bound.
 */
void jit_names_set_max_entries(size_t n);

/* pid exits (its address space still there): read its files once more. */
void jit_names_exiting(pid_t pid);

/* Before a report: read every process's files up to the cap. */
void jit_names_read_all(void);

/*
 * pid's names are no longer wanted (record/sink.h's sink_proc_forget()):
 * its tables freed, its files closed; its module id is never given
 * again, and its frames stay unnamed ("[unknown] (0x...)").  A later
 * process of the same pid gets a source of its own.
 */
void jit_names_forget(pid_t pid);

/*
 * The name of pc in module, NULL if none; *start: the code's start.
 * With lines, *file and *line from the jitdump's DEBUG_INFO, when it
 * has them (else NULL and 0).  The strings stay valid until
 * jit_names_release_all().
 */
const char *jit_names_lookup(uint32_t module, uint64_t pc, uint64_t *start,
			     const char **file, int *line);

/*
 * The unwinding information a jitdump gave for the code at pc
 * (JIT_CODE_UNWINDING_INFO, which precedes the CODE_LOAD it is for):
 * an .eh_frame and its .eh_frame_hdr as the runtime wrote them, for
 * code loaded at [code_start, code_end), the pointers of the
 * eh_frame_hdr relative to itself as perf's jitdump documents them;
 * mapped_size: bytes of it the runtime also placed in memory after the
 * code (0: none).  0, or -1 when none.  Not used by the unwinders yet.
 * Borrowed until jit_names_release_all().
 */
struct jit_unwind {
	uint64_t code_start, code_end;
	const unsigned char *eh_frame;
	size_t eh_frame_size;
	const unsigned char *eh_frame_hdr;
	size_t eh_frame_hdr_size;
	uint64_t mapped_size;
};
int jit_names_unwind(uint32_t module, uint64_t pc, struct jit_unwind *u);

/* Counts for -v: sources, ranges read, files found. */
void jit_names_counts(uint64_t *sources, uint64_t *ranges, uint64_t *files);

void jit_names_release_all(void);

#endif /* MEMTAP_JITNAMES_H */

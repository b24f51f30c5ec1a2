/*
 * modules.h - which file holds the code at a pc: per-process lists of
 * executable mappings, and one global table of modules (ELF files).
 *
 * A frame is stored as (module id, address relative to the module's
 * ELF), the address addr2line and libdw take for that file, so that
 * symbolization can run once at report time, after the process exited
 * or unloaded the library.
 *
 * Global module table: a module is a distinct file, identified by the
 * device and inode /proc/PID/maps shows (by path when the inode is 0),
 * whichever process mapped it.  Ids are dense, from 0, never reused;
 * entries live until modules_release_all() at exit.  A module keeps the
 * file open (opened through /proc/PID/map_files or /proc/PID/root, so
 * that files of other mount namespaces, deleted or replaced files still
 * resolve after the process is gone), up to MODULE_MAX_FDS modules;
 * later ones are reopened by path, in the root of the process that
 * mapped it, if still the inode mapped.  Every open is tfile_open()'s
 * (linux/tfile.h): a FIFO, a symbolic link, a device or a file over the
 * ELF cap planted at a module's path is refused, and the module has no
 * file.
 *
 * Per-process list (struct proc_modules): the executable file mappings
 * of /proc/PID/maps, sorted, re-read lazily: modules_map_changed() only
 * bumps a generation; the next modules_resolve() (or modules_refresh())
 * re-reads the file.
 *
 * Misses.  A pc outside every known module may be code mapped in a way
 * memtap did not see: it triggers a re-read, at most once per event
 * (modules_event_begin() grants one), and never for a pc known not to
 * be in a file's code: one inside another mapping of the last read
 * (anonymous code of a JIT, [vsyscall], or data: a garbage return
 * address), or one that a re-read did not find either (remembered until
 * the ranges change).
 */
#ifndef MEMTAP_MODULES_H
#define MEMTAP_MODULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"

#define MODULE_NONE UINT32_MAX
#define MODULE_MAX_FDS 512
#define MODULES_MISS_CACHE 256	/* pcs known to miss, direct-mapped */
#define MODULE_BUILD_ID_MAX 64

/* One PT_LOAD segment of a module's ELF. */
struct module_load {
	uint64_t offset;	/* p_offset */
	uint64_t vaddr;		/* p_vaddr */
	uint64_t filesz;	/* p_filesz */
	uint64_t memsz;
	unsigned flags;		/* p_flags (PF_X ...) */
};

struct module {
	uint32_t id;
	char *path;		/* as in maps, " (deleted)" removed; or "[vdso]" */
	const char *name;	/* basename, points into path */
	dev_t dev;
	ino_t ino;
	int fd;			/* the open file, -1 if none */
	int deleted;		/* maps said " (deleted)" */
	pid_t pid;		/* the process whose root path is in; 0: memtap's */
	int elf_ok;		/* program headers read */
	int elf_type;		/* ET_EXEC, ET_DYN, 0 if unknown */
	unsigned char build_id[MODULE_BUILD_ID_MAX];
	size_t build_id_len;	/* 0 = none */
	struct module_load *loads;
	size_t nloads;
	uint64_t first_vaddr;	/* first PT_LOAD p_vaddr, page-aligned down */
	uint64_t end_vaddr;	/* highest p_vaddr + p_memsz */
	struct go_runtime *go;	/* a Go program's runtime (goruntime.h), or NULL */
};

/* An executable mapping: rel = pc - bias for pc in [start, end). */
struct module_range {
	uint64_t start, end;
	uint64_t bias;		/* load bias of the module instance */
	uint64_t offset;	/* file offset of start */
	uint32_t module;
};

/*
 * Code without CFI whose frames memtap knows: the in-target probes'
 * stub mappings (probe/detour.h).  A stub_frame_fn gives the frame at a
 * pc in [start, end) of process pid, with sp its stack pointer there:
 * the caller's return address is at sp + ra_off, the caller's stack
 * pointer sp + ra_off + 8, and each callee-saved register the code
 * saved (the arch's, in arch_saved_reg()'s order) is at sp + saved[i]
 * (-1: the code left it alone); ra_off STUB_RA_IN_REG (arch/stub-frame.h):
 * the return address is still in the CPU's return-address register,
 * sp the caller's.  0, or -1 when the pc has no known frame there.
 */
struct stub_frame {
	uint32_t ra_off;
	int32_t saved[ARCH_NSAVED];
};

typedef int (*stub_frame_fn)(pid_t pid, uint64_t start, uint64_t pc, struct stub_frame *f);

struct stub_range {
	uint64_t start, end;
	stub_frame_fn frame;
};

#define MODULES_MAX_STUBS 4

/* Mappings of the last read that hold no module's code. */
struct other_range {
	uint64_t start, end;
	int file;		/* of a file (not code), else anonymous memory */
	int exec;		/* executable: code made at run time (JIT) */
};

struct proc_modules {
	pid_t pid;
	uint64_t serial;	/* this list's, unique for the run: keys of caches */
	unsigned generation;	/* bumped by modules_map_changed() */
	unsigned read_generation; /* generation the ranges were read at */
	unsigned version;	/* bumped when a re-read changed the ranges */
	struct module_range *ranges;	/* sorted by start, disjoint */
	size_t nranges, cap;
	struct other_range *other;	/* of the last read, sorted, merged */
	size_t nother, other_cap;
	uint64_t miss_cache[MODULES_MISS_CACHE];	/* 0 = empty */
	int miss_budget;	/* re-reads a miss may still cause (this event) */
	struct stub_range stubs[MODULES_MAX_STUBS];	/* modules_add_stubs() */
	size_t nstubs;
	/*
	 * The runtime of the first Go module of the last read (goruntime.h),
	 * the module's, and its bias; NULL: none (every process not in Go).
	 */
	const struct go_runtime *go;
	uint64_t go_bias;
	uint64_t reads;		/* statistics: /proc/PID/maps reads */
	uint64_t miss_reads;	/* of which caused by a miss */
	/* run-time code as it was made executable (codecopy.h); NULL: none */
	struct code_copies *code;
};

/*
 * Allocate the list of pid; nothing is read until the first lookup.
 * Freed by proc_modules_free(), which leaves the global modules alone.
 */
struct proc_modules *proc_modules_new(pid_t pid);
void proc_modules_free(struct proc_modules *pm);

/* Mappings may have changed (exec, dlopen, dlclose): re-read lazily. */
void modules_map_changed(struct proc_modules *pm);

/*
 * Filters for the tracer's memory events, so that anonymous memory
 * (the common case) costs no re-read: an mmap with PROT_EXEC, an
 * munmap or mremap overlapping a known executable mapping mark the list
 * changed.
 */
void modules_note_mmap(struct proc_modules *pm, uint64_t addr, uint64_t len, int prot);
void modules_note_unmap(struct proc_modules *pm, uint64_t addr, uint64_t len);
/*
 * mprotect made [addr, addr + len) executable: marks the list changed
 * unless the range is known code already (a module's, or anonymous code
 * of the last read: JITs flip their pages often) or anonymous memory
 * (which becomes JIT code, not a module's).
 */
void modules_note_mprotect(struct proc_modules *pm, uint64_t addr, uint64_t len);

/*
 * Re-read /proc/PID/maps now if the list is marked changed (or force).
 * Returns 1 when the ranges changed, 0 when not, -1 when maps could not
 * be read (the process is gone: the old ranges stay).
 */
int modules_refresh(struct proc_modules *pm, int force);

/*
 * A new event: a miss may re-read the maps once more (see above).  Call
 * it while the thread is stopped, before the first lookup of the event.
 */
static inline void modules_event_begin(struct proc_modules *pm)
{
	pm->miss_budget = 1;
}

/*
 * The range holding pc, after a re-read when the list is marked changed
 * or when pc misses (as the miss policy above allows); NULL if none.
 */
const struct module_range *modules_lookup(struct proc_modules *pm, uint64_t pc);

/*
 * The module of pc and the address relative to its ELF.  Returns 0, or
 * -1 when pc is in no file mapping (JIT code, [vsyscall], garbage):
 * *module_id = MODULE_NONE, *rel_addr = pc.  modules_lookup() inside.
 */
int modules_resolve(struct proc_modules *pm, uint64_t pc, uint32_t *module_id,
		    uint64_t *rel_addr);

/* The range holding pc, NULL if none (no re-read). */
const struct module_range *modules_find_range(const struct proc_modules *pm, uint64_t pc);
/*
 * Is pc code as of the last read: a module's, the stubs', or anonymous
 * executable memory (a JIT's)?  Reads nothing.
 */
int modules_is_code(const struct proc_modules *pm, uint64_t pc);

/*
 * [start, start + len) holds stubs whose frames fn knows (see struct
 * stub_frame); up to MODULES_MAX_STUBS ranges, the same range once.
 * They stay until modules_clear_stubs() (a new image).
 */
void modules_add_stubs(struct proc_modules *pm, uint64_t start, uint64_t len, stub_frame_fn fn);
void modules_clear_stubs(struct proc_modules *pm);
/* The stub range holding pc, NULL if none (pm may be NULL). */
const struct stub_range *modules_find_stubs(const struct proc_modules *pm, uint64_t pc);
/* The stub ranges of parent, for a child that shares or copies its memory. */
void modules_copy_stubs(struct proc_modules *child, const struct proc_modules *parent);

/* Bumped each time a re-read changed the ranges. */
static inline unsigned modules_version(const struct proc_modules *pm)
{
	return pm->version;
}

/* Global table: NULL for MODULE_NONE or an unknown id.  Borrowed. */
const struct module *module_get(uint32_t id);
uint32_t module_count(void);

/*
 * Register a file by path, without a process (tests, tools): the file is
 * opened (tfile.h, in memtap's root), its ELF headers read.  Returns its id (an existing one if the
 * same file is known), or MODULE_NONE if it cannot be opened.
 */
uint32_t module_intern_file(const char *path);

/* A module's build-id as lowercase hex into buf (>= 2*len+1); "" if none. */
char *module_build_id_hex(const struct module *m, char *buf, size_t size);
/* The same for the len bytes of build-id id. */
char *build_id_hex(const unsigned char *id, size_t len, char *buf, size_t size);

/*
 * Open the module's file for reading: a dup of the kept descriptor, or
 * the path.  Returns a descriptor the caller closes, or -1.
 */
int module_open(const struct module *m);

/* Free every module (at exit, after the report). */
void modules_release_all(void);

#endif /* MEMTAP_MODULES_H */

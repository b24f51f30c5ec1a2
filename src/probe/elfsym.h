/*
 * elfsym.h - runtime addresses of functions in a running process, with
 * libelf: the ELF objects of /proc/PID/maps, their load bias, their
 * symbols (.dynsym, .symtab, and .symtab of a separate debug file), and
 * name resolution in the dynamic linker's scope order.
 *
 * Files are opened as the target sees them: /proc/PID/root/<path>
 * (containers), or /proc/PID/map_files/<range> when the file was deleted
 * or replaced (root only).  Debug files are
 * found through the build-id (/usr/lib/debug/.build-id/xx/rest.debug) or
 * .gnu_debuglink, in the target's root first.
 *
 * Life cycle: elfsym_proc_load() reads maps and every object once; the
 * result is a snapshot: after exec, dlopen or dlclose, free it and load
 * again.  elfsym_proc_free() frees everything; the strings and module
 * pointers of a struct elfsym_result belong to the elfsym_proc and live
 * until it is freed.  Malformed or unreadable files are skipped (counted
 * in elfsym_proc_skipped()), never fatal; nothing here exits or prints
 * except debug_msg().
 */
#ifndef MEMTAP_ELFSYM_H
#define MEMTAP_ELFSYM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct elfsym_proc;
struct elfsym_image;

struct elfsym_module {
	const char *path;	/* as /proc/PID/maps names it */
	const char *soname;	/* DT_SONAME or NULL */
	uint64_t lo, hi;	/* the address range of its mappings */
	uint64_t bias;		/* runtime address = st_value + bias */
	int etype;		/* ET_EXEC or ET_DYN */
	int scope;		/* position in the lookup scope, 0 = executable */
};

struct elfsym_result {
	uint64_t addr;		/* runtime address */
	uint64_t size;		/* st_size */
	const char *name;	/* the symbol that matched */
	const struct elfsym_module *module;
	int local;		/* STB_LOCAL: from .symtab only */
	int ifunc;		/* STT_GNU_IFUNC: addr is the resolver */
};

/*
 * Read the objects mapped in pid.  NULL with errno set when maps cannot
 * be read (ESRCH, EACCES); objects that fail are skipped.
 */
struct elfsym_proc *elfsym_proc_load(pid_t pid);
void elfsym_proc_free(struct elfsym_proc *p);

/* Modules in scope order (executable, LD_PRELOAD, DT_NEEDED breadth-first, rest). */
size_t elfsym_proc_nmodules(const struct elfsym_proc *p);
const struct elfsym_module *elfsym_proc_module(const struct elfsym_proc *p, size_t i);
/* The module whose mappings contain addr, or NULL. */
const struct elfsym_module *elfsym_module_at(const struct elfsym_proc *p, uint64_t addr);
/*
 * A place of len bytes in executable memory that no code uses: in the
 * last page of a module's executable segment, after its bytes (from a
 * 16-byte boundary).  0 and *at, or -ENOSPC.
 */
int elfsym_code_gap(const struct elfsym_proc *p, size_t len, uint64_t *at);
/* How many mapped objects could not be read. */
size_t elfsym_proc_skipped(const struct elfsym_proc *p);

/*
 * Resolve spec, "NAME" or "NAME@OBJECT" (OBJECT: a path, a basename, or
 * a basename prefix such as "libc" or "libjemalloc.so"), with prefix
 * (NULL, "je_", "_rjem_"...) put before NAME, as the dynamic linker
 * would bind it: the first exported definition in scope order.  When no
 * object exports it, the first definition in .symtab (static binaries,
 * local functions), then a Rust mangled name (v0 or legacy) whose path
 * ends with NAME ("exchange_malloc", "alloc::exchange_malloc").
 * Returns 0 or -ENOENT.
 */
int elfsym_lookup(struct elfsym_proc *p, const char *spec, const char *prefix,
		  struct elfsym_result *out);
/*
 * elfsym_lookup() for a function of an allocator's API that may be
 * absent (jemalloc's mallocx...): a library's separate debug file is
 * searched only when an earlier lookup read it (the executable's
 * always), not read for a name that a library's API would export.
 */
int elfsym_lookup_api(struct elfsym_proc *p, const char *spec, const char *prefix,
		      struct elfsym_result *out);

/*
 * The preferred name of the function at runtime address addr (aliases
 * share one address: "malloc" rather than "__libc_malloc"), or NULL.
 */
const char *elfsym_name_at(struct elfsym_proc *p, uint64_t addr);
/*
 * st_value of the first defined function or object named name in the
 * module's file (then its debug file), as elfsym_image_lookup: 0 or
 * -ENOENT.  Objects too (elfsym_lookup is for functions).
 */
int elfsym_module_lookup(const struct elfsym_module *m, const char *name, uint64_t *value);

/* ---- one ELF file, for tests and tools ---- */

/*
 * Open and parse one ELF file of memtap's own (tools, tests: a target's
 * are opened in its root, elfsym.c): its program headers, symbols,
 * DT_NEEDED, build-id.  The path's links are resolved, then the file is
 * opened by tfile_open() (a regular file within the cap).  NULL with
 * errno: ENOENT/EACCES (open), ENOEXEC (not ELF, truncated, malformed).
 */
struct elfsym_image *elfsym_image_open(const char *path);
void elfsym_image_free(struct elfsym_image *img);
/* st_value of the first defined function or object named name: 0 or -ENOENT. */
int elfsym_image_lookup(const struct elfsym_image *img, const char *name,
			uint64_t *value);
size_t elfsym_image_nsyms(const struct elfsym_image *img);

/* Does mangled (a Rust v0 "_R..." or legacy "_ZN...E" name) end with path? */
int elfsym_rust_match(const char *mangled, const char *path);

#endif /* MEMTAP_ELFSYM_H */

/*
 * symbolize.h - (module id, relative address) to function names, source
 * lines and inlined frames, with libdw; run at report time only.
 *
 * Debug information is found as gdb finds it: in the file itself, by
 * .gnu_debuglink next to it or under /usr/lib/debug, and by build-id
 * under /usr/lib/debug/.build-id/xx/yyyy.debug.  Names are demangled
 * (C++, Rust legacy and v0) unless SYMBOLIZE_NO_DEMANGLE.
 *
 * Of several symbols at one address, the exported name with the fewest
 * leading underscores is shown (malloc, not __libc_malloc); symbol
 * versions (@GLIBC_2.34) are dropped.
 *
 * A source file and line are given only where the DWARF describes the
 * address: a CU and a function (or assembler code) contain it and a row
 * of the line table covers it; never the nearest line of other code
 * (_start, assembly, code next to what the linker discarded).
 *
 * Results are cached per (module, address): looking an address up twice
 * costs a hash probe.  Malformed or missing files give "[unknown]"
 * frames, never a failure.
 *
 * Lifecycle: symbolizer_new(), lookups, symbolizer_free().  The
 * symbolizer owns every struct sym_info and every string it returns;
 * they stay valid until symbolizer_free().  It borrows the global
 * module table (modules.h), which must outlive it, and the modules'
 * debug information, kept until symbolize_release_all() for every
 * symbolizer (a second report reads no file again).
 */
#ifndef MEMTAP_SYMBOLIZE_H
#define MEMTAP_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

enum {
	SYMBOLIZE_NO_DEMANGLE = 1 << 0,	/* keep names as in the symbol table */
	SYMBOLIZE_NO_INLINE = 1 << 1,	/* one frame per address */
	SYMBOLIZE_NO_LINES = 1 << 2,	/* no source files and lines */
};

/* One function activation at an address: several when calls were inlined. */
struct sym_frame {
	const char *function;	/* demangled name; NULL = unknown */
	const char *system_name; /* name as the symbol table or DWARF has it */
	uint64_t offset;	/* address - function start (outermost frame
				   with a symbol only; else 0) */
	const char *file;	/* source file, NULL = unknown */
	int line;		/* 0 = unknown */
	int inlined;		/* 1: inlined into frames[i + 1] */
};

struct sym_info {
	uint32_t module;	/* as looked up */
	uint64_t addr;		/* relative address, or raw pc for MODULE_NONE */
	const char *module_path; /* NULL for MODULE_NONE */
	const char *module_name; /* basename of module_path, or NULL */
	int nframes;		/* >= 1; frames[0] is the innermost */
	const struct sym_frame *frames;
};

struct symbolizer;

/* flags: SYMBOLIZE_*.  Never NULL. */
struct symbolizer *symbolizer_new(unsigned flags);
void symbolizer_free(struct symbolizer *sz);

/*
 * What is at addr of module (MODULE_NONE: addr is a raw pc).  Never
 * NULL: an address nothing is known of gives one frame with function
 * NULL.  The result is borrowed from the symbolizer.
 */
const struct sym_info *symbolizer_lookup(struct symbolizer *sz, uint32_t module,
					 uint64_t addr);

/*
 * Have module's symbols and DWARF read ahead, on a thread of memtap's
 * (symbolize-store.c), once: a later lookup finds them read.  For the
 * modules of the frames of a new stack.  MEMTAP_PREFETCH=0: no thread.
 */
void symbolize_prefetch(uint32_t module);
/* Modules read ahead so far. */
uint64_t symbolize_read_ahead(void);
/* Addresses named so far: by the symbol index, and by libdwfl's search. */
void symbolize_index_counts(uint64_t *indexed, uint64_t *searched);
/* Stop the thread and free every module's debug information. */
void symbolize_release_all(void);

/*
 * Format frame i of si for a text report into buf (always terminated,
 * truncated to size): "function (file.c:12)", "function", or, unknown,
 * "[unknown] (libfoo.so+0x1234)" / "[unknown] (0x7f...)".  Returns the
 * length that the full string has (as snprintf does).
 */
int symbolizer_format(const struct sym_info *si, int i, char *buf, size_t size);

/*
 * Demangle one C++ or Rust (legacy or v0) name.  Returns a malloc'd
 * string, or NULL when name is not mangled or demangling is not
 * compiled in.
 */
char *symbolize_demangle(const char *name);

/* Addresses looked up and distinct ones cached (statistics). */
uint64_t symbolizer_lookups(const struct symbolizer *sz);
size_t symbolizer_cached(const struct symbolizer *sz);

#endif /* MEMTAP_SYMBOLIZE_H */

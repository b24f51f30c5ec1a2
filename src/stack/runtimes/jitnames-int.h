/*
 * jitnames-int.h - what jitnames.c (the sources, the perf map reader,
 * the table of ranges) and jitdump.c (the jitdump reader) share, and
 * what the fuzz driver calls: the readers run on any pread-like
 * function, a file's or a buffer's.
 */
#ifndef MEMTAP_JITNAMES_INT_H
#define MEMTAP_JITNAMES_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JIT_POOL_MAX (64u << 20)	/* bytes of names and file names */
#define JIT_LINES_MAX (1u << 21)	/* DEBUG_INFO entries kept */
#define JIT_UNWIND_MAX (64u << 20)	/* bytes of UNWINDING_INFO kept */
#define JIT_NONE UINT32_MAX

/* A range of code and its name, in the order read: later ones win. */
struct jit_entry {
	uint64_t start, end;
	uint32_t name;		/* offset in the pool */
	uint32_t dbg;		/* its DEBUG_INFO block, or JIT_NONE */
	uint32_t unwind;	/* its UNWINDING_INFO, or JIT_NONE */
	uint32_t pad;
};

/* The index: disjoint pieces, sorted, each named by the last entry over it. */
struct jit_seg {
	uint64_t start, end;
	uint32_t entry;
};

/* A DEBUG_INFO record: lines[first, first + n) for code at code_addr. */
struct jit_dbg {
	uint64_t code_addr;
	uint32_t first, n;
};

struct jit_line {
	uint64_t addr;		/* as the record gave it, for code at code_addr */
	uint32_t file;		/* offset in the pool */
	int32_t line;
};

struct jit_uw {
	uint64_t data;		/* offset in uw_data */
	uint64_t eh_frame_size, hdr_size, mapped_size;
};

struct jit_table {
	const char *what;	/* the file, for warnings */
	int warned;		/* one warning line a table */
	struct jit_entry *e;
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
	struct jit_seg *seg;
	size_t nseg;
	int dirty;		/* entries added since the index was made */
	uint64_t rewrites;	/* entries over code already named (a range
				 * added at an entry's start, a CODE_MOVE) */
	uint64_t trimmed;	/* older entries let go (a perf map's, full) */
	uint32_t *by_start;	/* hash of the last entry at each start */
	size_t by_start_size, by_start_count;
	struct jit_dbg *dbg;
	size_t ndbg, dbg_cap;
	struct jit_line *lines;
	size_t nlines, lines_cap;
	struct jit_uw *uw;
	size_t nuw, uw_cap;
	unsigned char *uw_data;
	size_t uw_len, uw_cap_bytes;
};

/* Reads up to n bytes at off of a file or buffer: as pread(). */
typedef ssize_t (*jit_pread_fn)(void *arg, void *buf, size_t n, uint64_t off);

/* One warning line for t (the first only): "memtap: warning: WHAT: ...". */
void jit_warn(struct jit_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Intern len bytes of s (cut to JIT_NAME_MAX) in the pool: offset, or JIT_NONE when full. */
uint32_t jit_pool_add(struct jit_table *t, const char *s, size_t len);

/*
 * Add [start, start + size) named by pool offset name.  0, or -1 when
 * the table is full (warned) or the range is empty or wraps (ignored).
 */
int jit_table_add(struct jit_table *t, uint64_t start, uint64_t size, uint32_t name,
		  uint32_t dbg, uint32_t unwind);
/* The last entry added that starts at start, NULL if none. */
const struct jit_entry *jit_table_at(const struct jit_table *t, uint64_t start);
/* The entry naming pc, NULL if none (the index made again if need be). */
const struct jit_entry *jit_table_find(struct jit_table *t, uint64_t pc);
void jit_table_free(struct jit_table *t);

/* Reading state of a perf map: the offset after the last whole line. */
struct perfmap_state {
	uint64_t off;
	int skipping;		/* inside a line longer than the buffer */
	uint64_t bad;		/* lines that were not START SIZE NAME */
};
/*
 * Read size bytes (what the file has now) from s->off into t.  final:
 * the file is complete, a last line without a newline is read too.
 * Returns the ranges added.
 */
size_t perfmap_read(struct jit_table *t, struct perfmap_state *s, jit_pread_fn rd, void *arg,
		    uint64_t size, int final);

/* Reading state of a jitdump. */
struct jitdump_state {
	uint64_t off;		/* of the next record; 0: the header is next */
	int swap;		/* written in the other byte order */
	int broken;		/* a fault: nothing more is read */
	uint32_t pending_dbg, pending_uw;	/* for the next CODE_LOAD */
	uint64_t records;
};
/* The same for a jitdump; a record not whole yet is left for later, or,
 * final, warned of. */
size_t jitdump_read(struct jit_table *t, struct jitdump_state *s, jit_pread_fn rd, void *arg,
		    uint64_t size, int final);

/* pread() of the fd in arg (an int *). */
ssize_t jit_pread_fd(void *arg, void *buf, size_t n, uint64_t off);

#endif /* MEMTAP_JITNAMES_INT_H */

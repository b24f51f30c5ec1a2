/*
 * jitdump.c - the jitdump reader (jitnames-int.h): perf's format of
 * run-time code, tools/perf/Documentation/jitdump-specification.txt.
 *
 *   header   u32 magic "JiTD" (0x4A695444, or byte-swapped: every field
 *            is), version, total_size (of the header), elf_mach, pad1,
 *            pid; u64 timestamp, flags
 *   records  u32 id, total_size; u64 timestamp; then by id:
 *     0 CODE_LOAD       u32 pid, tid; u64 vma, code_addr, code_size,
 *                       code_index; name\0; the code
 *     1 CODE_MOVE       u32 pid, tid; u64 vma, old_code_addr,
 *                       new_code_addr, code_size, code_index
 *     2 DEBUG_INFO      u64 code_addr, nr_entry; entries of u64 addr,
 *                       u32 lineno, discrim, file name\0 (for the next load)
 *     3 CODE_CLOSE      the end
 *     4 UNWINDING_INFO  u64 unwinding_size, eh_frame_hdr_size,
 *                       mapped_size; the .eh_frame then the
 *                       .eh_frame_hdr (for the next load)
 *
 * Only the parts kept are read: a load's code is skipped, and a record
 * of any size claimed costs no more than those parts.  A record is read
 * once it is whole in the file; a fault (a size below the record's own
 * fields, a bad header) stops the reading with one warning line.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stack/runtimes/jitnames.h"
#include "stack/runtimes/jitnames-int.h"
#include "util/xmalloc.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define HEADER_SIZE 40
#define HEADER_MAX 4096
#define PREFIX 16
#define BODY_MAX (16u << 20)	/* DEBUG_INFO and UNWINDING_INFO bodies read */

enum { CODE_LOAD, CODE_MOVE, DEBUG_INFO, CODE_CLOSE, UNWINDING_INFO };

static uint32_t u32(const struct jitdump_state *s, const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return s->swap ? __builtin_bswap32(v) : v;
}

static uint64_t u64(const struct jitdump_state *s, const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return s->swap ? __builtin_bswap64(v) : v;
}

/* n bytes at off, all of them: 0, or -1. */
static int read_all(jit_pread_fn rd, void *arg, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = rd(arg, (char *)buf + done, n - done, off + done);

		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static void broken(struct jit_table *t, struct jitdump_state *s, const char *why, uint64_t off)
{
	s->broken = 1;
	jit_warn(t, "%s at offset %" PRIu64 ": the rest is not read", why, off);
}

static int header(struct jit_table *t, struct jitdump_state *s, jit_pread_fn rd, void *arg)
{
	unsigned char h[HEADER_SIZE];
	uint32_t magic, size;

	if (read_all(rd, arg, h, sizeof(h), 0) < 0)
		return -1;
	memcpy(&magic, h, sizeof(magic));
	if (magic == JITDUMP_MAGIC_SWAPPED)
		s->swap = 1;
	else if (magic != JITDUMP_MAGIC) {
		broken(t, s, "not a jitdump (no JiTD magic)", 0);
		return -1;
	}
	size = u32(s, h + 8);
	if (size < HEADER_SIZE || size > HEADER_MAX) {
		broken(t, s, "a header size out of bounds", 8);
		return -1;
	}
	s->off = size;
	return 0;
}

static void code_load(struct jit_table *t, struct jitdump_state *s, const unsigned char *b,
		      size_t n)
{
	const unsigned char *name = b + 40, *nul;
	uint32_t off;

	nul = memchr(name, '\0', n - 40);
	off = jit_pool_add(t, (const char *)name, nul ? (size_t)(nul - name) : n - 40);
	jit_table_add(t, u64(s, b + 16), u64(s, b + 24), off, s->pending_dbg, s->pending_uw);
	s->pending_dbg = s->pending_uw = JIT_NONE;
}

static void code_move(struct jit_table *t, struct jitdump_state *s, const unsigned char *b)
{
	const struct jit_entry *e = jit_table_at(t, u64(s, b + 16));
	struct jit_entry old;

	if (!e)
		return;
	old = *e;
	t->rewrites++;	/* code at the new range: other than what ran there */
	jit_table_add(t, u64(s, b + 24), u64(s, b + 32), old.name, old.dbg, old.unwind);
}

static void debug_info(struct jit_table *t, struct jitdump_state *s, const unsigned char *b,
		       size_t n)
{
	uint64_t nr = u64(s, b + 8);
	size_t p = 16;
	struct jit_dbg *d;

	if (t->ndbg >= JIT_NONE - 1)
		return;
	t->dbg = xgrowarray(t->dbg, &t->dbg_cap, t->ndbg + 1, sizeof(*t->dbg));
	d = &t->dbg[t->ndbg];
	d->code_addr = u64(s, b);
	d->first = (uint32_t)t->nlines;
	d->n = 0;
	for (uint64_t i = 0; i < nr && p + 16 < n && t->nlines < JIT_LINES_MAX; i++) {
		const unsigned char *name = b + p + 16, *nul = memchr(name, '\0', n - p - 16);
		struct jit_line *l;
		uint32_t file;

		if (!nul)
			break;
		file = jit_pool_add(t, (const char *)name, (size_t)(nul - name));
		if (file == JIT_NONE)
			break;
		t->lines = xgrowarray(t->lines, &t->lines_cap, t->nlines + 1, sizeof(*t->lines));
		l = &t->lines[t->nlines++];
		l->addr = u64(s, b + p);
		l->line = (int32_t)u32(s, b + p + 8);
		l->file = file;
		d->n++;
		p = (size_t)(nul - b) + 1;
	}
	s->pending_dbg = (uint32_t)t->ndbg++;
}

static void unwinding_info(struct jit_table *t, struct jitdump_state *s, const unsigned char *b,
			   size_t n)
{
	uint64_t size = u64(s, b), hdr = u64(s, b + 8);
	struct jit_uw *w;

	if (!size || size > n - 24 || hdr > size || t->uw_len + size > JIT_UNWIND_MAX ||
	    t->nuw >= JIT_NONE - 1)
		return;
	if (t->uw_len + size > t->uw_cap_bytes) {
		t->uw_cap_bytes = t->uw_cap_bytes ? t->uw_cap_bytes : 4096;
		while (t->uw_cap_bytes < t->uw_len + size)
			t->uw_cap_bytes *= 2;
		t->uw_data = xrealloc(t->uw_data, t->uw_cap_bytes);
	}
	t->uw = xgrowarray(t->uw, &t->uw_cap, t->nuw + 1, sizeof(*t->uw));
	w = &t->uw[t->nuw];
	w->data = t->uw_len;
	w->eh_frame_size = size - hdr;
	w->hdr_size = hdr;
	w->mapped_size = u64(s, b + 16);
	memcpy(t->uw_data + t->uw_len, b + 24, (size_t)size);
	t->uw_len += (size_t)size;
	s->pending_uw = (uint32_t)t->nuw++;
}

size_t jitdump_read(struct jit_table *t, struct jitdump_state *s, jit_pread_fn rd, void *arg,
		    uint64_t size, int final)
{
	unsigned char pre[PREFIX];
	unsigned char *body = NULL;
	size_t added = 0, n0 = t->n;

	if (s->broken)
		return 0;
	if (!s->off) {
		s->pending_dbg = s->pending_uw = JIT_NONE;
		if (size < HEADER_SIZE) {
			if (final)
				broken(t, s, "a header cut short", 0);
			return 0;
		}
		if (header(t, s, rd, arg) < 0)
			return 0;
	}
	while (!s->broken && t->n < JIT_MAX_ENTRIES) {
		uint32_t id, total;
		size_t want, min;

		if (size - s->off < PREFIX || size < s->off) {
			if (final && size > s->off)
				broken(t, s, "a record cut short", s->off);
			break;
		}
		if (read_all(rd, arg, pre, sizeof(pre), s->off) < 0)
			break;
		id = u32(s, pre);
		total = u32(s, pre + 4);
		min = id == CODE_LOAD ? 40 : id == CODE_MOVE ? 48 : id == DEBUG_INFO ? 16 :
		      id == UNWINDING_INFO ? 24 : 0;
		if (total < PREFIX + min) {
			broken(t, s, "a record smaller than its fields", s->off);
			break;
		}
		if (total > size - s->off) {
			if (final)
				broken(t, s, "a record cut short", s->off);
			break;
		}
		if (id == CODE_CLOSE) {
			s->broken = 1;	/* the end: nothing follows */
			break;
		}
		want = total - PREFIX;
		if (id == CODE_LOAD && want > 40 + JIT_NAME_MAX + 1)
			want = 40 + JIT_NAME_MAX + 1;
		if (id == CODE_MOVE)
			want = 48;
		if (id > UNWINDING_INFO || want > BODY_MAX) {
			s->off += total;	/* not kept */
			continue;
		}
		body = xrealloc(body, want + 1);
		if (read_all(rd, arg, body, want, s->off + PREFIX) < 0)
			break;
		if (id == CODE_LOAD)
			code_load(t, s, body, want);
		else if (id == CODE_MOVE)
			code_move(t, s, body);
		else if (id == DEBUG_INFO)
			debug_info(t, s, body, want);
		else if (id == UNWINDING_INFO)
			unwinding_info(t, s, body, want);
		s->records++;
		s->off += total;
	}
	free(body);
	added = t->n - n0;
	return added;
}

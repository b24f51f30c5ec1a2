/*
 * out-pprof.c - the pprof format: a profile.proto message (package
 * perftools.profiles), encoded here by hand and gzip-compressed with
 * zlib, as `go tool pprof` and other pprof readers expect.
 *
 * The encoding is protobuf's wire format: each field is a key
 * (field_number << 3 | wire_type) then a varint (wire type 0) or a
 * length-delimited payload (wire type 2: varint length, bytes).  Nested
 * messages are encoded into a scratch buffer first, since their length
 * precedes them.  Repeated scalars (sample location ids and values) are
 * packed.  Fields holding a default (0, empty) are left out, except ids.
 *
 * Mapping: profile types -> sample_type (field 1); samples -> sample (2)
 * with labels pid (num), comm and event (str); mappings (3), locations
 * (4) and functions (5) get id = index + 1; every string goes to the
 * string table (6) whose entry 0 is ""; time_nanos (9), duration_nanos
 * (10), default_sample_type (14) is the string index of the chosen
 * type's name.  The gzip header carries no time stamp, so equal profiles
 * give equal bytes.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report/output.h"
#include "util/xmalloc.h"

struct pbuf {
	unsigned char *d;
	size_t len, cap;
};

static void pb_reserve(struct pbuf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	b->cap = b->cap ? b->cap : 1024;
	while (b->len + n > b->cap)
		b->cap *= 2;
	b->d = xrealloc(b->d, b->cap);
}

static void pb_bytes(struct pbuf *b, const void *d, size_t n)
{
	pb_reserve(b, n);
	if (n)
		memcpy(b->d + b->len, d, n);
	b->len += n;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	pb_reserve(b, 10);
	while (v >= 0x80) {
		b->d[b->len++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->d[b->len++] = (unsigned char)v;
}

enum { WT_VARINT = 0, WT_LEN = 2 };

static void pb_key(struct pbuf *b, unsigned field, unsigned wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

/* A varint field; zero is omitted unless always. */
static void pb_uint(struct pbuf *b, unsigned field, uint64_t v, int always)
{
	if (!v && !always)
		return;
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void pb_int(struct pbuf *b, unsigned field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v, 0);
}

/* A length-delimited field holding sub's bytes; sub is emptied. */
static void pb_sub(struct pbuf *b, unsigned field, struct pbuf *sub)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, sub->len);
	pb_bytes(b, sub->d, sub->len);
	sub->len = 0;
}

/* The string table: strings interned in order of first use. */
struct strtab {
	const char **strs;	/* borrowed from the profile (or literals) */
	size_t n, alloc;
	size_t *slots;		/* index + 1, open addressing */
	size_t nslots;
	char **owned;		/* repaired copies of invalid UTF-8 */
	size_t nowned, owned_alloc;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void strtab_put(struct strtab *t, const char *s, size_t i)
{
	size_t mask = t->nslots - 1, j = str_hash(s) & mask;

	while (t->slots[j])
		j = (j + 1) & mask;
	t->slots[j] = i + 1;
}

/*
 * profile.proto strings are UTF-8 (readers reject other bytes): return s,
 * or a copy of it kept in t with each bad byte replaced by U+FFFD.
 */
static const char *valid_utf8(struct strtab *t, const char *s)
{
	const char *c;
	char *copy, *o;
	size_t n;

	for (c = s; *c; c += n)
		if (!(n = out_utf8_len(c)))
			break;
	if (!*c)
		return s;
	copy = o = xmalloc(3 * strlen(s) + 1);
	for (c = s; *c; c += n) {
		n = out_utf8_len(c);
		if (n) {
			memcpy(o, c, n);
			o += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
	}
	*o = '\0';
	t->owned = xgrowarray(t->owned, &t->owned_alloc, t->nowned + 1,
			      sizeof(*t->owned));
	t->owned[t->nowned++] = copy;
	return copy;
}

static uint64_t strtab_index(struct strtab *t, const char *s)
{
	size_t mask, j, i;

	s = valid_utf8(t, s ? s : "");
	mask = t->nslots - 1;
	for (j = str_hash(s) & mask; t->slots[j]; j = (j + 1) & mask)
		if (!strcmp(t->strs[t->slots[j] - 1], s))
			return t->slots[j] - 1;
	if ((t->n + 1) * 2 > t->nslots) {
		free(t->slots);
		t->nslots *= 2;
		t->slots = xcalloc(t->nslots, sizeof(*t->slots));
		for (i = 0; i < t->n; i++)
			strtab_put(t, t->strs[i], i);
	}
	t->strs = xgrowarray(t->strs, &t->alloc, t->n + 1, sizeof(*t->strs));
	t->strs[t->n] = s;
	strtab_put(t, s, t->n);
	return t->n++;
}

/* A string field: the index of s in the string table. */
static void pb_str(struct pbuf *b, struct strtab *t, unsigned field,
		   const char *s)
{
	pb_uint(b, field, strtab_index(t, s), 0);
}

/* Profile message fields. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

/* The string table, last, once every string is known. */
static void pb_string_table(struct pbuf *b, const struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		size_t len = strlen(t->strs[i]);

		pb_key(b, PROFILE_STRING_TABLE, WT_LEN);
		pb_varint(b, len);
		pb_bytes(b, t->strs[i], len);
	}
}

static void encode_label(struct pbuf *b, struct pbuf *sub, struct strtab *t,
			 const char *key, const char *str, int64_t num)
{
	pb_str(sub, t, 1, key);		/* Label.key */
	if (str)
		pb_str(sub, t, 2, str);	/* Label.str */
	else
		pb_int(sub, 3, num);	/* Label.num */
	pb_sub(b, 3, sub);		/* Sample.label */
}

static void encode_sample(struct pbuf *b, struct pbuf *sub, struct pbuf *sub2,
			  struct strtab *t, const struct profile *p,
			  const struct prof_sample *s)
{
	size_t i;

	if (s->nlocs) {
		for (i = 0; i < s->nlocs; i++)
			pb_varint(sub2, (uint64_t)s->locs[i] + 1);
		pb_sub(sub, 1, sub2);	/* location_id, packed */
	}
	if (p->ntypes) {
		for (i = 0; i < p->ntypes; i++)
			pb_varint(sub2, (uint64_t)s->values[i]);
		pb_sub(sub, 2, sub2);	/* value, packed */
	}
	encode_label(sub, sub2, t, "pid", NULL, s->pid);
	if (s->comm)
		encode_label(sub, sub2, t, "comm", s->comm, 0);
	if (s->event)
		encode_label(sub, sub2, t, "event", s->event, 0);
	pb_sub(b, PROFILE_SAMPLE, sub);
}

static void encode_mapping(struct pbuf *b, struct pbuf *sub, struct strtab *t,
			   const struct profile *p, size_t mi)
{
	const struct prof_mapping *m = &p->mappings[mi];
	int functions = 0, files = 0, lines = 0, inlines = 0;
	size_t i, k;

	for (i = 0; i < p->nlocations; i++) {
		const struct prof_location *l = &p->locations[i];

		if (l->mapping != mi || !l->nlines)
			continue;
		functions = 1;
		if (l->nlines > 1)
			inlines = 1;
		for (k = 0; k < l->nlines; k++) {
			if (l->lines[k].line > 0)
				lines = 1;
			if (l->lines[k].function < p->nfunctions &&
			    p->functions[l->lines[k].function].file)
				files = 1;
		}
	}
	pb_uint(sub, 1, mi + 1, 1);		/* id */
	pb_uint(sub, 2, m->start, 0);		/* memory_start */
	pb_uint(sub, 3, m->limit, 0);		/* memory_limit */
	pb_uint(sub, 4, m->offset, 0);		/* file_offset */
	pb_str(sub, t, 5, m->file);		/* filename */
	pb_str(sub, t, 6, m->build_id);		/* build_id */
	pb_uint(sub, 7, functions, 0);		/* has_functions */
	pb_uint(sub, 8, files, 0);		/* has_filenames */
	pb_uint(sub, 9, lines, 0);		/* has_line_numbers */
	pb_uint(sub, 10, inlines, 0);		/* has_inline_frames */
	pb_sub(b, PROFILE_MAPPING, sub);
}

static void encode_location(struct pbuf *b, struct pbuf *sub,
			    struct pbuf *sub2, const struct profile *p,
			    size_t li)
{
	const struct prof_location *l = &p->locations[li];
	size_t k;

	pb_uint(sub, 1, li + 1, 1);		/* id */
	if (l->mapping < p->nmappings)
		pb_uint(sub, 2, l->mapping + 1, 1);	/* mapping_id */
	pb_uint(sub, 3, l->address, 0);		/* address */
	for (k = 0; k < l->nlines; k++) {
		pb_uint(sub2, 1, l->lines[k].function + 1, 1);	/* function_id */
		pb_int(sub2, 2, l->lines[k].line);		/* line */
		pb_sub(sub, 4, sub2);				/* line */
	}
	pb_sub(b, PROFILE_LOCATION, sub);
}

static void encode_function(struct pbuf *b, struct pbuf *sub,
			    struct strtab *t, const struct profile *p,
			    size_t fi)
{
	const struct prof_function *fn = &p->functions[fi];

	pb_uint(sub, 1, fi + 1, 1);		/* id */
	pb_str(sub, t, 2, fn->name);		/* name */
	pb_str(sub, t, 3, fn->system_name);	/* system_name */
	pb_str(sub, t, 4, fn->file);		/* filename */
	pb_sub(b, PROFILE_FUNCTION, sub);
}

/* gzip buf into f; 0 or -1 with errno. */
static int write_gzip(FILE *f, const struct pbuf *buf)
{
	unsigned char out[16384];
	z_stream z;
	int zr, ret = 0;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip wrapper, no name, mtime 0 */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = buf->d;
	z.avail_in = buf->len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			errno = EINVAL;
			ret = -1;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) !=
		    sizeof(out) - z.avail_out) {
			if (!errno)
				errno = EIO;
			ret = -1;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return ret;
}

/* A comment c (allocated: the table owns it from now). */
static void add_comment(struct pbuf *b, struct strtab *t, char *c)
{
	/* owned by the table, as its repaired copies */
	t->owned = xgrowarray(t->owned, &t->owned_alloc, t->nowned + 1, sizeof(*t->owned));
	t->owned[t->nowned++] = c;
	pb_uint(b, PROFILE_COMMENT, strtab_index(t, c), 1);
}

/*
 * The allocator calls counted in the target (profile.h: counted), exact
 * where the samples are estimates, and the faults put on the stack
 * sampled next to them (their samples lost): a comment per process and
 * function or fault kind (pprof -comments).
 */
static void encode_counted(struct pbuf *b, struct strtab *t, const struct profile *p)
{
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		for (size_t k = 0; k < pr->nevents; k++) {
			const struct prof_event_totals *e = &pr->events[k];
			char *c;

			if (e->neighbour)
				add_comment(b, t, xasprintf("pid %d (%s): %s: %" PRIu64 " faults, %"
							    PRIu64 " bytes put on the stack sampled "
							    "next to them (their samples lost)",
							    (int)pr->pid, pr->comm ? pr->comm : "?",
							    e->event, e->neighbour,
							    e->neighbour_bytes));
			if (!e->counted || !e->calls)
				continue;
			if ((e->counted & PROF_COUNTED_BYTES) && e->acquired)
				c = xasprintf("pid %d (%s): %s: %" PRIu64 " calls, %" PRIu64 " bytes "
					      "acquired, counted in the process", (int)pr->pid,
					      pr->comm ? pr->comm : "?", e->event, e->calls, e->acquired);
			else
				c = xasprintf("pid %d (%s): %s: %" PRIu64 " calls, counted in the "
					      "process", (int)pr->pid, pr->comm ? pr->comm : "?",
					      e->event, e->calls);
			add_comment(b, t, c);
		}
	}
}

int write_pprof(FILE *f, const struct profile *p, const struct output_options *o)
{
	struct pbuf b = { 0 }, sub = { 0 }, sub2 = { 0 };
	struct strtab t = { 0 };
	size_t i, deftype;
	int ret;

	deftype = o && o->value_index ? o->value_index - 1 : p->default_type;
	if (p->ntypes && deftype >= p->ntypes) {
		errno = EINVAL;
		return -1;
	}
	t.nslots = 256;
	t.slots = xcalloc(t.nslots, sizeof(*t.slots));
	strtab_index(&t, "");

	for (i = 0; i < p->ntypes; i++) {
		pb_str(&sub, &t, 1, p->types[i].type);	/* ValueType.type */
		pb_str(&sub, &t, 2, p->types[i].unit);	/* ValueType.unit */
		pb_sub(&b, PROFILE_SAMPLE_TYPE, &sub);
	}
	for (i = 0; i < p->nsamples; i++)
		encode_sample(&b, &sub, &sub2, &t, p, &p->samples[i]);
	for (i = 0; i < p->nmappings; i++)
		encode_mapping(&b, &sub, &t, p, i);
	for (i = 0; i < p->nlocations; i++)
		encode_location(&b, &sub, &sub2, p, i);
	for (i = 0; i < p->nfunctions; i++)
		encode_function(&b, &sub, &t, p, i);
	encode_counted(&b, &t, p);
	pb_int(&b, PROFILE_TIME_NANOS, p->time_nanos);
	pb_int(&b, PROFILE_DURATION_NANOS, p->duration_nanos);
	if (p->ntypes)
		pb_str(&b, &t, PROFILE_DEFAULT_SAMPLE_TYPE,
		       p->types[deftype].type);
	/* last, once every string is known */
	pb_string_table(&b, &t);

	ret = write_gzip(f, &b);
	free(b.d);
	free(sub.d);
	free(sub2.d);
	for (i = 0; i < t.nowned; i++)
		free(t.owned[i]);
	free(t.owned);
	free(t.strs);
	free(t.slots);
	return ret;
}

/*
 * Pyroscope's profile (output.h: pprof_write_pyroscope()).  Its samples
 * are ranked by inuse then alloc bytes, heaviest first (equal ones in
 * the profile's order); those past the limit are summed into one sample
 * on a location of its own, "[other]", after the profile's locations.
 */
struct pyro_sample {
	size_t index;		/* into p->samples */
	int64_t inuse, alloc;
};

static int pyro_cmp(const void *a, const void *b)
{
	const struct pyro_sample *x = a, *y = b;

	if (x->inuse != y->inuse)
		return x->inuse > y->inuse ? -1 : 1;
	if (x->alloc != y->alloc)
		return x->alloc > y->alloc ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void pyro_values(struct pbuf *sub, struct pbuf *sub2, int64_t inuse, int64_t alloc)
{
	pb_varint(sub2, (uint64_t)inuse);
	pb_varint(sub2, (uint64_t)alloc);
	pb_sub(sub, 2, sub2);		/* Sample.value, packed */
}

int pprof_write_pyroscope(FILE *f, const struct profile *p)
{
	struct pbuf b = { 0 }, sub = { 0 }, sub2 = { 0 };
	struct strtab t = { 0 };
	struct pyro_sample *ps;
	size_t ti = profile_find_type(p, "inuse_space");
	size_t ta = profile_find_type(p, "alloc_space");
	size_t i, k, n = 0, keep;
	int64_t other_inuse = 0, other_alloc = 0;
	int ret;

	ps = xcalloc(p->nsamples + 1, sizeof(*ps));
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		ps[n].index = i;
		ps[n].inuse = ti != (size_t)-1 ? s->values[ti] : 0;
		ps[n].alloc = ta != (size_t)-1 ? s->values[ta] : 0;
		if (ps[n].inuse || ps[n].alloc)
			n++;
	}
	qsort(ps, n, sizeof(*ps), pyro_cmp);
	keep = n > PPROF_PYRO_MAX_SAMPLES ? PPROF_PYRO_MAX_SAMPLES - 1 : n;
	for (i = keep; i < n; i++) {
		other_inuse += ps[i].inuse;
		other_alloc += ps[i].alloc;
	}

	t.nslots = 256;
	t.slots = xcalloc(t.nslots, sizeof(*t.slots));
	strtab_index(&t, "");
	pb_str(&sub, &t, 1, "inuse_space");
	pb_str(&sub, &t, 2, "bytes");
	pb_sub(&b, PROFILE_SAMPLE_TYPE, &sub);
	pb_str(&sub, &t, 1, "alloc_space");
	pb_str(&sub, &t, 2, "bytes");
	pb_sub(&b, PROFILE_SAMPLE_TYPE, &sub);
	for (i = 0; i < keep; i++) {
		const struct prof_sample *s = &p->samples[ps[i].index];
		size_t nlocs = s->nlocs < PPROF_PYRO_MAX_DEPTH ? s->nlocs : PPROF_PYRO_MAX_DEPTH;

		if (nlocs) {
			for (k = 0; k < nlocs; k++)
				pb_varint(&sub2, (uint64_t)s->locs[k] + 1);
			pb_sub(&sub, 1, &sub2);	/* location_id, packed */
		}
		pyro_values(&sub, &sub2, ps[i].inuse, ps[i].alloc);
		pb_sub(&b, PROFILE_SAMPLE, &sub);
	}
	if (keep < n) {
		pb_varint(&sub2, p->nlocations + 1);
		pb_sub(&sub, 1, &sub2);
		pyro_values(&sub, &sub2, other_inuse, other_alloc);
		pb_sub(&b, PROFILE_SAMPLE, &sub);
	}
	for (i = 0; i < p->nmappings; i++)
		encode_mapping(&b, &sub, &t, p, i);
	for (i = 0; i < p->nlocations; i++)
		encode_location(&b, &sub, &sub2, p, i);
	for (i = 0; i < p->nfunctions; i++)
		encode_function(&b, &sub, &t, p, i);
	if (keep < n) {
		pb_uint(&sub, 1, p->nlocations + 1, 1);		/* Location.id */
		pb_uint(&sub2, 1, p->nfunctions + 1, 1);	/* Line.function_id */
		pb_sub(&sub, 4, &sub2);
		pb_sub(&b, PROFILE_LOCATION, &sub);
		pb_uint(&sub, 1, p->nfunctions + 1, 1);		/* Function.id */
		pb_str(&sub, &t, 2, "[other]");
		pb_str(&sub, &t, 3, "[other]");
		pb_sub(&b, PROFILE_FUNCTION, &sub);
	}
	pb_int(&b, PROFILE_TIME_NANOS, p->time_nanos);
	pb_int(&b, PROFILE_DURATION_NANOS, p->duration_nanos);
	pb_str(&sub, &t, 1, "space");
	pb_str(&sub, &t, 2, "bytes");
	pb_sub(&b, PROFILE_PERIOD_TYPE, &sub);
	pb_uint(&b, PROFILE_PERIOD, 1, 1);
	pb_str(&b, &t, PROFILE_DEFAULT_SAMPLE_TYPE, "inuse_space");
	pb_string_table(&b, &t);

	ret = write_gzip(f, &b);
	free(ps);
	free(b.d);
	free(sub.d);
	free(sub2.d);
	for (i = 0; i < t.nowned; i++)
		free(t.owned[i]);
	free(t.owned);
	free(t.strs);
	free(t.slots);
	return ret;
}

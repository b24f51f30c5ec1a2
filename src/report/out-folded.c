/*
 * out-folded.c - folded stacks: one line per distinct path,
 *
 *	[event];comm;root_frame;...;leaf_frame VALUE
 *
 * as produced by flamegraph.pl's stackcollapse scripts and read by
 * flamegraph.pl, speedscope and `memtap diff`.  Lines are sorted frame by
 * frame and equal paths merged.  A location with inlined functions
 * gives one frame per inline level, the outermost first.  A location
 * without function gives "[unknown] (module+0xOFFSET)", module being the
 * base name of the mapped file and OFFSET the file offset.  Frame text
 * never contains ';' (which becomes '_'), control characters (which
 * become '?') or invalid UTF-8 (each bad byte becomes U+FFFD, as in the
 * other formats).
 *
 * Also the folded stack set (output.h) shared with out-svg.c and diff.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/output.h"
#include "util/xmalloc.h"

/* A growable string. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = b->cap ? b->cap : 256;
		while (b->len + n + 1 > b->cap)
			b->cap *= 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sbuf_addc(struct sbuf *b, char c)
{
	sbuf_add(b, &c, 1);
}

size_t out_utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

/* Append frame text s, made safe for the folded format. */
static void add_frame_text(struct sbuf *b, const char *s)
{
	size_t n;

	while (*s) {
		unsigned char c = *s;

		if (c == ';') {
			sbuf_addc(b, '_');
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			sbuf_addc(b, '?');
			s++;
		} else if (!(n = out_utf8_len(s))) {
			sbuf_add(b, "\xef\xbf\xbd", 3);	/* U+FFFD */
			s++;
		} else {
			sbuf_add(b, s, n);
			s += n;
		}
	}
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static void add_frame(struct sbuf *b, const char *s)
{
	if (b->len)
		sbuf_addc(b, ';');
	add_frame_text(b, s);
}

static const char *function_text(const struct prof_function *fn, int mangled)
{
	const char *a = mangled ? fn->system_name : fn->name;
	const char *b = mangled ? fn->name : fn->system_name;

	if (a && *a)
		return a;
	if (b && *b)
		return b;
	return NULL;
}

/* Append the frames of location l, outermost inline level first. */
static void add_location(struct sbuf *b, const struct profile *p,
			 const struct prof_location *l, int mangled)
{
	const struct prof_mapping *m = NULL;
	char text[64];
	size_t i;

	for (i = l->nlines; i-- > 0;) {
		const char *name = NULL;

		if (l->lines[i].function < p->nfunctions)
			name = function_text(&p->functions[l->lines[i].function],
					     mangled);
		if (name) {
			add_frame(b, name);
			continue;
		}
		/* An inline level without name: say so, keep the depth. */
		add_frame(b, "[unknown]");
	}
	if (l->nlines)
		return;
	if (l->mapping < p->nmappings)
		m = &p->mappings[l->mapping];
	add_frame(b, "[unknown] (");
	if (m && m->file && *m->file) {
		add_frame_text(b, base_name(m->file));
		snprintf(text, sizeof(text), "+0x%" PRIx64 ")",
			 l->address - m->start + m->offset);
	} else {
		snprintf(text, sizeof(text), "0x%" PRIx64 ")", l->address);
	}
	add_frame_text(b, text);
}

/* Do the samples mix several event kinds? */
static int mixed_events(const struct profile *p)
{
	const char *first = NULL;
	size_t i;

	for (i = 0; i < p->nsamples; i++) {
		const char *e = p->samples[i].event ? p->samples[i].event : "";

		if (!first)
			first = e;
		else if (strcmp(first, e))
			return 1;
	}
	return 0;
}

/* Resolve o->value_index (1-based, 0 = default) to a type index. */
static int value_type(const struct profile *p, size_t index1, size_t *t)
{
	*t = index1 ? index1 - 1 : p->default_type;
	if (*t >= p->ntypes && (index1 || p->nsamples)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Sample sm's frames into b (emptied first), root first. */
static void sample_stack(struct sbuf *b, const struct profile *p, const struct prof_sample *sm,
			 const struct output_options *o, int events)
{
	b->len = 0;
	if (events) {
		add_frame(b, "[");
		add_frame_text(b, sm->event ? sm->event : "?");
		add_frame_text(b, "]");
	}
	if (!o->no_comm)
		add_frame(b, sm->comm && *sm->comm ? sm->comm : "?");
	for (size_t k = sm->nlocs; k-- > 0;)
		if (sm->locs[k] < p->nlocations)
			add_location(b, p, &p->locations[sm->locs[k]], o->no_demangle);
}

int folded_event_frames(const struct profile *p, const struct output_options *o)
{
	return o && (o->event_frame == OUT_EVENT_ALWAYS ||
		     (o->event_frame == OUT_EVENT_AUTO && mixed_events(p)));
}

char *folded_sample_stack(const struct profile *p, size_t i, const struct output_options *o,
			  int events)
{
	struct output_options defaults = { 0 };
	struct sbuf b = { NULL, 0, 0 };

	sample_stack(&b, p, &p->samples[i], o ? o : &defaults, events);
	return b.s ? b.s : xstrdup("");
}

int folded_set_from_profile(struct folded_set *s, const struct profile *p,
			    const struct output_options *o)
{
	struct output_options defaults = { 0 };
	struct sbuf b = { NULL, 0, 0 };
	size_t t, tb = 0, i;
	int events;

	if (!o)
		o = &defaults;
	if (value_type(p, o->value_index, &t) < 0)
		return -1;
	if (o->base_index && value_type(p, o->base_index, &tb) < 0)
		return -1;
	if (o->base_index)
		s->diff = 1;
	if (t < p->ntypes)
		s->unit = p->types[t].unit;
	events = folded_event_frames(p, o);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *sm = &p->samples[i];
		int64_t base = o->base_index ? sm->values[tb] : 0;

		if (!sm->values[t] && !base)
			continue;
		sample_stack(&b, p, sm, o, events);
		folded_set_add(s, b.s ? b.s : "", sm->values[t], base);
	}
	free(b.s);
	return 0;
}

void folded_set_add(struct folded_set *s, const char *stack, int64_t value,
		    int64_t base)
{
	struct folded_stack *fs;

	s->stacks = xgrowarray(s->stacks, &s->alloc, s->n + 1,
			       sizeof(*s->stacks));
	fs = &s->stacks[s->n++];
	fs->stack = xstrdup(stack);
	fs->value = value;
	fs->base = base;
}

/* Compare frame by frame: ';' sorts before any frame character. */
static int stack_cmp(const void *pa, const void *pb)
{
	const unsigned char *a =
		(const unsigned char *)((const struct folded_stack *)pa)->stack;
	const unsigned char *b =
		(const unsigned char *)((const struct folded_stack *)pb)->stack;

	for (;; a++, b++) {
		unsigned ca = *a == ';' ? 1 : *a ? *a + 1u : 0;
		unsigned cb = *b == ';' ? 1 : *b ? *b + 1u : 0;

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (!ca)
			return 0;
	}
}

void folded_set_finish(struct folded_set *s)
{
	size_t i, n = 0;

	if (s->n)
		qsort(s->stacks, s->n, sizeof(*s->stacks), stack_cmp);
	for (i = 0; i < s->n; i++) {
		struct folded_stack *cur = &s->stacks[i];

		if (n && !strcmp(s->stacks[n - 1].stack, cur->stack)) {
			s->stacks[n - 1].value = int64_add_sat(s->stacks[n - 1].value, cur->value);
			s->stacks[n - 1].base = int64_add_sat(s->stacks[n - 1].base, cur->base);
			free(cur->stack);
			continue;
		}
		s->stacks[n++] = *cur;
	}
	s->n = n;
	/* drop what draws nothing */
	for (i = n = 0; i < s->n; i++) {
		struct folded_stack *cur = &s->stacks[i];

		if (s->diff ? (!cur->value && !cur->base) : cur->value <= 0) {
			free(cur->stack);
			continue;
		}
		s->stacks[n++] = *cur;
	}
	s->n = n;
}

void folded_set_release(struct folded_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->stacks[i].stack);
	free(s->stacks);
	s->stacks = NULL;
	s->n = s->alloc = 0;
}

/* Parse the last whitespace-separated integer of line[0..*len). */
static int pop_number(char *line, size_t *len, int64_t *v)
{
	size_t end = *len, start;
	char *e;

	while (end && (line[end - 1] == ' ' || line[end - 1] == '\t'))
		end--;
	start = end;
	while (start && line[start - 1] != ' ' && line[start - 1] != '\t')
		start--;
	if (start == end || !start)
		return -1;
	line[end] = '\0';
	errno = 0;
	*v = strtoll(line + start, &e, 10);
	if (errno || *e)
		return -1;
	while (start && (line[start - 1] == ' ' || line[start - 1] == '\t'))
		start--;
	line[start] = '\0';
	*len = start;
	return 0;
}

/*
 * Read one line of f into *buf (grown as needed, to at most
 * FOLDED_MAX_LINE bytes without the newline; NUL-terminated), adding
 * the bytes read to *total.  Returns its length, -1 at the end of the
 * input, -2 for a line that is too long (errno E2BIG), an input over
 * FOLDED_MAX_INPUT (EFBIG) or a read error; *nul set when the line
 * holds a NUL byte.
 */
static ssize_t read_line(FILE *f, char **buf, size_t *cap, uint64_t *total, int *nul)
{
	size_t len = 0;
	int c;

	*nul = 0;
	while ((c = getc_unlocked(f)) != EOF) {
		if (++*total > FOLDED_MAX_INPUT) {
			errno = EFBIG;
			return -2;
		}
		if (c == '\n')
			break;
		if (len == FOLDED_MAX_LINE) {
			errno = E2BIG;
			return -2;
		}
		if (len + 1 >= *cap) {
			*cap = *cap ? *cap * 2 : 4096;
			if (*cap > FOLDED_MAX_LINE + 1)
				*cap = FOLDED_MAX_LINE + 1;
			*buf = xrealloc(*buf, *cap);
		}
		if (!c)
			*nul = 1;
		(*buf)[len++] = (char)c;
	}
	if (c == EOF && (ferror(f) || !len))
		return ferror(f) ? -2 : -1;
	if (!*buf)
		*buf = xcalloc(1, *cap = 1);
	(*buf)[len] = '\0';
	return (ssize_t)len;
}

long folded_set_parse(struct folded_set *s, FILE *f)
{
	char *line = NULL;
	uint64_t total = 0;
	size_t cap = 0, len, first = s->n;
	ssize_t r;
	long bad = 0;
	int64_t value, base;
	int nul;

	while ((r = read_line(f, &line, &cap, &total, &nul)) >= 0) {
		len = (size_t)r;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		line[len] = '\0';
		if (!len)
			continue;
		if (nul || pop_number(line, &len, &value) < 0) {
			bad++;
			continue;
		}
		base = 0;
		if (s->diff) {
			size_t keep = len;

			if (pop_number(line, &len, &base) < 0) {
				/* one count: the stack was absent before */
				len = keep;
				base = 0;
			}
		}
		if (!len) {
			bad++;
			continue;
		}
		if (s->n - first >= FOLDED_MAX_STACKS) {
			errno = EFBIG;
			r = -2;
			break;
		}
		folded_set_add(s, line, value, base);
	}
	free(line);
	if (r == -2)
		return -1;
	return bad;
}

int folded_set_write(FILE *f, const struct folded_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct folded_stack *fs = &s->stacks[i];

		if (s->diff)
			fprintf(f, "%s %" PRId64 " %" PRId64 "\n", fs->stack,
				fs->base, fs->value);
		else
			fprintf(f, "%s %" PRId64 "\n", fs->stack, fs->value);
	}
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

int write_folded(FILE *f, const struct profile *p, const struct output_options *o)
{
	struct folded_set s = FOLDED_SET_INIT;
	int ret;

	if (folded_set_from_profile(&s, p, o) < 0)
		return -1;
	folded_set_finish(&s);
	ret = folded_set_write(f, &s);
	folded_set_release(&s);
	return ret;
}

/*
 * json-read.c - the bounded JSON reader of include/json-read.h: a
 * recursive descent parser over a buffer, depth-limited, that refuses
 * what memtap never writes (fractions, huge numbers, control characters
 * in strings) and anything beyond the documented limits.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json-read.h"
#include "util/xmalloc.h"

struct jparser {
	const char *start, *s, *end;
	int depth;
	char *err;
	size_t errsize;
	const char *const *skip;	/* member names whose values are dropped */
};

static int skipped(const struct jparser *j, const char *key)
{
	for (const char *const *k = j->skip; k && *k; k++)
		if (!strcmp(*k, key))
			return 1;
	return 0;
}

void jval_release(struct jval *v)
{
	if (v->type == J_STR) {
		free(v->str);
	} else if (v->type == J_ARR || v->type == J_OBJ) {
		for (size_t i = 0; i < v->n; i++) {
			jval_release(&v->items[i]);
			if (v->keys)
				free(v->keys[i]);
		}
		free(v->items);
		free(v->keys);
	}
	memset(v, 0, sizeof(*v));
}

/* A container's arrays to their size: grown by doubling, half may be spare. */
static void fit(struct jval *v)
{
	if (!v->n)
		return;
	v->items = xrealloc(v->items, v->n * sizeof(*v->items));
	if (v->keys)
		v->keys = xrealloc(v->keys, v->n * sizeof(*v->keys));
}

/* Record the first error, with the line of the current position. */
static int fail(struct jparser *j, const char *fmt, ...)
{
	size_t line = 1;
	int n;
	va_list ap;

	if (j->err[0])
		return -1;
	for (const char *c = j->start; c < j->s && c < j->end; c++)
		line += *c == '\n';
	n = snprintf(j->err, j->errsize, "line %zu: ", line);
	if (n < 0 || (size_t)n >= j->errsize)
		return -1;
	va_start(ap, fmt);
	vsnprintf(j->err + n, j->errsize - n, fmt, ap);
	va_end(ap);
	return -1;
}

static void skip_ws(struct jparser *j)
{
	while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r'))
		j->s++;
}

static int hex4(const char *s, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];

		*u <<= 4;
		if (c >= '0' && c <= '9')
			*u |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*u |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*u |= c - 'A' + 10;
		else
			return -1;
	}
	return 0;
}

static void put_utf8(char **o, unsigned c)
{
	unsigned char *p = (unsigned char *)*o;

	if (c < 0x80) {
		*p++ = c;
	} else if (c < 0x800) {
		*p++ = 0xc0 | c >> 6;
		*p++ = 0x80 | (c & 0x3f);
	} else if (c < 0x10000) {
		*p++ = 0xe0 | c >> 12;
		*p++ = 0x80 | ((c >> 6) & 0x3f);
		*p++ = 0x80 | (c & 0x3f);
	} else {
		*p++ = 0xf0 | c >> 18;
		*p++ = 0x80 | ((c >> 12) & 0x3f);
		*p++ = 0x80 | ((c >> 6) & 0x3f);
		*p++ = 0x80 | (c & 0x3f);
	}
	*o = (char *)p;
}

/*
 * The string at j->s (on its opening quote) into a new buffer: escapes
 * never make a string longer than it is written (\uXXXX is 6 bytes for
 * at most 3, a surrogate pair 12 for 4).
 */
static char *parse_string(struct jparser *j)
{
	const char *s = j->s + 1, *close;
	char *buf, *o;
	unsigned u, lo;

	for (close = s; close < j->end && *close != '"'; close++)
		if (*close == '\\' && close + 1 < j->end)
			close++;
	if (close >= j->end) {
		fail(j, "string without its closing quote");
		return NULL;
	}
	if ((size_t)(close - s) > JSON_MAX_STRING) {
		fail(j, "string longer than %zu bytes", JSON_MAX_STRING);
		return NULL;
	}
	buf = o = xmalloc((size_t)(close - s) + 1);
	while (s < close) {
		unsigned char c = *s;

		if (c < 0x20) {
			j->s = s;
			fail(j, "control character in a string");
			goto bad;
		}
		if (c != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		switch (*s++) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (close - s < 4 || hex4(s, &u) < 0) {
				j->s = s;
				fail(j, "bad \\u escape in a string");
				goto bad;
			}
			s += 4;
			if (!u) {
				j->s = s;
				fail(j, "\\u0000 in a string");
				goto bad;
			}
			if (u >= 0xd800 && u < 0xdc00 && close - s >= 6 && s[0] == '\\' &&
			    s[1] == 'u' && !hex4(s + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			} else if (u >= 0xd800 && u < 0xe000) {
				u = 0xfffd;
			}
			put_utf8(&o, u);
			break;
		default:
			j->s = s - 1;
			fail(j, "bad escape in a string");
			goto bad;
		}
	}
	*o = '\0';
	j->s = close + 1;
	return buf;
bad:
	free(buf);
	return NULL;
}

static int parse_value(struct jparser *j, struct jval *v);

static int parse_container(struct jparser *j, struct jval *v, int obj)
{
	size_t alloc = 0, kalloc = 0;
	char close = obj ? '}' : ']';

	v->type = obj ? J_OBJ : J_ARR;
	j->s++;
	skip_ws(j);
	if (j->s < j->end && *j->s == close) {
		j->s++;
		return 0;
	}
	for (;;) {
		char *key = NULL;

		skip_ws(j);
		if (obj) {
			if (j->s >= j->end || *j->s != '"')
				return fail(j, "expected a member name");
			if (!(key = parse_string(j)))
				return -1;
			skip_ws(j);
			if (j->s >= j->end || *j->s != ':') {
				free(key);
				return fail(j, "expected ':'");
			}
			j->s++;
			v->keys = xgrowarray(v->keys, &kalloc, v->n + 1, sizeof(*v->keys));
			v->keys[v->n] = key;
		}
		v->items = xgrowarray(v->items, &alloc, v->n + 1, sizeof(*v->items));
		memset(&v->items[v->n], 0, sizeof(*v->items));
		v->n++;
		if (parse_value(j, &v->items[v->n - 1]) < 0)
			return -1;
		if (obj && skipped(j, key))
			jval_release(&v->items[v->n - 1]);	/* checked, now null */
		skip_ws(j);
		if (j->s < j->end && *j->s == ',') {
			j->s++;
			continue;
		}
		if (j->s < j->end && *j->s == close) {
			j->s++;
			fit(v);
			return 0;
		}
		return fail(j, "expected ',' or '%c'", close);
	}
}

static int parse_literal(struct jparser *j, struct jval *v, const char *word, enum jtype type)
{
	size_t n = strlen(word);

	v->type = type;
	if ((size_t)(j->end - j->s) < n || memcmp(j->s, word, n))
		return fail(j, "unexpected character");
	j->s += n;
	return 0;
}

/* An integer: -?(0|[1-9][0-9]*) that fits in int64. */
static int parse_number(struct jparser *j, struct jval *v)
{
	const char *s = j->s;
	int neg = 0;
	uint64_t n = 0, limit;

	v->type = J_NUM;
	if (s < j->end && *s == '-') {
		neg = 1;
		s++;
	}
	if (s >= j->end || *s < '0' || *s > '9')
		return fail(j, "unexpected character");
	if (*s == '0' && s + 1 < j->end && s[1] >= '0' && s[1] <= '9')
		return fail(j, "number with a leading zero");
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; s < j->end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = *s - '0';

		if (n > (limit - d) / 10)
			return fail(j, "number out of range");
		n = n * 10 + d;
	}
	if (s < j->end && (*s == '.' || *s == 'e' || *s == 'E'))
		return fail(j, "number that is not an integer");
	v->num = neg ? (int64_t)(0 - n) : (int64_t)n;
	j->s = s;
	return 0;
}

static int parse_value(struct jparser *j, struct jval *v)
{
	int ret;

	skip_ws(j);
	if (j->s >= j->end)
		return fail(j, "unexpected end of input");
	switch (*j->s) {
	case '{':
	case '[':
		if (++j->depth > JSON_MAX_DEPTH)
			return fail(j, "nested deeper than %d levels", JSON_MAX_DEPTH);
		ret = parse_container(j, v, *j->s == '{');
		j->depth--;
		return ret;
	case '"':
		v->type = J_STR;
		v->str = parse_string(j);
		return v->str ? 0 : -1;
	case 'n':
		return parse_literal(j, v, "null", J_NULL);
	case 't':
		return parse_literal(j, v, "true", J_TRUE);
	case 'f':
		return parse_literal(j, v, "false", J_FALSE);
	default:
		return parse_number(j, v);
	}
}

int json_parse_skip(const char *text, size_t len, struct jval *v, const char *const *skip,
		    char *err, size_t errsize)
{
	struct jparser j = { text, text, text + len, 0, err, errsize, skip };
	const char *line = text;

	memset(v, 0, sizeof(*v));
	err[0] = '\0';
	if (len > JSON_MAX_INPUT) {
		snprintf(err, errsize, "larger than %zu bytes", JSON_MAX_INPUT);
		return -1;
	}
	for (const char *c = text; c <= text + len; c++) {
		if (c < text + len && *c != '\n')
			continue;
		if ((size_t)(c - line) > JSON_MAX_LINE) {
			j.s = line;
			return fail(&j, "longer than %zu bytes", JSON_MAX_LINE);
		}
		line = c + 1;
	}
	if (parse_value(&j, v) < 0)
		goto bad;
	skip_ws(&j);
	if (j.s < j.end) {
		fail(&j, "text after the end of the value");
		goto bad;
	}
	return 0;
bad:
	jval_release(v);
	return -1;
}

int json_parse(const char *text, size_t len, struct jval *v, char *err, size_t errsize)
{
	return json_parse_skip(text, len, v, NULL, err, errsize);
}

const struct jval *json_get(const struct jval *obj, const char *key, enum jtype type)
{
	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i].type == type ? &obj->items[i] : NULL;
	return NULL;
}

const char *json_get_str(const struct jval *obj, const char *key)
{
	const struct jval *v = json_get(obj, key, J_STR);

	return v ? v->str : NULL;
}

/*
 * json-read.h - a bounded JSON reader, enough for memtap's own reports
 * (recordings): a tree of values, numbers as int64 (the reports have no
 * fractions).
 *
 * Limits, each refused with a one-line message (never a crash):
 * JSON_MAX_INPUT bytes of input, JSON_MAX_LINE bytes per line,
 * JSON_MAX_STRING bytes per string (as written, escapes included),
 * JSON_MAX_DEPTH nested arrays and objects; numbers must be integers
 * that fit in int64; strings must not hold control characters or
 * U+0000.  Invalid UTF-8 is kept as is (the writers replace it).
 */
#ifndef MEMTAP_JSON_READ_H
#define MEMTAP_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_INPUT ((size_t)256 << 20)
#define JSON_MAX_LINE ((size_t)1 << 20)
#define JSON_MAX_STRING ((size_t)64 << 10)
#define JSON_MAX_DEPTH 32

enum jtype { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };

/* 32 bytes: a recording of a million stacks is tens of millions of them */
struct jval {
	enum jtype type;
	size_t n;		/* J_ARR, J_OBJ: items (and keys) */
	union {
		int64_t num;	/* J_NUM */
		char *str;	/* J_STR, NUL-terminated */
		struct {
			struct jval *items;	/* J_ARR, J_OBJ: n of them */
			char **keys;		/* J_OBJ */
		};
	};
};

/*
 * Parse text[0..len) (one value, white space around it) into *v.
 * Returns 0, or -1 with err (errsize bytes) holding "line N: what is
 * wrong"; *v is then released.  v must be released with jval_release().
 */
int json_parse(const char *text, size_t len, struct jval *v, char *err, size_t errsize);
/*
 * json_parse(), but the values of object members named in skip (a
 * NULL-terminated list) are checked and then dropped: they read as
 * null.  Big parts a reader does not need cost no memory.
 */
int json_parse_skip(const char *text, size_t len, struct jval *v, const char *const *skip,
		    char *err, size_t errsize);
void jval_release(struct jval *v);

/* The member key of object obj when it has that type, else NULL. */
const struct jval *json_get(const struct jval *obj, const char *key, enum jtype type);
/* The string member key, or NULL (absent, null or not a string). */
const char *json_get_str(const struct jval *obj, const char *key);

#endif /* MEMTAP_JSON_READ_H */

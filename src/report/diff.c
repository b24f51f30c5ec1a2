/*
 * diff.c - what `memtap diff BEFORE AFTER` compares (its command line is
 * cli/diff.c): two recordings.
 *
 * Inputs are folded stacks ("stack N" lines, as `memtap -F folded`
 * writes them) or JSON reports (`memtap -F json`, recognized by their
 * first non-blank character '{').  The output is either the difffolded
 * format, "stack before after" per distinct stack (flamegraph.pl and
 * `memtap diff` draw it), or a differential SVG flame graph drawn by
 * out-svg.c: frame widths show AFTER, colours the change (red grew,
 * blue shrank).
 *
 * JSON reports are recordings (recording.c), read back into a struct
 * profile and weighed by one value type, the one chosen by --type or
 * the recording's default, so that their frames are named exactly as
 * the folded writer names them.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/outfile.h"
#include "report/output.h"
#include "util/xmalloc.h"

/* The first character of f that is not white space, put back; or EOF. */
static int peek_nonblank(FILE *f)
{
	uint64_t n = 0;
	int c;

	while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		if (++n > FOLDED_MAX_INPUT) {
			errno = EFBIG;
			return EOF;
		}
	if (c != EOF)
		ungetc(c, f);
	else if (!ferror(f))
		errno = 0;
	return c;
}

int diff_load(struct folded_set *s, const char *path, FILE *f, int after,
	      const struct output_options *o, const char *type)
{
	struct profile p = { 0 };
	size_t first = s->n, i;
	long bad;
	int c, ret = -1;

	c = peek_nonblank(f);
	if (c == EOF && errno) {
		if (errno == EFBIG)
			error_msg("'%s': larger than %llu MiB, the limit of memtap diff inputs",
				  path, FOLDED_MAX_INPUT >> 20);
		else
			perror_msg("cannot read '%s'", path);
		goto out;
	}
	if (c == '{') {
		struct output_options po = *o;

		po.value_index = 0;
		po.base_index = 0;
		static char unit[32];

		if (recording_read(path, f, &p) < 0)
			goto out;
		if (type && profile_find_type(&p, type) == (size_t)-1) {
			error_msg("'%s': no value type '%s'", path, type);
			goto out;
		}
		if (type)
			po.value_index = profile_find_type(&p, type) + 1;
		if (folded_set_from_profile(s, &p, &po) < 0)
			goto out;
		/* s->unit pointed into p, which goes away */
		snprintf(unit, sizeof(unit), "%s", s->unit);
		s->unit = unit;
	} else {
		bad = folded_set_parse(s, f);
		if (bad < 0) {
			if (errno == E2BIG)
				error_msg("'%s': a line is longer than %d MiB: not folded stacks",
					  path, FOLDED_MAX_LINE >> 20);
			else if (errno == EFBIG)
				error_msg("'%s': more than %llu MiB or %d stacks, the limits of "
					  "memtap diff inputs", path, FOLDED_MAX_INPUT >> 20,
					  FOLDED_MAX_STACKS);
			else
				perror_msg("cannot read '%s'", path);
			goto out;
		}
		if (bad)
			warn_msg("'%s': %ld lines are not \"stack count\": skipped",
				 path, bad);
	}
	if (!after)
		for (i = first; i < s->n; i++) {
			s->stacks[i].base = s->stacks[i].value;
			s->stacks[i].value = 0;
		}
	ret = 0;
out:
	profile_release(&p);
	return ret;
}

/* Append the stacks of the file at path to s (see diff_load). */
static int load_input(struct folded_set *s, const char *path, int after,
		      const struct output_options *o, const char *type)
{
	FILE *f = fopen(path, "re");
	int ret;

	if (!f) {
		perror_msg("cannot open '%s'", path);
		return -1;
	}
	ret = diff_load(s, path, f, after, o, type);
	fclose(f);
	return ret;
}

/* The differential set and its options, for outfile_write(). */
struct diff_write {
	const struct folded_set *s;
	const struct output_options *o;
};

static int write_diff_svg(FILE *f, const void *arg)
{
	const struct diff_write *dw = arg;

	return svg_write_set(f, dw->s, dw->o);
}

static int write_diff_folded(FILE *f, const void *arg)
{
	const struct diff_write *dw = arg;

	return folded_set_write(f, dw->s);
}

int diff_files(const char *before, const char *after, const char *type, int svg,
	       const struct output_options *o, const char *output)
{
	struct folded_set s = FOLDED_SET_INIT;
	struct diff_write dw;
	int ret = -1;

	if (load_input(&s, before, 0, o, type) < 0 || load_input(&s, after, 1, o, type) < 0)
		goto out;
	s.diff = 1;
	folded_set_finish(&s);

	dw.s = &s;
	dw.o = o;
	if (outfile_write(output, svg ? write_diff_svg : write_diff_folded, &dw) < 0)
		goto out;
	ret = 0;
out:
	folded_set_release(&s);
	return ret;
}

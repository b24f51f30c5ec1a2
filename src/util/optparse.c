/*
 * optparse.c - strict parsers of option values (see optparse.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/optparse.h"

/*
 * Length of the unsigned decimal number at the start of s: digits, then
 * with fraction set an optional ".digits", with exponent set an optional
 * "e[+-]digits".  0 when s does not start with a digit: no sign, no
 * space, no "0x", "inf" or "nan", which strtod() would take.
 */
static size_t decimal_span(const char *s, int fraction, int exponent)
{
	size_t n = strspn(s, "0123456789");

	if (!n)
		return 0;
	if (fraction && s[n] == '.')
		n += 1 + strspn(s + n + 1, "0123456789");
	if (exponent && (s[n] == 'e' || s[n] == 'E')) {
		size_t e = n + 1 + (s[n + 1] == '+' || s[n + 1] == '-');
		size_t d = strspn(s + e, "0123456789");

		if (d)
			n = e + d;
	}
	return n;
}

int parse_size(const char *s, uint64_t *bytes)
{
	size_t n = decimal_span(s, 1, 0);
	const char *end = s + n;
	double v;

	if (!n)
		return -1;
	v = strtod(s, NULL);
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024.0 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'i' && end != s + n)
		end++;		/* KiB, MiB... */
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > 9.0e18)
		return -1;
	*bytes = (uint64_t)v;
	return 0;
}

int parse_decimal(const char *s, double *value)
{
	size_t n = decimal_span(s, 1, 1);
	double v;

	if (!n || s[n])
		return -1;
	errno = 0;
	v = strtod(s, NULL);
	if (errno)
		return -1;
	*value = v;
	return 0;
}

int parse_whole(const char *s, long lo, long hi, long *value)
{
	size_t n = decimal_span(s, 0, 0);
	long v;

	if (!n || s[n])
		return -1;
	errno = 0;
	v = strtol(s, NULL, 10);
	if (errno || v < lo || v > hi)
		return -1;
	*value = v;
	return 0;
}

long xparse_whole(const char *arg, const char *name, long lo, long hi)
{
	long v;

	if (parse_whole(arg, lo, hi, &v) < 0)
		usage_error("invalid value '%s' for %s (want a whole number from %ld to %ld)",
			    arg, name, lo, hi);
	return v;
}

void format_size(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/*
 * optparse.h - strict parsers of option values, shared by memtap's
 * command line and its subcommands (optparse.c).
 *
 * Every parser takes the whole string or nothing: plain decimal digits
 * (no sign, no surrounding space, no "0x", "inf" or "nan"), and returns
 * 0 with the value stored, or -1 leaving it alone.
 */
#ifndef MEMTAP_OPTPARSE_H
#define MEMTAP_OPTPARSE_H

#include <stddef.h>
#include <stdint.h>

/* "123", "64K", "1.5M", "2GiB" (K, M, G, T are powers of 1024) -> bytes. */
int parse_size(const char *s, uint64_t *bytes);
/* The other way, for people: "512 B", "1.5 KiB", "12.0 MiB" into buf. */
void format_size(char *buf, size_t size, uint64_t bytes);
/* A decimal number with optional fraction and exponent: "30", "0.5", "1e3". */
int parse_decimal(const char *s, double *value);
/* A whole decimal number in [lo, hi]. */
int parse_whole(const char *s, long lo, long hi, long *value);
/*
 * parse_whole() for option name, or a usage error (exit 64) naming the
 * option, the value and the range.
 */
long xparse_whole(const char *arg, const char *name, long lo, long hi);

#endif /* MEMTAP_OPTPARSE_H */

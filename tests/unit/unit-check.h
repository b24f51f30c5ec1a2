/*
 * unit-check.h - CHECK(cond, fmt, ...) of the unit tests that count
 * their failures: a failed condition prints "FAIL file:line: " and the
 * message, and adds one to failures; unit_status() is main's exit
 * status.
 */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL %s:%d: ", __FILE__, __LINE__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failures++; \
	} \
} while (0)

/* main's end: 1 when a CHECK failed, else "ok" printed and 0. */
static inline int unit_status(void)
{
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

#endif /* UNIT_CHECK_H */

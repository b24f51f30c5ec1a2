/*
 * seccomp-unit.c - the seccomp filter memtap installs in a command it
 * launches (src/trace/seccomp.c), byte for byte: for every choice of
 * events that changes it (each syscall kind on or off; no allocator
 * probe, --probe only, allocator probes, a fault kind), its length and
 * the FNV-1a hash of its instructions, one line each, which
 * seccomp-unit.test compares with tests/golden/seccomp-filter.txt.  The
 * filter's return data is an index into the syscall table, so the
 * table's order is in the hashes too.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "trace/memtap.h"
#include "linux/features.h"
#include "probe/sandbox.h"
#include "report/events.h"
#include "unit-check.h"

static struct sock_filter got[512];
static size_t ngot;

/* seccomp.c hands sandbox.c the filter it made: kept here instead */
void sandbox_own_filter(const struct sock_filter *prog, size_t len)
{
	if (len > sizeof(got) / sizeof(got[0]))
		len = sizeof(got) / sizeof(got[0]);
	memcpy(got, prog, len * sizeof(*prog));
	ngot = len;
}

int feature_has(enum feature f)
{
	(void)f;
	return 1;
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

int main(void)
{
	static const unsigned kinds[] = { EV_BRK, EV_MMAP, EV_MUNMAP, EV_MREMAP,
					  EV_MPROTECT, EV_MADVISE };
	const unsigned extra[] = { 0, EV_BIT(EV_PROBE), EV_BIT(EV_MALLOC),
				   EV_BIT(EV_FAULTS) };

	for (size_t e = 0; e < sizeof(extra) / sizeof(extra[0]); e++)
		for (unsigned m = 0; m < 1u << 6; m++) {
			unsigned events = extra[e];

			for (unsigned k = 0; k < 6; k++)
				if (m & (1u << k))
					events |= EV_BIT(kinds[k]);
			ngot = 0;
			seccomp_filter_note_own(events);
			CHECK(ngot > 0 && ngot < 256, "events %#x: %zu instructions", events, ngot);
			printf("events %#07x: %3zu instructions, %016" PRIx64 "\n", events, ngot,
			       fnv(got, ngot * sizeof(got[0])));
		}
	printf(failures ? "failed\n" : "ok\n");
	return failures != 0;
}

/*
 * seccomp-wrappers.c - the filter of a process whose C library wrappers
 * are detoured (seccomp_filter_wrappers(), src/trace/seccomp.c), run by
 * memtap's classic-BPF interpreter (src/linux/bpf.c) on every memory
 * syscall of every ABI: it allows a native mmap without PROT_EXEC,
 * munmap, mremap or brk made from exactly one of the given addresses,
 * and returns what the launch filter returns for anything else: the
 * same call from an address one off, from an address whose low word
 * only matches, from the other ABIs, with PROT_EXEC, every other
 * syscall.  For each choice of events, with the most addresses taken.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "trace/memtap.h"
#include "linux/bpf.h"
#include "linux/features.h"
#include "probe/sandbox.h"
#include "report/events.h"
#include "unit-check.h"

static struct sock_filter plain[SECCOMP_FILTER_MAX];
static size_t nplain;

/* seccomp.c hands sandbox.c the launch filter: kept here instead */
void sandbox_own_filter(const struct sock_filter *prog, size_t len)
{
	if (len > SECCOMP_FILTER_MAX)
		len = SECCOMP_FILTER_MAX;
	memcpy(plain, prog, len * sizeof(*prog));
	nplain = len;
}

int feature_has(enum feature f)
{
	(void)f;
	return 1;
}

/* The detoured wrappers' syscall instructions' next addresses. */
static uint64_t ips[SECCOMP_WRAPPER_IPS_MAX];

static int is_wrapper_ip(uint64_t ip, size_t nips)
{
	for (size_t i = 0; i < nips; i++)
		if (ips[i] == ip)
			return 1;
	return 0;
}

/* A syscall that is no memory syscall: getpid. */
#if defined(__aarch64__)
# define OTHER_NR 172
#else
# define OTHER_NR 39
#endif

static uint32_t audit_of(enum abi abi)
{
	for (size_t i = 0; i < arch_naudits; i++)
		if (arch_audits[i].abis & (1u << abi))
			return arch_audits[i].audit_arch;
	return 0;
}

static uint32_t run(const struct sock_filter *f, size_t n, const struct seccomp_data *d)
{
	uint32_t ret = 0;

	CHECK(bpf_run(f, n, d, &ret) == 0, "nr %d: the filter is invalid", d->nr);
	return ret;
}

static unsigned checked, allowed;

/* One filter for events and nips addresses against the launch filter. */
static void check_events(unsigned events, size_t nips)
{
	static struct sock_filter f[SECCOMP_FILTER_MAX];
	static const uint64_t prots[] = { PROT_READ | PROT_WRITE, PROT_READ | PROT_EXEC,
					  PROT_NONE };
	uint64_t probe_ips[SECCOMP_WRAPPER_IPS_MAX * 3 + 2];
	size_t nprobe = 0, n;

	nplain = 0;
	seccomp_filter_note_own(events);
	n = seccomp_filter_wrappers(f, events, ips, nips);
	CHECK(n > nplain && n <= SECCOMP_FILTER_MAX, "events %#x, %zu addresses: %zu instructions",
	      events, nips, n);
	if (!n)
		return;
	for (size_t i = 0; i < nips; i++) {
		probe_ips[nprobe++] = ips[i];
		probe_ips[nprobe++] = ips[i] + 1;
		probe_ips[nprobe++] = ips[i] ^ (1ULL << 40);	/* the low word alone */
	}
	probe_ips[nprobe++] = 0;
	probe_ips[nprobe++] = ~0ULL;
	for (size_t s = 0; s <= arch_nsyscalls; s++) {
		/* every memory syscall, and one that is none */
		const struct arch_syscall *d = s < arch_nsyscalls ? &arch_syscalls[s] : NULL;
		enum abi abi = d ? d->abi : ARCH_ABI_NATIVE;
		int nr = d ? (int)d->nr : OTHER_NR;

		for (size_t p = 0; p < sizeof(prots) / sizeof(prots[0]); p++)
			for (size_t k = 0; k < nprobe; k++) {
				struct seccomp_data data = {
					.nr = nr, .arch = audit_of(abi),
					.instruction_pointer = probe_ips[k],
					.args = { 0, 4096, prots[p], MAP_PRIVATE | MAP_ANONYMOUS },
				};
				int wrapper = d && abi == ARCH_ABI_NATIVE &&
					      ((d->id == SC_MMAP && !(prots[p] & PROT_EXEC)) ||
					       d->id == SC_MUNMAP || d->id == SC_MREMAP ||
					       d->id == SC_BRK);
				uint32_t want = run(plain, nplain, &data);
				uint32_t got = run(f, n, &data);

				if (wrapper && is_wrapper_ip(probe_ips[k], nips))
					want = SECCOMP_RET_ALLOW;
				allowed += want == SECCOMP_RET_ALLOW && got == want;
				checked++;
				CHECK(got == want, "events %#x, %s %d (abi %d), prot %#" PRIx64
				      ", ip %#" PRIx64 ": %#x, not %#x", events,
				      d ? d->name : "getpid", nr, abi, (uint64_t)prots[p],
				      probe_ips[k], got, want);
			}
	}
}

int main(void)
{
	static const unsigned kinds[] = { EV_BRK, EV_MMAP, EV_MUNMAP, EV_MREMAP,
					  EV_MPROTECT, EV_MADVISE };
	const unsigned extra[] = { 0, EV_BIT(EV_PROBE), EV_BIT(EV_MALLOC),
				   EV_BIT(EV_FAULTS) };
	struct sock_filter f[SECCOMP_FILTER_MAX];

	/* libc's addresses, a low word of 0, and one past a 32-bit boundary */
	for (size_t i = 0; i < SECCOMP_WRAPPER_IPS_MAX; i++)
		ips[i] = 0x7f3a12c00000ULL + 0x1f3 * i + 2;
	ips[1] = 0x7f3a00000000ULL;
	ips[2] = 0x100000000ULL;
	CHECK(seccomp_filter_wrappers(f, EV_SYSCALLS, ips, 0) == 0, "no address: a filter");
	CHECK(seccomp_filter_wrappers(f, EV_SYSCALLS, ips, SECCOMP_WRAPPER_IPS_MAX + 1) == 0,
	      "too many addresses: a filter");
	for (size_t e = 0; e < sizeof(extra) / sizeof(extra[0]); e++)
		for (unsigned m = 0; m < 1u << 6; m++) {
			unsigned events = extra[e];

			for (unsigned k = 0; k < 6; k++)
				if (m & (1u << k))
					events |= EV_BIT(kinds[k]);
			check_events(events, 1);
			check_events(events, 3);
			check_events(events, SECCOMP_WRAPPER_IPS_MAX);
		}
	CHECK(allowed > 0, "nothing allowed");
	printf("%u calls, %u allowed\n", checked, allowed);
	return unit_status();
}

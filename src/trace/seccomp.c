/*
 * seccomp.c - the seccomp filter that makes memory syscalls, and only
 * them, stop the tracee (SECCOMP_RET_TRACE).
 *
 * The filter is generated from the arch's syscall table (arch/arch.h):
 * one block per audit arch of arch_audits[], which checks
 * seccomp_data.arch first (several ABIs may share one and differ by the
 * number, as x86-64's x32 does), then compares the number.  Calls that
 * map code (mmap, mprotect with PROT_EXEC) stop too whatever -e
 * selects, so that memtap knows every module: the tracer counts them
 * apart and makes no event of them (syscalls.c).
 * Any other architecture or syscall is allowed untouched.
 * SECCOMP_RET_DATA carries the index of the matched arch_syscalls[] entry,
 * so the tracer knows the ABI and the call without decoding anything.
 *
 * With allocator or --probe probes, seccomp and prctl(PR_SET_SECCOMP)
 * stop too: a filter the command adds to memtap's, which memtap must
 * know of where the kernel cannot show it (syscalls.c, probe/sandbox.h).
 *
 * With a fault kind, execve and execveat stop too (at their entry: the
 * faults' rings are read before the old image goes).
 *
 * Selected mprotect and madvise calls stop only when their arguments
 * make an event (syscall_args_relevant()): mprotect with PROT_WRITE or
 * PROT_NONE (and PROT_EXEC, for the code), madvise with MADV_DONTNEED,
 * MADV_FREE or MADV_REMOVE.
 *
 * Jump offsets are 8 bits: the block of one arch must stay under 256
 * instructions (each entry takes 2, 5 with the PROT_EXEC test, 6 or 7
 * with mprotect's and madvise's).
 *
 * A filter cannot be removed: it is only ever installed in a command
 * memtap launches and follows to its end, never in an attached process.
 * memtap tells sandbox.c what it installed: a syscall memtap injects
 * (remote.c) that this filter answers with SECCOMP_RET_TRACE stops in
 * memtap, which lets it run.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "trace/memtap.h"
#include "linux/features.h"
#include "probe/sandbox.h"
#include "report/events.h"

#ifndef SECCOMP_RET_TRACE
# define SECCOMP_RET_TRACE 0x7ff00000U
#endif

int seccomp_filter_available(void)
{
	/* prctl with a NULL program, once (linux/features.c) */
	return feature_has(F_SECCOMP_FILTER);
}

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))

/* Does an mmap or mprotect of this entry map code (prot in args[2])? */
static int watches_code(const struct arch_syscall *d)
{
	return d->id == SC_MMAP || d->id == SC_MMAP2 || d->id == SC_MPROTECT;
}

/*
 * Append, for one audit arch, "if arch matches: for each syscall of the
 * ABIs in abis, if nr == def.nr return TRACE|index; allow".  Syscalls
 * whose kind is not in events but that can map code stop only when
 * their prot argument has PROT_EXEC (old_mmap, whose arguments are in
 * memory, always).
 */
/* The test of one entry, and its length in instructions. */
enum entry_test { PLAIN, CODE_ONLY, MPROTECT_ARGS, MADVISE_ARGS, PRCTL_ARGS };
static const size_t code_len[] = {
	[PLAIN] = 2, [CODE_ONLY] = 5, [MPROTECT_ARGS] = 6, [MADVISE_ARGS] = 7,
	[PRCTL_ARGS] = 5,
};

/*
 * The ids of the calls a detoured wrapper may make without a stop, in
 * the native ABI; mmap's without PROT_EXEC only.
 */
static const enum sc_id wrapper_ids[] = { SC_MMAP, SC_MUNMAP, SC_MREMAP, SC_BRK };
#define NWRAPPER_IDS (sizeof(wrapper_ids) / sizeof(wrapper_ids[0]))

/* The length of wrapper_allow()'s code for nips addresses. */
static size_t wrapper_allow_len(size_t nips)
{
	return NWRAPPER_IDS + 1 + 2 + 4 * nips + 2;
}

/*
 * Append, after the load of nr: "if nr is one of wrapper_ids[] (mmap
 * without PROT_EXEC) and instruction_pointer is one of ips[], allow",
 * wrapper_allow_len(nips) instructions whose every other path falls
 * through to what follows them, which must reload nr.  The 64-bit
 * pointer is compared as two words, the low one first (little-endian).
 */
static size_t wrapper_allow(struct sock_filter *f, size_t n, const uint64_t *ips, size_t nips)
{
	const uint32_t ip = offsetof(struct seccomp_data, instruction_pointer);
	size_t start = n, mmap_chk = NWRAPPER_IDS + 1, ip_chk = mmap_chk + 2;
	size_t allow = ip_chk + 4 * nips + 1, normal = allow + 1;

	for (size_t i = 0; i < NWRAPPER_IDS; i++) {
		const struct arch_syscall *d = arch_syscall_by_id(ARCH_ABI_NATIVE, wrapper_ids[i]);
		/* an id the ABI lacks: a test that never holds, same length */
		uint32_t nr = d ? (uint32_t)d->nr : UINT32_MAX;
		size_t to = wrapper_ids[i] == SC_MMAP ? mmap_chk : ip_chk;

		f[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, (uint8_t)(to - (n - start) - 1), 0);
		n++;
	}
	f[n] = JUMP(BPF_JMP | BPF_JA, (uint32_t)(normal - (n - start) - 1), 0, 0);
	n++;
	/* mmap: PROT_EXEC maps code, which stops whoever makes it */
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
	f[n] = JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, (uint8_t)(normal - (n - start) - 1), 0);
	n++;
	for (size_t j = 0; j < nips; j++) {
		f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ip);
		f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ips[j], 0, 2);
		f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ip + 4);
		f[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ips[j] >> 32),
			    (uint8_t)(allow - (n - start) - 1), 0);
		n++;
	}
	f[n++] = JUMP(BPF_JMP | BPF_JA, 1, 0, 0);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return n;
}

static size_t gen_arch(struct sock_filter *f, size_t n, uint32_t audit_arch,
		       unsigned abis, unsigned events, const uint64_t *ips, size_t nips)
{
	size_t match[32], nmatch = 0, len = 0;
	enum entry_test code[32];

	for (size_t i = 0; i < arch_nsyscalls; i++) {
		const struct arch_syscall *d = &arch_syscalls[i];
		enum event_kind kind = syscall_kind(d);
		int selected = kind < EV_NKINDS && (events & EV_BIT(kind));

		if (!(abis & (1u << d->abi)) || nmatch == 32)
			continue;
		/* with probes: a filter the command adds */
		if (d->id == SC_SECCOMP || d->id == SC_PRCTL) {
			if (!(events & EV_BREAKPOINT))
				continue;
			code[nmatch] = d->id == SC_PRCTL ? PRCTL_ARGS : PLAIN;
			len += code_len[code[nmatch]];
			match[nmatch++] = i;
			continue;
		}
		/* with allocator probes or a fault kind: a stop at exec, to read the rings first */
		if (d->id == SC_EXECVE && !(events & (EV_ALLOC | EV_FAULT_KINDS)))
			continue;
		if (!selected && !watches_code(d) && d->id != SC_OLD_MMAP && d->id != SC_EXECVE)
			continue;
		/* no syscall event: only the stop at exec (no code mapping notices) */
		if (!(events & EV_SYSCALL_STOPS) && d->id != SC_EXECVE)
			continue;
		code[nmatch] = !selected && watches_code(d) ? CODE_ONLY :
			       selected && d->id == SC_MPROTECT ? MPROTECT_ARGS :
			       selected && d->id == SC_MADVISE ? MADVISE_ARGS : PLAIN;
		if (!selected && d->id == SC_MADVISE)
			continue;
		len += code_len[code[nmatch]];
		match[nmatch++] = i;
	}

	/* the wrappers' addresses: the native ABI's block only */
	if (!(abis & (1u << ARCH_ABI_NATIVE)))
		nips = 0;
	if (nips)
		len += 1 + wrapper_allow_len(nips);
	/* arch != audit_arch: skip this block (1 + len + 1 insns) */
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 0, (uint8_t)(1 + len + 1));
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	if (nips) {
		n = wrapper_allow(f, n, ips, nips);
		f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	}
	for (size_t j = 0; j < nmatch; j++) {
		const struct arch_syscall *d = &arch_syscalls[match[j]];
		uint32_t ret = SECCOMP_RET_TRACE | (uint32_t)match[j];

		/* prot, advice: the low word of args[2] (little-endian) */
		switch (code[j]) {
		case PLAIN:
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)d->nr, 0, 1);
			f[n++] = STMT(BPF_RET | BPF_K, ret);
			break;
		case CODE_ONLY:
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)d->nr, 0, 4);
			f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
			f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1);
			f[n++] = STMT(BPF_RET | BPF_K, ret);
			f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
			break;
		case MPROTECT_ARGS:
			/* PROT_WRITE or PROT_EXEC, or PROT_NONE */
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)d->nr, 0, 5);
			f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
			f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE | PROT_EXEC, 2, 0);
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_NONE, 1, 0);
			f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
			f[n++] = STMT(BPF_RET | BPF_K, ret);
			break;
		case MADVISE_ARGS:
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)d->nr, 0, 6);
			f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_DONTNEED, 3, 0);
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_FREE, 2, 0);
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_REMOVE, 1, 0);
			f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
			f[n++] = STMT(BPF_RET | BPF_K, ret);
			break;
		case PRCTL_ARGS:
			/* option: the low word of args[0] */
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)d->nr, 0, 4);
			f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
			f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1);
			f[n++] = STMT(BPF_RET | BPF_K, ret);
			f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
			break;
		}
	}
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return n;
}

/*
 * Room for the filter: arch blocks of under 128 instructions (two on
 * x86-64), + 1; the wrappers' addresses add 4 each, and 12, to the
 * native block (tests/unit/seccomp-wrappers.c: the largest fits).
 */
#define FILTER_MAX SECCOMP_FILTER_MAX

/* The filter for events into f (FILTER_MAX entries): its length. */
static size_t gen_filter(struct sock_filter *f, unsigned events, const uint64_t *ips,
			 size_t nips)
{
	size_t n = 0;

	for (size_t i = 0; i < arch_naudits; i++)
		n = gen_arch(f, n, arch_audits[i].audit_arch, arch_audits[i].abis, events,
			     ips, nips);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return n;
}

size_t seccomp_filter_wrappers(struct sock_filter *f, unsigned events, const uint64_t *ips,
			       size_t nips)
{
	if (!nips || nips > SECCOMP_WRAPPER_IPS_MAX)
		return 0;
	return gen_filter(f, events, ips, nips);
}

void seccomp_filter_note_own(unsigned events)
{
	struct sock_filter f[FILTER_MAX];

	sandbox_own_filter(f, gen_filter(f, events, NULL, 0));
}

int seccomp_filter_install(unsigned events)
{
	struct sock_filter f[FILTER_MAX];
	size_t n = gen_filter(f, events, NULL, 0);

	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };

	/*
	 * Without CAP_SYS_ADMIN the kernel wants no_new_privs; with it we
	 * leave set-uid programs in the command working.
	 */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
		return 0;
	if (errno != EACCES)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/*
 * features.h - what the running kernel offers memtap, probed once at run
 * time (never guessed from uname: distributions backport, and seccomp
 * or Yama can take away what the version has).
 *
 * Every feature has a fallback elsewhere; the table says which path is
 * taken.  The probe (features_probe(), else at the first feature_has())
 * runs the kernel's own answers on memtap itself and on a child it
 * traces for a moment: a fork that is killed before the probe returns
 * (and by PTRACE_O_EXITKILL should memtap die first).
 *
 * MEMTAP_DISABLE=name,name... in the environment forces features off,
 * as if the kernel lacked them, so that each fallback can be tested on
 * any kernel.  An unknown name is an error (features_probe() dies with
 * a one-line message).
 */
#ifndef MEMTAP_FEATURES_H
#define MEMTAP_FEATURES_H

#include <stdio.h>

enum feature {
	F_PROCESS_VM_READV,	/* process_vm_readv (3.2, CONFIG_CROSS_MEMORY_ATTACH) */
	F_PROCESS_VM_WRITEV,	/* process_vm_writev */
	F_PROC_MEM,		/* read a tracee's /proc/PID/mem */
	F_PROC_MEM_WRITE,	/* write it, read-only pages included */
	F_GETSIGMASK,		/* PTRACE_GETSIGMASK/SETSIGMASK (3.11) */
	F_MAP_FIXED_NOREPLACE,	/* mmap MAP_FIXED_NOREPLACE (4.17) */
	F_SECCOMP_FILTER,	/* SECCOMP_MODE_FILTER (3.5) */
	F_SEIZE,		/* PTRACE_SEIZE, INTERRUPT, LISTEN (3.4) */
	F_EXITKILL,		/* PTRACE_O_EXITKILL (3.8) */
	F_GET_SYSCALL_INFO,	/* PTRACE_GET_SYSCALL_INFO (5.3) */
	F_PERF,			/* perf_event_open page-fault events (2.6.33);
				   not probed: tried per thread (linux/perf.h) */
	F_SECCOMP_ENTRY,	/* the seccomp stop stands for syscall-entry (4.8);
				 * learnt from the first stops, not probed: off,
				 * memtap starts from the older order */
	F_PAGEMAP_SCAN,		/* ioctl PAGEMAP_SCAN, PAGE_IS_HUGE (6.7); these three
				   are tried at use (linux/thp.h) */
	F_KPAGEFLAGS,		/* frame numbers and /proc/kpageflags (CAP_SYS_ADMIN) */
	F_SMAPS_THP,		/* AnonHugePages of /proc/PID/smaps (2.6.38) */
	F_SECCOMP_GET_FILTER,	/* PTRACE_SECCOMP_GET_FILTER (4.4); these two are
				   tried at use (probe/sandbox.h) */
	F_SECCOMP_FILTERS,	/* Seccomp_filters: in /proc/PID/status (5.9) */
	F_SHARED_RING,		/* the in-target ring as a memfd memtap maps too
				   (memfd_create, 3.17); tried at use (probe/detour-ring.h) */
	F_PREFETCHW,		/* the CPU's PREFETCHW (CPUID 0x80000001 ECX bit 8), which
				   the stubs run: the processor's, not the kernel's */
	F_OPENAT2,		/* openat2 RESOLVE_NO_SYMLINKS, RESOLVE_IN_ROOT (5.6):
				   tried at use (linux/tfile.h); else a walk
				   one component at a time */
	F_DL_DEBUG_STATE,	/* the dynamic linker's _dl_debug_state, where a
				   command's probes go in before the libraries'
				   constructors (trace/alloc-arm.c): the loader's,
				   not the kernel's; not in "all", whose results
				   are the same */
	F_STUB_CLOCK,		/* the CPU's counter that the in-target stubs stamp
				   each call with (stub-abi.h R_TIME): constant
				   and read alike by every CPU (x86-64: the
				   invariant TSC, CPUID 0x80000007 EDX bit 8), and
				   found in step with CLOCK_MONOTONIC at use
				   (arch_stub_clock_start()); without it an event
				   is stamped when memtap reads its record; not in
				   "all" either */
	F_NFEATURES
};

/*
 * Read MEMTAP_DISABLE and probe every feature not forced off.  Once;
 * later calls do nothing.  Call it early (before the first tracee), from
 * the tracer's thread: the probe child's stops are waited for by pid.
 */
void features_probe(void);

/* 1 if the feature is there (probing first if not done yet), else 0. */
int feature_has(enum feature f);

/*
 * The feature failed at use in a way that says the kernel lacks it
 * (ENOSYS, EIO from an unknown ptrace request, EPERM from a policy):
 * take the fallback from now on.  why is kept for features_print().
 */
void feature_lost(enum feature f, int err);

/*
 * A feature learnt from what the kernel did at use, not probed (the
 * order of stops): yes or no from now on, unless MEMTAP_DISABLE forced
 * it off, which only says where memtap starts from.
 */
void feature_found(enum feature f, int yes);

/* Its name as MEMTAP_DISABLE spells it ("process_vm_readv"...). */
const char *feature_name(enum feature f);

/*
 * One line per feature: name, yes/no and why (for -v).  To stderr as
 * -v messages (verbose_msg(): with their priority in the journal).
 */
void features_print(FILE *f);

#endif /* MEMTAP_FEATURES_H */

/*
 * sandbox.c - a thread's seccomp state, and whether it lets memtap
 * inject a given syscall (see sandbox.h for the rules).
 *
 * The filters are fetched at sandbox_load(), or found unchanged since
 * the last fetch from the same thread (a process may install a filter
 * at any time; a dozen injections in a row arm the probes).  Index 0 of
 * PTRACE_SECCOMP_GET_FILTER is the most recently installed filter, the
 * order bpf_seccomp_combine() wants.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>

#include "arch/arch.h"
#include "linux/bpf.h"
#include "linux/features.h"
#include "linux/procfs.h"
#include "probe/sandbox.h"
#include "util/xmalloc.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
# define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

/*
 * The kernel's limit on all the filters of a thread together is 32768
 * instructions, each filter counting 4 more than its length.
 */
#define MAX_FILTERS 6554

struct prog {
	struct sock_filter *insns;
	size_t len;
	int own;		/* identical to memtap's own launch filter */
};

struct sandbox {
	int mode;		/* Seccomp: 0, 1, 2; -1 unknown */
	int err;		/* mode 2: -errno when the filters are unknown */
	struct prog *progs;	/* mode 2: index 0 = most recent */
	size_t nprogs;
};

static struct sock_filter *own_insns;
static size_t own_len;
static long (*count_hint)(pid_t tid);

void sandbox_count_hint(long (*count)(pid_t tid))
{
	count_hint = count;
}

void sandbox_own_filter(const struct sock_filter *prog, size_t len)
{
	free(own_insns);
	own_insns = xmalloc(len * sizeof(*prog));
	memcpy(own_insns, prog, len * sizeof(*prog));
	own_len = len;
}

static int is_own(const struct sock_filter *insns, size_t len)
{
	return own_insns && len == own_len && !memcmp(insns, own_insns, len * sizeof(*insns));
}

/* Fetch every filter of tid into sb; 0 or -errno. */
static int fetch_filters(struct sandbox *sb, pid_t tid, long count)
{
	size_t max = count >= 0 && count < MAX_FILTERS ? (size_t)count : MAX_FILTERS;

	if (!feature_has(F_SECCOMP_GET_FILTER))
		return -EIO;	/* what the kernel says to an unknown request */
	for (size_t i = 0; i <= max; i++) {
		long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL);
		struct prog *p;

		if (n < 0 && errno == ENOENT && i > 0)
			return 0;	/* past the oldest filter */
		if (n < 0 && errno == EIO)
			feature_lost(F_SECCOMP_GET_FILTER, EIO);	/* Linux < 4.4 */
		if (n < 0)
			return errno ? -errno : -EIO;
		if (i == max)
			return -E2BIG;	/* more than the status said, or the kernel allows */
		if (n == 0 || n > BPF_PROG_MAX)
			return -EINVAL;
		sb->progs = xrealloc(sb->progs, (sb->nprogs + 1) * sizeof(*sb->progs));
		p = &sb->progs[sb->nprogs];
		p->insns = xcalloc((size_t)n, sizeof(*p->insns));
		p->len = (size_t)n;
		sb->nprogs++;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, p->insns) != n)
			return -EIO;	/* changed meanwhile: cannot be */
		p->own = is_own(p->insns, p->len);
	}
	return -E2BIG;
}

static void drop_progs(struct sandbox *sb)
{
	for (size_t i = 0; i < sb->nprogs; i++)
		free(sb->progs[i].insns);
	free(sb->progs);
	sb->progs = NULL;
	sb->nprogs = 0;
}

/*
 * The number of filters a status said (found: procfs_status_longs's
 * bits for Seccomp, Seccomp_filters): its Seccomp_filters (Linux 5.9),
 * or -1.  memtap's own status has the line unless the kernel lacks it.
 */
static long filters_said(int found, long n)
{
	long mine;

	if (!feature_has(F_SECCOMP_FILTERS))
		return -1;
	if (found & 2)
		return n;
	if (procfs_status_long(getpid(), "Seccomp_filters", &mine) < 0)
		feature_lost(F_SECCOMP_FILTERS, ENOENT);
	return -1;
}

/* tid's Seccomp: mode (-1 unknown) and, in *count, filters_said: one read of its status. */
static long status_of(pid_t tid, long *count)
{
	static const char *const names[] = { "Seccomp", "Seccomp_filters" };
	long v[2] = { -1, -1 };
	int found = procfs_status_longs(tid, names, v, 2);

	*count = found < 0 ? -1 : filters_said(found, v[1]);
	return found > 0 && (found & 1) ? v[0] : -1;
}

/* memtap's own number of filters: 0 when its Seccomp: says none. */
static long own_filters(void)
{
	long n, mode = status_of(getpid(), &n);

	return n < 0 && mode == 0 ? 0 : n;
}

/*
 * The filters last read with PTRACE_SECCOMP_GET_FILTER, and whose.  A
 * filter is never taken off a thread, and its mode stays 2: the
 * thread's filters are the same while each still has its length and
 * there is none past the oldest, n + 1 PTRACE_SECCOMP_GET_FILTERs where
 * reading them anew takes a read of its status and 2n + 1 (memtap
 * injects a dozen syscalls or more in a row through one thread when it
 * arms its probes).  A filter added since, by the thread or by
 * another's SECCOMP_FILTER_FLAG_TSYNC, is at index 0: a length moves.
 */
static struct sandbox kept;
static pid_t kept_tid;

static int still_kept(pid_t tid)
{
	if (!kept_tid || tid != kept_tid)
		return 0;
	for (size_t i = 0; i <= kept.nprogs; i++) {
		long n;

		errno = 0;
		n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL);
		if (i == kept.nprogs)
			return n < 0 && errno == ENOENT;
		if (n < 0 || (size_t)n != kept.progs[i].len)
			return 0;
	}
	return 0;
}

/* A copy of from's filters into to (whose own are dropped). */
static void copy_progs(struct sandbox *to, const struct sandbox *from)
{
	drop_progs(to);
	to->mode = from->mode;
	to->err = from->err;
	to->progs = xcalloc(from->nprogs, sizeof(*to->progs));
	for (size_t i = 0; i < from->nprogs; i++) {
		struct prog *p = &to->progs[i];

		p->len = from->progs[i].len;
		p->insns = xmalloc(p->len * sizeof(*p->insns));
		memcpy(p->insns, from->progs[i].insns, p->len * sizeof(*p->insns));
		p->own = is_own(p->insns, p->len);
	}
	to->nprogs = from->nprogs;
}

void sandbox_forget(pid_t tid)
{
	if (kept_tid && tid == kept_tid) {
		drop_progs(&kept);
		kept_tid = 0;
	}
}

struct sandbox *sandbox_load(pid_t tid)
{
	struct sandbox *sb = xcalloc(1, sizeof(*sb));
	long count;

	if (still_kept(tid)) {
		copy_progs(sb, &kept);
		return sb;
	}
	sandbox_forget(kept_tid);
	sb->mode = (int)status_of(tid, &count);
	if (sb->mode != 2)
		return sb;
	sb->err = fetch_filters(sb, tid, count);
	if (sb->err == 0) {
		copy_progs(&kept, sb);
		kept_tid = tid;
		return sb;
	}
	drop_progs(sb);
	/*
	 * Unreadable (no CAP_SYS_ADMIN, or Linux < 4.4): if memtap has no
	 * filter and the thread exactly one (as its status says, or else
	 * as the tracer knows), that one is memtap's own.
	 */
	if (count < 0 && count_hint)
		count = count_hint(tid);
	if (own_insns && count == 1 && own_filters() == 0) {
		sb->progs = xcalloc(1, sizeof(*sb->progs));
		sb->progs[0].insns = xmalloc(own_len * sizeof(*own_insns));
		memcpy(sb->progs[0].insns, own_insns, own_len * sizeof(*own_insns));
		sb->progs[0].len = own_len;
		sb->progs[0].own = 1;
		sb->nprogs = 1;
		sb->err = 0;
	}
	return sb;
}

void sandbox_free(struct sandbox *sb)
{
	if (!sb)
		return;
	drop_progs(sb);
	free(sb);
}

int sandbox_none(const struct sandbox *sb)
{
	return sb->mode == 0;
}

int sandbox_allows(const struct sandbox *sb, long nr, const uint64_t args[6], uint64_t insn,
		   struct sandbox_verdict *v)
{
	struct seccomp_data d;
	uint32_t *rets;
	int trace_ok = 1;

	memset(v, 0, sizeof(*v));
	v->mode = sb->mode;
	v->err = sb->err;
	if (sb->mode == 0) {
		v->allowed = 1;
		return 1;
	}
	if (sb->mode != 2 || sb->err)
		return 0;	/* strict, unknown, or filters unreadable */

	memset(&d, 0, sizeof(d));
	d.nr = (int)nr;
	d.arch = ARCH_AUDIT_NATIVE;
	d.instruction_pointer = insn + ARCH_SYSCALL_INSN_LEN;
	for (int i = 0; i < 6; i++)
		d.args[i] = args[i];
	rets = xcalloc(sb->nprogs, sizeof(*rets));
	for (size_t i = 0; i < sb->nprogs; i++) {
		if (bpf_run(sb->progs[i].insns, sb->progs[i].len, &d, &rets[i]) < 0) {
			free(rets);
			v->err = -EINVAL;
			return 0;
		}
		if ((rets[i] & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_TRACE && !sb->progs[i].own)
			trace_ok = 0;
	}
	v->action = bpf_seccomp_combine(rets, sb->nprogs, NULL);
	free(rets);
	switch (v->action & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
		v->allowed = 1;
		break;
	case SECCOMP_RET_TRACE:
		v->allowed = trace_ok;
		break;
	default:
		break;
	}
	return v->allowed;
}

int sandbox_check(pid_t tid, long nr, const uint64_t args[6], uint64_t insn,
		  struct sandbox_verdict *v)
{
	struct sandbox *sb = sandbox_load(tid);
	int r = sandbox_allows(sb, nr, args, insn, v);

	sandbox_free(sb);
	return r;
}

/* Why PTRACE_SECCOMP_GET_FILTER said EACCES. */
static const char *eacces_why(void)
{
	long mine = 0;

	if (procfs_status_long(getpid(), "Seccomp", &mine) == 0 && mine != 0)
		return ": memtap itself runs under seccomp";
	return ": it needs CAP_SYS_ADMIN";
}

void sandbox_reason(const struct sandbox_verdict *v, const char *call, char *buf,
		    size_t size)
{
	if (v->mode == 1)
		snprintf(buf, size, "it runs in strict seccomp mode, which forbids %s", call);
	else if (v->mode != 2)
		snprintf(buf, size, "its seccomp mode cannot be read from /proc (the Seccomp: "
			 "line of /proc/PID/status: Linux 3.8), so whether it allows %s is "
			 "unknown", call);
	else if (v->err == -EINVAL)
		snprintf(buf, size, "one of its seccomp filters cannot be evaluated, so "
			 "whether it allows %s is unknown", call);
	else if (v->err == -EIO && !feature_has(F_SECCOMP_GET_FILTER))
		snprintf(buf, size, "its seccomp filters cannot be read (this kernel has no "
			 "PTRACE_SECCOMP_GET_FILTER: Linux 4.4), so whether they allow %s is "
			 "unknown", call);
	else if (v->err)
		snprintf(buf, size, "its seccomp filters cannot be read "
			 "(ptrace(PTRACE_SECCOMP_GET_FILTER): %s%s), so whether they allow "
			 "%s is unknown", strerror(-v->err),
			 v->err == -EACCES ? eacces_why() : "", call);
	else
		snprintf(buf, size, "its seccomp filter forbids %s (SECCOMP_RET_%s)", call,
			 bpf_seccomp_action_name(v->action));
}

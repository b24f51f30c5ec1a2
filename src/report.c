/*
 * report.c - the text outputs: one line per event (--trace) and the
 * end-of-run summary (counts and bytes per process and event kind, next
 * to the memory figures /proc/PID/status gave at start and at end).
 * Byte counts are exact integers, so that scripts and tests can use them.
 */
#include "config.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "memtap.h"

const char *const event_kind_names[EV_NKINDS] = {
	[EV_BRK] = "brk",
	[EV_MMAP] = "mmap",
	[EV_MUNMAP] = "munmap",
	[EV_MREMAP] = "mremap",
	[EV_MALLOC] = "malloc",
	[EV_CALLOC] = "calloc",
	[EV_REALLOC] = "realloc",
	[EV_REALLOCARRAY] = "reallocarray",
	[EV_FREE] = "free",
	[EV_POSIX_MEMALIGN] = "posix_memalign",
	[EV_ALIGNED_ALLOC] = "aligned_alloc",
	[EV_MEMALIGN] = "memalign",
	[EV_VALLOC] = "valloc",
	[EV_PVALLOC] = "pvalloc",
	[EV_PROBE] = "probe",
};

static const char *const map_kind_names[] = {
	[MAP_KIND_NONE] = "-",
	[MAP_KIND_ANON] = "anon",
	[MAP_KIND_FILE] = "file",
};

void report_trace_header(void)
{
	fprintf(out, "%11s %7s %7s %-15s %-6s %12s %-18s %-4s %s\n", "TIME", "PID", "TID",
		"COMM", "EVENT", "BYTES", "ADDRESS", "KIND", "CALL");
}

/*
 * An allocator function or probe: its arguments as the C ABI passed them,
 * its result, and the caller's address (fixed width, so that scripts can
 * compare addresses as strings).
 */
static void print_func_call(const struct event *ev)
{
	const uint64_t *a = ev->args;
	const char *name = ev->call ? ev->call : event_kind_names[ev->kind];
	int has_ret = 1;

	switch (ev->kind) {
	case EV_CALLOC:
		fprintf(out, "%s(%" PRIu64 ", %" PRIu64 ")", name, a[0], a[1]);
		break;
	case EV_REALLOC:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ")", name, a[0], a[1]);
		break;
	case EV_REALLOCARRAY:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %" PRIu64 ")", name, a[0], a[1], a[2]);
		break;
	case EV_FREE:
		fprintf(out, "%s(%#" PRIx64 ")", name, a[0]);
		has_ret = 0;
		break;
	case EV_POSIX_MEMALIGN:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %" PRIu64 ") = %d", name, a[0], a[1],
			a[2], (int)ev->ret);
		has_ret = 0;
		break;
	case EV_ALIGNED_ALLOC:
	case EV_MEMALIGN:
		fprintf(out, "%s(%" PRIu64 ", %" PRIu64 ")", name, a[0], a[1]);
		break;
	case EV_PROBE:
		fprintf(out, "%s(%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64
			", %#" PRIx64 ")", name, a[0], a[1], a[2], a[3], a[4], a[5]);
		has_ret = 0;
		break;
	default:
		fprintf(out, "%s(%" PRIu64 ")", name, a[0]);
		break;
	}
	if (has_ret)
		fprintf(out, " = %#" PRIx64, (uint64_t)ev->ret);
	fprintf(out, " from 0x%016" PRIx64 "\n", ev->caller);
}

static void print_call(const struct event *ev)
{
	const uint64_t *a = ev->args;

	switch (ev->kind) {
	case EV_BRK:
		fprintf(out, "%s(%#" PRIx64 ")", ev->call, a[0]);
		break;
	case EV_MMAP:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %#" PRIx64 ", %#" PRIx64 ", %d, %#" PRIx64 ")",
			ev->call, a[0], a[1], a[2], a[3], (int)a[4], a[5]);
		break;
	case EV_MUNMAP:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ")", ev->call, a[0], a[1]);
		break;
	case EV_MREMAP:
		fprintf(out, "%s(%#" PRIx64 ", %" PRIu64 ", %" PRIu64 ", %#" PRIx64 ")",
			ev->call, a[0], a[1], a[2], a[3]);
		break;
	default:
		print_func_call(ev);
		return;
	}
	if (ev->ret < 0 && ev->ret >= -4095)
		fprintf(out, " = -1 (%s)\n", strerror((int)-ev->ret));
	else if (ev->kind == EV_MUNMAP)
		fprintf(out, " = %" PRId64 "\n", ev->ret);
	else
		fprintf(out, " = %#" PRIx64 "\n", (uint64_t)ev->ret);
}

void report_trace_event(const struct event *ev)
{
	char bytes[32];

	if (ev->failed)
		snprintf(bytes, sizeof(bytes), "failed");
	else
		snprintf(bytes, sizeof(bytes), "%+" PRId64, ev->size);
	fprintf(out, "%4" PRIu64 ".%06" PRIu64 " %7d %7d %-15s %-6s %12s %#-18" PRIx64 " %-4s ",
		ev->time_ns / 1000000000u, ev->time_ns / 1000u % 1000000u, ev->pid, ev->tid,
		ev->comm, event_kind_names[ev->kind], bytes, ev->addr,
		map_kind_names[ev->map_kind]);
	print_call(ev);
}

static void print_status(const struct proc *p)
{
	if (p->exited && WIFEXITED(p->status))
		fprintf(out, "exited with status %d", WEXITSTATUS(p->status));
	else if (p->exited && WIFSIGNALED(p->status))
		fprintf(out, "killed by signal %d (SIG%s)", WTERMSIG(p->status),
			sigabbrev_np(WTERMSIG(p->status)) ? sigabbrev_np(WTERMSIG(p->status)) : "?");
	else if (p->detached)
		fprintf(out, "detached, still running");
	else
		fprintf(out, "still running");
}

static void print_vm_row(const char *name, int have, uint64_t start, uint64_t end)
{
	if (!have) {
		fprintf(out, "  %-8s %16s %16s %16s\n", name, "-", "-", "-");
		return;
	}
	fprintf(out, "  %-8s %16" PRIu64 " %16" PRIu64 " %+16" PRId64 "\n", name, start, end,
		(int64_t)(end - start));
}

static void report_proc(const struct proc *p)
{
	struct kind_stats total;
	int have_vm = p->vm_start.have && p->vm_end.have;
	/* allocator names are longer than syscall names */
	int w = (opt.events & EV_BREAKPOINT) ? 14 : 8;

	memset(&total, 0, sizeof(total));
	fprintf(out, "\nprocess %d (%s), ", p->pid, p->comm);
	print_status(p);
	if (p->ppid)
		fprintf(out, ", child of %d", p->ppid);
	fprintf(out, "\n  %-*s %8s %8s %16s %16s\n", w, "EVENT", "CALLS", "FAILED",
		"ACQUIRED", "RELEASED");
	for (int k = 0; k < EV_NKINDS; k++) {
		const struct kind_stats *ks = &p->stats[k];

		if (!(opt.events & EV_BIT(k)))
			continue;
		fprintf(out, "  %-*s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n",
			w, event_kind_names[k], ks->calls, ks->failed, ks->acquired, ks->released);
		if (k == EV_MMAP && ks->acquired) {
			fprintf(out, "    %-24s %16" PRIu64 "\n", "anonymous", ks->anon);
			fprintf(out, "    %-24s %16" PRIu64 "\n", "file-backed", ks->file);
		}
		total.calls += ks->calls;
		total.failed += ks->failed;
		total.acquired += ks->acquired;
		total.released += ks->released;
	}
	fprintf(out, "  %-*s %8" PRIu64 " %8" PRIu64 " %16" PRIu64 " %16" PRIu64 "\n", w, "total",
		total.calls, total.failed, total.acquired, total.released);
	if (p->filtered)
		fprintf(out, "  %" PRIu64 " events under --min-size not counted\n", p->filtered);
	fprintf(out, "  %-8s %16s %16s %16s\n", "/proc", "START", "END", "GROWTH");
	print_vm_row("VmSize", have_vm, p->vm_start.vm_size, p->vm_end.vm_size);
	print_vm_row("VmRSS", have_vm, p->vm_start.vm_rss, p->vm_end.vm_rss);
	print_vm_row("VmData", have_vm, p->vm_start.vm_data, p->vm_end.vm_data);
}

void report_summary(void)
{
	size_t nprocs = 0;
	uint64_t elapsed = now_ns() - start_ns;

	for (struct proc *p = proc_list(); p; p = p->next)
		nprocs++;
	fprintf(out, "memtap: %zu process%s, %" PRIu64 ".%03" PRIu64 " s, syscalls via %s, "
		"%" PRIu64 " stops (seccomp %" PRIu64 ", syscall %" PRIu64 ", breakpoint %" PRIu64
		", signal %" PRIu64 ", other %" PRIu64 ")\n",
		nprocs, nprocs == 1 ? "" : "es", elapsed / 1000000000u, elapsed / 1000000u % 1000u,
		syscall_source, stops.total, stops.seccomp, stops.syscall, stops.breakpoint,
		stops.signal, stops.event + stops.group);
	for (struct proc *p = proc_list(); p; p = p->next)
		report_proc(p);
}

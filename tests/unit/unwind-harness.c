/*
 * unwind-harness.c - run a command under ptrace, unwind its big mmaps
 * the way memtap does, and print the symbolized stacks.
 *
 *   unwind-harness [-u KIND] [-m MINLEN] [-x MAXLEN] [-s BYTES] [-F] [-v]
 *                  -- COMMAND [ARGS]
 *
 * Every syscall stop is caught (PTRACE_SYSCALL).  At the entry of an
 * mmap whose length is in [MINLEN, MAXLEN], the harness takes a stack
 * snapshot, resumes the command, and only then unwinds from the copy
 * and interns the stack.  mmap/munmap/mremap exits update the module
 * list as the tracer would.  When the command has exited (so every
 * library it unloaded is gone), the stacks are symbolized and printed:
 *
 *   stack N: FUNCTION FUNCTION ...        innermost first, inlined
 *                                         frames included, [unknown]
 *                                         where nothing is known
 *
 * and with -v one line per frame with module, offset, file and line.
 * -F makes the libdw back end use libdwfl's unwinder for every frame
 * (no rule cache).
 * Exit status: 0, 77 when the unwinder is not available or ptrace is
 * refused, 99 on any other failure.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "stack/modules.h"
#include "stack/stacks.h"
#include "stack/symbols/symbolize.h"
#include "stack/unwind/unwind.h"

#define MAX_EVENTS 64

static void usage(void)
{
	fprintf(stderr, "usage: unwind-harness [-u none|fp|dwarf|libdw] [-m MINLEN] "
		"[-x MAXLEN] [-s BYTES] [-F] [-v] -- COMMAND [ARGS]\n");
	exit(99);
}

static void print_stack(struct symbolizer *sz, const struct stack_table *st,
			uint32_t id, int n, int verbose)
{
	const struct stack_frame *frames;
	int depth;
	char buf[512];

	if (stack_table_get(st, id, &frames, &depth) < 0) {
		printf("stack %d: [bad id]\n", n);
		return;
	}
	printf("stack %d:", n);
	for (int i = 0; i < depth; i++) {
		const struct sym_info *si = symbolizer_lookup(sz, frames[i].module, frames[i].addr);

		for (int j = 0; j < si->nframes; j++)
			printf(" %s", si->frames[j].function ? si->frames[j].function : "[unknown]");
	}
	printf("\n");
	if (!verbose)
		return;
	for (int i = 0; i < depth; i++) {
		const struct sym_info *si = symbolizer_lookup(sz, frames[i].module, frames[i].addr);

		for (int j = 0; j < si->nframes; j++) {
			symbolizer_format(si, j, buf, sizeof(buf));
			printf("  #%-2d %s+0x%" PRIx64 " %s%s\n", i,
			       si->module_name ? si->module_name : "?", frames[i].addr, buf,
			       si->frames[j].inlined ? " (inlined)" : "");
		}
	}
}

int main(int argc, char **argv)
{
	const char *kind_name = "dwarf";
	unsigned long minlen = 1, maxlen = ~0UL;
	size_t snap_bytes = STACK_SNAPSHOT_DEFAULT;
	int verbose = 0, opt, kind, status, in_syscall = 0;
	long entry_nr = -1;
	unsigned long entry_args[4] = { 0 };
	uint32_t events[MAX_EVENTS];
	int nevents = 0, sig = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "u:m:x:s:Fv")) != -1) {
		switch (opt) {
		case 'u':
			kind_name = optarg;
			break;
		case 'm':
			minlen = strtoul(optarg, NULL, 0);
			break;
		case 'x':
			maxlen = strtoul(optarg, NULL, 0);
			break;
		case 's':
			snap_bytes = strtoul(optarg, NULL, 0);
			break;
		case 'F':
			unwind_libdw_rule_cache = 0;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	kind = unwind_kind_from_name(kind_name);
	if (kind < 0)
		usage();
	if (!unwind_kind_available(kind)) {
		fprintf(stderr, "unwind-harness: --unwind=%s not compiled in\n", kind_name);
		return 77;
	}

	pid = fork();
	if (pid < 0)
		return 99;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(77);
		execv(argv[optind], &argv[optind]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		fprintf(stderr, "unwind-harness: %s did not start (status %#x)\n",
			argv[optind], status);
		return WIFEXITED(status) && WEXITSTATUS(status) == 77 ? 77 : 99;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) < 0) {
		perror("unwind-harness: PTRACE_SETOPTIONS");
		return 99;
	}

	struct proc_modules *pm = proc_modules_new(pid);
	struct unwinder *uw = unwinder_new(kind, pid, pm);
	struct stack_table *st = stack_table_new(0);
	struct stack_snapshot snap = STACK_SNAPSHOT_INIT;

	if (!uw) {
		fprintf(stderr, "unwind-harness: unwinder_new(%s): %s\n", kind_name,
			strerror(errno));
		kill(pid, SIGKILL);
		return 77;
	}

	for (;;) {
		int resumed = 0;

		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) < 0) {
			perror("unwind-harness: PTRACE_SYSCALL");
			return 99;
		}
		sig = 0;
		if (waitpid(pid, &status, 0) != pid) {
			perror("unwind-harness: waitpid");
			return 99;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			if (WSTOPSIG(status) != SIGTRAP)
				sig = WSTOPSIG(status);
			continue;
		}

		arch_regs_t regs;

		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0) {
			perror("unwind-harness: PTRACE_GETREGS");
			return 99;
		}
		in_syscall = !in_syscall;
		if (in_syscall) {
			entry_nr = (long)regs.orig_rax;
			entry_args[0] = regs.rdi;
			entry_args[1] = regs.rsi;
			entry_args[2] = regs.rdx;
			entry_args[3] = regs.r10;
			if (entry_nr == 9 && regs.rsi >= minlen && regs.rsi <= maxlen &&
			    nevents < MAX_EVENTS) {
				uint64_t pcs[UNWIND_MAX_DEPTH];
				int depth;

				stack_snapshot_take(&snap, pid, pid, &regs, snap_bytes);
				/* as the tracer does: resume, then unwind the copy */
				if (ptrace(PTRACE_SYSCALL, pid, NULL, NULL) < 0) {
					perror("unwind-harness: PTRACE_SYSCALL");
					return 99;
				}
				resumed = 1;
				depth = unwinder_walk(uw, &snap, pcs, UNWIND_MAX_DEPTH);
				events[nevents++] = stack_table_intern_pcs(st, pm, pcs, depth);
			}
		} else {
			long ret = (long)regs.rax;

			if (entry_nr == 9 && ret > -4096L && ret < 0)
				;	/* failed mmap */
			else if (entry_nr == 9)
				modules_note_mmap(pm, (uint64_t)ret, entry_args[1], (int)entry_args[2]);
			else if (entry_nr == 11 && ret == 0)
				modules_note_unmap(pm, entry_args[0], entry_args[1]);
			else if (entry_nr == 25 && !(ret > -4096L && ret < 0))
				modules_note_unmap(pm, entry_args[0], entry_args[1]);
		}
		if (resumed) {
			/* the loop resumes again: wait for the next stop instead */
			if (waitpid(pid, &status, 0) != pid)
				return 99;
			if (WIFEXITED(status) || WIFSIGNALED(status))
				break;
			/* this is the exit stop of the mmap just unwound */
			if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
				in_syscall = 0;
				if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0 &&
				    !((long)regs.rax > -4096L && (long)regs.rax < 0))
					modules_note_mmap(pm, regs.rax, entry_args[1], (int)entry_args[2]);
			}
		}
	}

	if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "unwind-harness: %s failed (status %#x)\n", argv[optind], status);
		return 99;
	}

	struct symbolizer *sz = symbolizer_new(0);

	for (int i = 0; i < nevents; i++)
		print_stack(sz, st, events[i], i, verbose);
	if (verbose)
		fprintf(stderr, "unwind-harness: %s: %" PRIu64 " walks, %" PRIu64 " frames, "
			"%" PRIu64 " failures, %" PRIu64 " maps reads, %u stacks, %zu bytes\n",
			kind_name, uw->walks, uw->frames, uw->failures, pm->reads,
			stack_table_count(st), stack_table_memory(st));
	symbolizer_free(sz);
	unwinder_free(uw);
	proc_modules_free(pm);
	stack_table_free(st);
	stack_snapshot_release(&snap);
	modules_release_all();
	return 0;
}

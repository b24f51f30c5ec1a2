/*
 * syscalls.c - the syscall source: seccomp stops (launch mode) and
 * PTRACE_SYSCALL stops, and how the entry and exit of a memory syscall
 * become an event with its byte weight.
 *
 * The stops: a seccomp stop means a memory syscall matched the filter:
 * read its arguments, resume with PTRACE_SYSCALL to catch its exit
 * (Linux < 4.8 reports the entry stop in between: learnt from the first
 * stops, learn_order()), then PTRACE_CONT.
 * Under PTRACE_SYSCALL (-p with --syscalls=ptrace, or a process whose
 * seccomp filters refuse the probes) every syscall's entry and exit stop.
 *
 * brk weighs new break - old break: the tracer keeps each process's
 * current break, learnt from brk's own results (the first call after an
 * exec is ld.so's brk(0)).  In an attached process the break before the
 * first brk seen is read from /proc (exact up to page rounding).
 * mmap weighs its page-rounded length, munmap minus its page-rounded
 * length, mremap the difference of the page-rounded lengths.  Failed
 * calls weigh 0 and are counted apart.
 *
 * Calls that map code (mmap, mprotect with PROT_EXEC) are stopped at
 * whatever -e selects (the seccomp filter, or syscall_wanted() under
 * PTRACE_SYSCALL): they tell the module list and the pending probes of
 * new code.  Unless their kind is selected they make no event, and are
 * counted in stops.code.
 *
 * syscall_fill_event() is the one place that computes these weights: for
 * syscall stops here, and for breakpoints on libc's syscall wrappers
 * (alloc.c), which give it the result the kernel would have returned.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <linux/ptrace.h>

#include "trace/emit.h"
#include "trace/memtap.h"
#include "trace/source.h"
#include "linux/pagemap.h"
#include "stack/codecopy.h"
#include "stack/modules.h"
#include "linux/features.h"
#include "linux/memio.h"
#include "util/error.h"

#ifndef MAP_FIXED_NOREPLACE
# define MAP_FIXED_NOREPLACE 0x100000
#endif

#ifndef PTRACE_GET_SYSCALL_INFO
# define PTRACE_GET_SYSCALL_INFO 0x420e
#endif
#ifndef PTRACE_SYSCALL_INFO_ENTRY
# define PTRACE_SYSCALL_INFO_ENTRY 1
# define PTRACE_SYSCALL_INFO_EXIT 2
#endif

const char *syscall_source = "seccomp";

static struct syscall_stops {
	int use_seccomp;		/* seccomp stops, and their exits */
	int seccomp_before_entry;	/* Linux < 4.8 (a guess until order_known) */
	int order_known;		/* seen at the stop after a seccomp stop */
	int have_syscall_info;		/* PTRACE_GET_SYSCALL_INFO works; -1 unknown */
} ss = { .have_syscall_info = -1 };

/*
 * mmap2's offset counts 4 KiB units, whatever the page size (the
 * kernel's compat mmap2 on a CPU with larger pages shifts it).
 */
#define MMAP2_UNIT 4096

static uint64_t page_round(uint64_t len)
{
	uint64_t page = arch_page_size();

	return (len + page - 1) & ~(page - 1);
}

/* old_mmap (i386 nr 90) passes a pointer to six 32-bit arguments. */
static void read_old_mmap_args(const struct thread *tcp, uint64_t addr, uint64_t args[6])
{
	uint32_t a[6];

	if (memio_read_all(tcp->proc->pid, tcp->tid, addr, a, sizeof(a)) < 0)
		memset(a, 0, sizeof(a));
	for (int i = 0; i < 6; i++)
		args[i] = a[i];
}

static int selected(const struct arch_syscall *def);

/*
 * Is the account of VmData and VmRSS wanted (-e mprotect, madvise or a
 * fault kind)?  Then munmap and mremap read what they unmap at entry.
 */
static int account_wanted(void)
{
	return (sink_events_to_trace() &
		(EV_BIT(EV_MPROTECT) | EV_BIT(EV_MADVISE) | EV_FAULT_KINDS)) != 0;
}

void syscall_enter(struct thread *tcp, const arch_regs_t *regs, enum abi abi,
		   const struct arch_syscall *def)
{
	tcp->sc_def = def;
	tcp->sc_abi = abi;
	for (int i = 0; i < 6; i++)
		tcp->sc_args[i] = arch_syscall_arg(regs, abi, i);
	if (def->id == SC_OLD_MMAP)
		read_old_mmap_args(tcp, tcp->sc_args[0], tcp->sc_args);
	else if (def->id == SC_MMAP2)
		tcp->sc_args[5] *= MMAP2_UNIT;
	if (def->id == SC_BRK && !tcp->proc->brk && tcp->sc_args[0])
		tcp->proc->brk = procfs_heap_end(tcp->proc->pid);
	tcp->sc_old_brk = tcp->proc->brk;
	syscall_capture(tcp, def);
}

/*
 * Does the call map over [*start, + *len), unmapping what is there
 * first?  mmap with MAP_FIXED (not MAP_FIXED_NOREPLACE, which fails
 * instead), mremap with MREMAP_FIXED.
 */
static int replaces(const struct arch_syscall *def, const uint64_t a[6], uint64_t *start,
		    uint64_t *len)
{
	switch (def->id) {
	case SC_MMAP:
	case SC_MMAP2:
	case SC_OLD_MMAP:
		*start = a[0];
		*len = a[1];
		return (a[3] & MAP_FIXED) && !(a[3] & MAP_FIXED_NOREPLACE);
	case SC_MREMAP:
		*start = a[4];
		*len = a[2];
		return (a[3] & MREMAP_FIXED) != 0;
	default:
		return 0;
	}
}

void syscall_capture(struct thread *tcp, const struct arch_syscall *def)
{
	uint64_t start, len;

	tcp->sc_weight = tcp->sc_data = tcp->sc_resident = 0;
	tcp->sc_replaced = tcp->sc_replaced_data = 0;
	if (!selected(def) || !syscall_args_relevant(def, tcp->sc_args))
		return;
	if (replaces(def, tcp->sc_args, &start, &len)) {
		struct range_change rc;
		uint64_t resident;

		maps_range_change(tcp->proc->pid, start, len, -1, &rc);
		tcp->sc_replaced = rc.mapped;
		tcp->sc_replaced_data = rc.data_bytes;
		if (account_wanted() && rc.mapped &&
		    pagemap_resident(tcp->proc->pid, start, len, &resident) == 0)
			tcp->sc_resident = -(int64_t)resident;
	}
	/* what the range was, for the weight of the call if it succeeds */
	if (def->id == SC_MPROTECT) {
		struct range_change rc;

		maps_range_change(tcp->proc->pid, tcp->sc_args[0], tcp->sc_args[1],
				  (int)(unsigned)tcp->sc_args[2], &rc);
		tcp->sc_weight = rc.access;
		tcp->sc_data = rc.data;
	} else if ((def->id == SC_MUNMAP || def->id == SC_MREMAP) && account_wanted()) {
		struct range_change rc;
		uint64_t resident;

		maps_range_change(tcp->proc->pid, tcp->sc_args[0], tcp->sc_args[1], -1, &rc);
		tcp->sc_data = (int64_t)rc.data_bytes;
		if (def->id == SC_MUNMAP &&
		    pagemap_resident(tcp->proc->pid, tcp->sc_args[0], tcp->sc_args[1],
				     &resident) == 0)
			tcp->sc_resident = -(int64_t)resident;
	} else if (def->id == SC_MADVISE) {
		uint64_t resident;

		if (pagemap_resident(tcp->proc->pid, tcp->sc_args[0], tcp->sc_args[1],
				     &resident) == 0)
			tcp->sc_weight = -(int64_t)resident;
	}
}

int syscall_reads_at_entry(const struct arch_syscall *def)
{
	if (!selected(def))
		return 0;
	return def->id == SC_MPROTECT || def->id == SC_MADVISE ||
	       ((def->id == SC_MUNMAP || def->id == SC_MREMAP) && account_wanted());
}

int syscall_args_relevant(const struct arch_syscall *def, const uint64_t args[6])
{
	switch (def->id) {
	case SC_MPROTECT:
		return (args[2] & PROT_WRITE) || (uint32_t)args[2] == PROT_NONE;
	case SC_MADVISE:
		return (uint32_t)args[2] == MADV_DONTNEED || (uint32_t)args[2] == MADV_FREE ||
		       (uint32_t)args[2] == MADV_REMOVE;
	default:
		return 1;
	}
}

static int is_error(int64_t ret)
{
	return ret < 0 && ret >= -4095;
}

void syscall_fill_event(struct event *ev, const struct arch_syscall *def, int abi,
			const uint64_t args[6], int64_t ret, uint64_t old_brk)
{
	const uint64_t *a = args;

	ev->kind = syscall_kind(def);
	ev->abi = abi;
	ev->call = def->name;
	memcpy(ev->args, a, sizeof(ev->args));
	ev->ret = ret;
	ev->failed = 0;
	ev->size = 0;

	switch (syscall_kind(def)) {
	case EV_BRK: {
		uint64_t newbrk = (uint64_t)ret;

		ev->old_brk = old_brk;
		ev->failed = a[0] != 0 && newbrk != a[0];
		if (!ev->failed && ev->old_brk)
			ev->size = (int64_t)(newbrk - ev->old_brk);
		ev->addr = ev->size >= 0 ? ev->old_brk : newbrk;
		break;
	}
	case EV_MMAP:
		ev->failed = is_error(ret);
		ev->addr = ev->failed ? a[0] : (uint64_t)ret;
		ev->map_kind = (a[3] & MAP_ANONYMOUS) ? MAP_KIND_ANON : MAP_KIND_FILE;
		if (!ev->failed)
			ev->size = (int64_t)page_round(a[1]);
		break;
	case EV_MUNMAP:
		ev->failed = ret != 0;
		ev->addr = a[0];
		if (!ev->failed)
			ev->size = -(int64_t)page_round(a[1]);
		break;
	case EV_MREMAP:
		ev->failed = is_error(ret);
		ev->addr = ev->failed ? a[0] : (uint64_t)ret;
		if (!ev->failed)
			ev->size = (int64_t)page_round(a[2]) - (int64_t)page_round(a[1]);
		break;
	case EV_MPROTECT:
	case EV_MADVISE:
		/* the weight is what /proc said at entry (syscall_enter()) */
		ev->failed = ret != 0;
		ev->addr = a[0];
		break;
	default:
		break;
	}
}

/* Does the call make memory executable, prot being its third argument? */
static int maps_code(const struct arch_syscall *def, uint64_t prot)
{
	switch (def->id) {
	case SC_MMAP:
	case SC_MMAP2:
	case SC_OLD_MMAP:
	case SC_MPROTECT:
		return (prot & PROT_EXEC) != 0;
	default:
		return 0;
	}
}

static int selected(const struct arch_syscall *def)
{
	enum event_kind kind = syscall_kind(def);

	return kind < EV_NKINDS && (sink_events_to_trace() & EV_BIT(kind));
}

int syscall_wanted(const struct arch_syscall *def, const arch_regs_t *regs, enum abi abi)
{
	uint64_t args[6];

	for (int i = 0; i < 6; i++)
		args[i] = arch_syscall_arg(regs, abi, i);
	if (selected(def) && syscall_args_relevant(def, args))
		return 1;
	/* old_mmap's arguments are in memory: syscall_enter() reads them */
	return def->id == SC_OLD_MMAP || maps_code(def, arch_syscall_arg(regs, abi, 2));
}

/*
 * [addr, addr + args[1]) was made executable, tcp stopped at the exit:
 * anonymous memory (run-time code: an anonymous mmap, an mprotect of
 * no module's mapping) is copied for the unwinders now, before any call
 * of it is made (stack/codecopy.h); a file's drops the copies there.
 */
static void code_copy(struct thread *tcp, const struct arch_syscall *def,
		      const uint64_t args[6], uint64_t addr)
{
	struct proc_modules *pm = tcp->proc->rec->modules;
	int anon = def->id == SC_MPROTECT ? !modules_find_range(pm, addr) :
		   (def->id == SC_MMAP || def->id == SC_MMAP2) && (args[3] & MAP_ANONYMOUS);
	int k = code_copy_take(&pm->code, tcp->proc->pid, tcp->tid, addr, args[1], anon);

	uint64_t bytes;
	size_t n;

	if (k < 0) {
		debug_msg("thread %d: run-time code at 0x%" PRIx64 " not copied: %s", tcp->tid,
			  addr, strerror(-k));
	} else if (k) {
		n = code_copies_count(pm->code, &bytes);
		debug_msg("thread %d: run-time code at 0x%" PRIx64 " copied (%" PRIu64
			  " bytes; %zu copies, %" PRIu64 " bytes in all)", tcp->tid, addr,
			  args[1], n, bytes);
	}
}

/*
 * Code was mapped (or made executable): the process's modules may have
 * changed, and probes not found yet may be in the new code.
 */
static void code_mapped(struct thread *tcp, const struct arch_syscall *def,
			const uint64_t args[6], int64_t ret)
{
	struct proc *p = tcp->proc;
	uint64_t addr = def->id == SC_MPROTECT ? args[0] : (uint64_t)ret;

	if (is_error(ret))
		return;
	/*
	 * A JIT's code rewritten in place: no rule of the old code may stay.
	 * What the in-target probes recorded before, and the events of the
	 * process still queued, are unwound first, with the rules and the
	 * copies of before (as a dlclose's, alloc.c).
	 */
	if (sources_flush_thread(tcp) || p->rec->queued)
		sink_flush();
	sink_proc_code_written(p->rec);
	if (p->rec->modules)
		code_copy(tcp, def, args, addr);
	if (p->rec->modules && def->id == SC_MPROTECT)
		modules_note_mprotect(p->rec->modules, addr, args[1]);
	else if (p->rec->modules)
		modules_note_mmap(p->rec->modules, addr, args[1], PROT_EXEC);
	sources_code_mapped(tcp);
}

/* The account's part of a successful event, from what the entry read. */
static void account_fill(struct event *ev, const struct arch_syscall *def,
			 const struct thread *tcp)
{
	const uint64_t *a = tcp->sc_args;

	switch (def->id) {
	case SC_BRK:
		ev->data = ev->size;
		break;
	case SC_MMAP:
	case SC_MMAP2:
	case SC_OLD_MMAP:
		/* VmData: private, writable, not a stack; less what MAP_FIXED replaced */
		if ((a[2] & PROT_WRITE) && (a[3] & MAP_TYPE) == MAP_PRIVATE &&
		    !(a[3] & MAP_GROWSDOWN))
			ev->data = ev->size;
		ev->data -= (int64_t)tcp->sc_replaced_data;
		ev->resident = tcp->sc_resident;
		break;
	case SC_MUNMAP:
		ev->data = -tcp->sc_data;
		ev->resident = tcp->sc_resident;
		break;
	case SC_MREMAP:
		/* a data mapping stays one: its growth is data */
		if (tcp->sc_data && (uint64_t)tcp->sc_data >= page_round(tcp->sc_args[1]))
			ev->data = ev->size;
		/* MREMAP_FIXED: what was at the target is gone */
		ev->data -= (int64_t)tcp->sc_replaced_data;
		ev->resident = tcp->sc_resident;
		break;
	case SC_MPROTECT:
		ev->data = tcp->sc_data;
		break;
	case SC_MADVISE:
		ev->resident = ev->size;
		break;
	default:
		break;
	}
}

int syscall_complete(struct thread *tcp, const struct arch_syscall *def, int64_t ret,
		     struct event *ev)
{
	if (!selected(def) || !syscall_args_relevant(def, tcp->sc_args))
		return 0;
	source_event_init(ev, tcp);
	syscall_fill_event(ev, def, tcp->sc_abi, tcp->sc_args, ret, tcp->sc_old_brk);
	if (!ev->failed && (def->id == SC_MPROTECT || def->id == SC_MADVISE))
		ev->size = tcp->sc_weight;
	if (!ev->failed)
		ev->replaced = tcp->sc_replaced;
	if (!ev->failed && account_wanted())
		account_fill(ev, def, tcp);
	if (syscall_kind(def) == EV_BRK)
		tcp->proc->brk = (uint64_t)ret;
	return 1;
}

void syscall_exit(struct thread *tcp, const arch_regs_t *regs)
{
	int64_t ret = arch_syscall_ret(regs, tcp->sc_abi);
	const struct arch_syscall *def = tcp->sc_def;
	struct event ev;

	if (!def)
		return;
	tcp->sc_def = NULL;
	if (arch_abi_bits(tcp->sc_abi) == 32 && !is_error(ret))
		ret = (uint32_t)ret;	/* a 32-bit address, not a negative number */

	if (syscall_complete(tcp, def, ret, &ev)) {
		source_emit(tcp, &ev, regs);
	} else {
		/* stopped at for its code only: no event */
		stops.code++;
	}
	if (maps_code(def, tcp->sc_args[2]))
		code_mapped(tcp, def, tcp->sc_args, ret);
}

/* ---- the stops ---- */

static int get_regs(struct thread *tcp, arch_regs_t *regs)
{
	int err = arch_regs_get(tcp->tid, regs);

	if (err < 0) {
		if (err != -ESRCH)
			error_msg("thread %d: reading its registers: %s", tcp->tid,
				  strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * At the entry of execve: what the in-target probes recorded (their
 * stacks unwound) and the page faults taken so far are the old image's,
 * read now, while it is there; at the exec event its memory is gone:
 * the sources' execve_entry() (the in-target rings, alloc.c; faults.c).
 */
static void exec_entry(struct thread *tcp)
{
	sources_execve_entry(tcp);
}

static void on_seccomp_stop(struct thread *tcp)
{
	unsigned long data = 0;
	arch_regs_t regs;

	stops.seccomp++;
	if (ptrace(PTRACE_GETEVENTMSG, tcp->tid, 0L, &data) < 0 || data >= arch_nsyscalls)
		return;
	if (arch_syscalls[data].id == SC_SECCOMP || arch_syscalls[data].id == SC_PRCTL) {
		/* a filter of its own, perhaps: memtap's is no longer the only one */
		if (tcp->proc->own_filter_only)
			debug_msg("process %d: %s: memtap's seccomp filter is not its only one",
				  tcp->proc->pid, arch_syscalls[data].name);
		tcp->proc->own_filter_only = 0;
		return;
	}
	if (arch_syscalls[data].id == SC_EXECVE) {
		/* no exit stop wanted: the thread goes on with PTRACE_CONT */
		exec_entry(tcp);
	} else if (get_regs(tcp, &regs) == 0) {
		const struct arch_syscall *def = &arch_syscalls[data];

		syscall_enter(tcp, &regs, def->abi, def);
		tcp->sc = ss.seccomp_before_entry ? SC_AWAIT_ENTRY : SC_AWAIT_EXIT;
		if (!ss.order_known)
			tcp->flags |= T_SC_GUESS;
	}
}

/*
 * What the kernel says of this syscall stop: 1 entry (*nr its number),
 * 0 exit, -1 it does not say (PTRACE_GET_SYSCALL_INFO, Linux >= 5.3).
 */
static int kernel_says(struct thread *tcp, long *nr)
{
	struct ptrace_syscall_info info;
	long n;

	if (ss.have_syscall_info == 0)
		return -1;
	n = ptrace(PTRACE_GET_SYSCALL_INFO, tcp->tid, sizeof(info), &info);
	if (n > 0) {
		ss.have_syscall_info = 1;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
			*nr = (long)info.entry.nr;
			return 1;
		}
		if (info.op == PTRACE_SYSCALL_INFO_EXIT)
			return 0;
	} else if (errno == EIO || errno == EINVAL) {
		ss.have_syscall_info = 0;
		feature_lost(F_GET_SYSCALL_INFO, errno);
	}
	return -1;
}

/* Is nr a memory syscall's number in any ABI (or execve's)? */
static int memory_nr(long nr)
{
	for (size_t i = 0; i < arch_nsyscalls; i++)
		if (arch_syscalls[i].nr == nr)
			return 1;
	return 0;
}

/*
 * Is this syscall stop an entry (1) or an exit (0)?  Without
 * PTRACE_GET_SYSCALL_INFO (Linux >= 5.3, asked first by the caller: said
 * is what it said), the thread's own parity, and for the first stop
 * after attaching, the registers (arch_at_syscall_entry()).
 */
static int syscall_stop_is_entry(struct thread *tcp, const arch_regs_t *regs, int said)
{
	if (said >= 0)
		return said;
	if (tcp->flags & T_SC_KNOWN)
		return !(tcp->flags & T_IN_SC);
	return arch_at_syscall_entry(regs, ARCH_STOP_SYSCALL) > 0;
}

/*
 * The first syscall stop after a seccomp stop tells the order of the
 * stops, as strace learns it: an entry stop (the registers at entry
 * say so, arch_at_syscall_entry(), or what PTRACE_GET_SYSCALL_INFO
 * says) means Linux < 4.8, whose entry stop follows the seccomp stop;
 * an exit stop, that the seccomp stop stood for the entry.  Never from
 * the version: distributions backport.  A memory syscall never returns
 * -ENOSYS, so the registers cannot mislead.  Until then the order is a
 * guess (F_SECCOMP_ENTRY), and this thread's state is put right.
 */
static void learn_order(struct thread *tcp)
{
	arch_regs_t regs;
	long nr;
	int entry = kernel_says(tcp, &nr);

	if (entry < 0) {
		if (get_regs(tcp, &regs) < 0)
			return;
		entry = arch_at_syscall_entry(&regs, ARCH_STOP_SYSCALL) > 0;
	}
	ss.order_known = 1;
	ss.seccomp_before_entry = entry;
	feature_found(F_SECCOMP_ENTRY, !entry);
	tcp->sc = entry ? SC_AWAIT_ENTRY : SC_AWAIT_EXIT;
	debug_msg("the seccomp stop %s the syscall-entry stop", entry ? "precedes" : "stands for");
}

/* The stopped thread ctx's memory, for the arch: 0 or -errno. */
static int read_thread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct thread *tcp = ctx;

	return memio_read_all(tcp->proc->pid, tcp->tid, addr, buf, len);
}

/* The ABI of the syscall tcp stopped in (the arch may read its code). */
static enum abi syscall_abi(struct thread *tcp, const arch_regs_t *regs)
{
	return arch_abi_of_stop(regs, read_thread, tcp);
}

static void on_syscall_stop(struct thread *tcp)
{
	arch_regs_t regs;

	stops.syscall++;
	if (ss.use_seccomp) {
		if (tcp->sc != SC_IDLE && (tcp->flags & T_SC_GUESS)) {
			tcp->flags &= ~T_SC_GUESS;
			if (!ss.order_known)
				learn_order(tcp);
			else	/* another thread learnt it */
				tcp->sc = ss.seccomp_before_entry ? SC_AWAIT_ENTRY : SC_AWAIT_EXIT;
		}
		if (tcp->sc == SC_AWAIT_ENTRY) {
			tcp->sc = SC_AWAIT_EXIT;
		} else if (tcp->sc == SC_AWAIT_EXIT) {
			if (get_regs(tcp, &regs) == 0)
				syscall_exit(tcp, &regs);
			tcp->sc = SC_IDLE;
		}
		return;
	}

	/*
	 * PTRACE_SYSCALL stops at every syscall: what the kernel says of the
	 * stop spares the registers of those that are not memtap's (a stop's
	 * cost: waitpid, PTRACE_GET_SYSCALL_INFO, PTRACE_SYSCALL).
	 */
	long nr = -1;
	int said = kernel_says(tcp, &nr);

	if ((said == 1 && !memory_nr(nr)) || (said == 0 && !tcp->sc_def)) {
		tcp->flags |= T_SC_KNOWN;
		tcp->flags = said ? tcp->flags | T_IN_SC : tcp->flags & ~T_IN_SC;
		tcp->sc_def = NULL;
		sources_syscall_stop(tcp);
		return;
	}
	if (get_regs(tcp, &regs) < 0)
		return;
	if (syscall_stop_is_entry(tcp, &regs, said)) {
		tcp->flags |= T_SC_KNOWN | T_IN_SC;
		tcp->sc_def = NULL;
		nr = arch_syscall_nr(&regs);
		const struct arch_syscall *def = NULL;

		/* cheap test first: is nr a memory syscall in any ABI? */
		if (memory_nr(nr))
			def = arch_syscall_lookup(syscall_abi(tcp, &regs), nr);
		if (def && def->id == SC_EXECVE)
			exec_entry(tcp);
		else if (def && syscall_wanted(def, &regs, def->abi))
			syscall_enter(tcp, &regs, def->abi, def);
	} else {
		tcp->flags |= T_SC_KNOWN;
		tcp->flags &= ~T_IN_SC;
		if (tcp->sc_def)
			syscall_exit(tcp, &regs);
	}
	sources_syscall_stop(tcp);
}

/* The source's stop(): seccomp stops and syscall stops are its own. */
static enum stop_verdict syscalls_stop(void *self, struct thread *tcp, int status)
{
	(void)self;
	if ((unsigned)status >> 16 == PTRACE_EVENT_SECCOMP) {
		on_seccomp_stop(tcp);
		return STOP_RESUME;
	}
	if ((unsigned)status >> 16 == 0 && WSTOPSIG(status) == (SIGTRAP | 0x80)) {
		on_syscall_stop(tcp);
		return STOP_RESUME;
	}
	return STOP_NOT_MINE;
}

static const struct source_ops syscalls_ops = {
	.name = "syscalls",
	.stop = syscalls_stop,
};

void syscalls_init(int use_seccomp, const char *source)
{
	ss.use_seccomp = use_seccomp;
	ss.have_syscall_info = feature_has(F_GET_SYSCALL_INFO) ? -1 : 0;
	syscall_source = source;
	/*
	 * Since Linux 4.8 the seccomp stop stands for the syscall-entry
	 * stop; before, the entry stop followed it.  The first stops tell
	 * (learn_order()); a guess until then.
	 */
	ss.seccomp_before_entry = !feature_has(F_SECCOMP_ENTRY);
	source_register(&syscalls_ops, NULL);
}

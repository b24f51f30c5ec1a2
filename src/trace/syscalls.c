/*
 * syscalls.c - turn the entry and exit of a memory syscall into an event
 * with its byte weight.
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

#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "trace/alloc.h"
#include "trace/memtap.h"
#include "stack/modules.h"

static uint64_t page_round(uint64_t len)
{
	return (len + ARCH_PAGE_SIZE - 1) & ~(ARCH_PAGE_SIZE - 1);
}

/* old_mmap (i386 nr 90) passes a pointer to six 32-bit arguments. */
static void read_old_mmap_args(pid_t tid, uint64_t addr, uint64_t args[6])
{
	uint32_t a[6];
	struct iovec local = { a, sizeof(a) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(a) };

	memset(a, 0, sizeof(a));
	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(a))
		memset(a, 0, sizeof(a));
	for (int i = 0; i < 6; i++)
		args[i] = a[i];
}

void syscall_enter(struct thread *tcp, const arch_regs_t *regs, enum abi abi,
		   const struct syscall_def *def)
{
	tcp->sc_def = def;
	tcp->sc_abi = abi;
	for (int i = 0; i < 6; i++)
		tcp->sc_args[i] = arch_syscall_arg(regs, abi, i);
	if (def->id == SC_OLD_MMAP)
		read_old_mmap_args(tcp->tid, tcp->sc_args[0], tcp->sc_args);
	else if (def->id == SC_MMAP2)
		tcp->sc_args[5] *= ARCH_PAGE_SIZE;
	if (def->id == SC_BRK && !tcp->proc->brk && tcp->sc_args[0])
		tcp->proc->brk = procfs_heap_end(tcp->proc->pid);
	tcp->sc_old_brk = tcp->proc->brk;
}

static int is_error(int64_t ret)
{
	return ret < 0 && ret >= -4095;
}

void syscall_fill_event(struct event *ev, const struct syscall_def *def, int abi,
			const uint64_t args[6], int64_t ret, uint64_t old_brk)
{
	const uint64_t *a = args;

	ev->kind = def->kind;
	ev->abi = abi;
	ev->call = def->name;
	memcpy(ev->args, a, sizeof(ev->args));
	ev->ret = ret;
	ev->failed = 0;
	ev->size = 0;

	switch (def->kind) {
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
	default:
		break;
	}
}

/* Does the call make memory executable, prot being its third argument? */
static int maps_code(const struct syscall_def *def, uint64_t prot)
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

static int selected(const struct syscall_def *def)
{
	return def->kind < EV_NKINDS && (sink_events_to_trace() & EV_BIT(def->kind));
}

int syscall_wanted(const struct syscall_def *def, const arch_regs_t *regs, enum abi abi)
{
	if (selected(def))
		return 1;
	/* old_mmap's arguments are in memory: syscall_enter() reads them */
	return def->id == SC_OLD_MMAP || maps_code(def, arch_syscall_arg(regs, abi, 2));
}

/*
 * Code was mapped (or made executable): the process's modules may have
 * changed, and probes not found yet may be in the new code.
 */
static void code_mapped(struct thread *tcp, const struct syscall_def *def,
			const uint64_t args[6], int64_t ret)
{
	struct proc *p = tcp->proc;
	uint64_t addr = def->id == SC_MPROTECT ? args[0] : (uint64_t)ret;

	if (is_error(ret))
		return;
	if (p->rec->modules && def->id == SC_MPROTECT)
		modules_note_mprotect(p->rec->modules, addr, args[1]);
	else if (p->rec->modules)
		modules_note_mmap(p->rec->modules, addr, args[1], PROT_EXEC);
	alloc_on_code_mapped(tcp);
}

void syscall_exit(struct thread *tcp, const arch_regs_t *regs)
{
	int64_t ret = arch_syscall_ret(regs, tcp->sc_abi);
	const struct syscall_def *def = tcp->sc_def;
	struct event ev;

	if (!def)
		return;
	tcp->sc_def = NULL;
	if (tcp->sc_abi == ABI_I386 && !is_error(ret))
		ret = (uint32_t)ret;	/* a 32-bit address, not a negative number */

	if (selected(def)) {
		memset(&ev, 0, sizeof(ev));
		ev.pid = tcp->proc->pid;
		ev.tid = tcp->tid;
		ev.comm = tcp->comm;
		ev.time_ns = now_ns() - start_ns;
		syscall_fill_event(&ev, def, tcp->sc_abi, tcp->sc_args, ret, tcp->sc_old_brk);
		if (def->kind == EV_BRK)
			tcp->proc->brk = (uint64_t)ret;
		source_emit(tcp, &ev, regs);
	} else {
		/* stopped at for its code only: no event */
		stops.code++;
	}
	if (maps_code(def, tcp->sc_args[2]))
		code_mapped(tcp, def, tcp->sc_args, ret);
}

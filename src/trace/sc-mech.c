/*
 * sc-mech.c - libc's syscall wrappers, or PTRACE_SYSCALL, for each
 * process (sc-mech.h).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <libelf.h>

#include "arch/arch.h"
#include "trace/sc-mech.h"
#include "probe/elfsym.h"
#include "probe/probes.h"
#include "linux/procfs.h"
#include "linux/tfile.h"
#include "stack/runtimes/gopclntab.h"
#include "util/error.h"

static unsigned reasons;	/* PTRACE_SC_* bits of the processes seen, MISSED, NO_BRK */
#define MISSED 8
#define NO_BRK 16		/* a process's heap grows by brk calls no wrapper sees */
static int wrapped;		/* a process kept its wrappers */

/* "syscalls via ..." of the report, from what the processes needed. */
static void name_mechanism(const struct trace_config *cfg, const struct procs *pt)
{
	static char buf[160];
	int alone = cfg->npids == 1 && !pt->head->next && !wrapped;

	if (alone && !(reasons & MISSED)) {
		syscall_source = "ptrace";
		return;
	}
	snprintf(buf, sizeof(buf), "breakpoints%s%s%s%s%s%s",
		 reasons & (PTRACE_SC_SANDBOX | PTRACE_SC_NO_WRAPPERS) ? ", or ptrace" : "",
		 reasons & PTRACE_SC_SANDBOX ? " under seccomp" : "",
		 (reasons & 3) == 3 ? " or" : "",
		 reasons & PTRACE_SC_NO_WRAPPERS ? " without C library wrappers" : "",
		 reasons & MISSED ? "; none without C library wrappers" : "",
		 reasons & NO_BRK ? "; brk only through its wrapper" : "");
	syscall_source = buf;
}

void sc_mech_ptrace(const struct trace_config *cfg, const struct procs *pt, struct proc *p,
		    int reason)
{
	p->ptrace_syscalls = reason;
	reasons |= (unsigned)reason;
	name_mechanism(cfg, pt);
}

void sc_mech_exec(const struct trace_config *cfg, struct proc *p)
{
	if (cfg->syscalls == SYSCALLS_BREAKPOINTS && (cfg->events & EV_SYSCALL_STOPS) &&
	    !p->ptrace_syscalls)
		p->ptrace_syscalls = PTRACE_SC_LAUNCH;
}

int sc_mech_wrappers(const struct proc *p)
{
	return !p->ptrace_syscalls && !p->sc_missed;
}

int sc_mech_missed(const struct proc *p)
{
	return p->sc_missed;
}

/* Is p's executable a Go program? */
static int is_go(pid_t pid)
{
	char path[64];
	struct tfile_req req = { .pid = pid, .path = path, .kind = TF_ELF, .flags = TF_MAGIC };
	Elf *elf;
	int fd, go;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = tfile_open(&req);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	go = gopcln_elf_is_go(elf);
	elf_end(elf);
	close(fd);
	return go;
}

/* Is a wrapper of the probe list in ep, of role (or of any, -1)? */
static int has_wrappers(struct elfsym_proc *ep, int role)
{
	for (size_t i = 0; i < probes_count(); i++) {
		const struct probe *pr = probes_get(i);
		struct elfsym_result r;

		if (pr->role >= PR_MMAP && (role < 0 || (int)pr->role == role) &&
		    elfsym_lookup(ep, pr->spec, NULL, &r) == 0)
			return 1;
	}
	return 0;
}

/* Does p map musl's libc (whose malloc makes its brk calls itself)? */
static int maps_musl(pid_t pid)
{
	struct procfs_map *maps;
	size_t n;
	int musl = 0;

	if (procfs_read_maps(pid, &maps, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && !musl; i++)
		musl = (maps[i].perms & PROT_EXEC) && maps[i].path && strstr(maps[i].path, "musl");
	procfs_maps_free(maps);
	return musl;
}

/*
 * With brk asked for and wrappers probed: a process whose brk growth
 * no wrapper sees (no brk wrapper: a static musl program; musl's malloc,
 * which makes the brk syscall itself) is said once, and in the report.
 */
static void say_brk(const struct trace_config *cfg, const struct procs *pt,
		    const struct proc *p, struct elfsym_proc *ep)
{
	static pid_t said;
	const char *why;

	if (!(cfg->events & EV_BIT(EV_BRK)) || said == p->pid)
		return;
	why = !has_wrappers(ep, PR_BRK) ? "it has no brk wrapper" :
	      maps_musl(p->pid) ? "musl's malloc makes its brk calls itself" : NULL;
	if (!why)
		return;
	said = p->pid;
	warn_msg("process %d (%s): %s: brk calls that bypass the wrapper are not recorded "
		 "(--syscalls=ptrace records them)", p->pid, p->rec->comm, why);
	reasons |= NO_BRK;
	name_mechanism(cfg, pt);
}

void sc_mech_choose(const struct trace_config *cfg, const struct procs *pt, struct proc *p,
		    struct elfsym_proc *ep)
{
	const char *why;

	if (p->ptrace_syscalls == PTRACE_SC_LAUNCH)
		p->ptrace_syscalls = 0;		/* the exec's window ends */
	if (cfg->syscalls != SYSCALLS_BREAKPOINTS || !(cfg->events & EV_SYSCALL_STOPS) ||
	    p->ptrace_syscalls == PTRACE_SC_SANDBOX)
		return;
	why = !arch_bp_supported() ? "breakpoints are not supported on this CPU yet" :
	      !arch_bp_wrappers_detoured() && !cfg->syscalls_given &&
			      cfg->probes != PROBES_INT3 ?
			      "no detours on this CPU yet, and breakpoints left by a killed "
			      "memtap would kill it" :
	      is_go(p->pid) ? "a Go program, whose runtime makes its syscalls without the "
			      "C library" :
	      !has_wrappers(ep, -1) ? "no C library syscall wrappers" : NULL;
	if (!why) {
		wrapped = 1;
		say_brk(cfg, pt, p, ep);
		if (p->ptrace_syscalls || p->sc_missed) {
			/* an exec left the program that had none */
			info_msg("process %d (%s): C library syscall wrappers: syscalls via "
				 "breakpoints", p->pid, p->rec->comm);
			p->ptrace_syscalls = 0;
			p->sc_missed = 0;
			name_mechanism(cfg, pt);
		}
		return;
	}
	if (p->ptrace_syscalls || p->sc_missed)
		return;		/* said of its parent, or of the program before */
	if (cfg->syscalls_given) {
		warn_msg("process %d (%s): %s: --syscalls=breakpoints records none of its "
			 "syscalls (--syscalls=ptrace would)", p->pid, p->rec->comm, why);
		p->sc_missed = 1;
		reasons |= MISSED;
		name_mechanism(cfg, pt);
		return;
	}
	info_msg("process %d (%s): %s: syscalls via PTRACE_SYSCALL, which stops at every "
		 "syscall", p->pid, p->rec->comm, why);
	sc_mech_ptrace(cfg, pt, p, PTRACE_SC_NO_WRAPPERS);
}

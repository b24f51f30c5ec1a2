/*
 * probes.c (none) - the probes' arch functions, failing: detours
 * (detour-plan.h) and the stub frame (stub-frame.h); breakpoints' are
 * in bp.c, the remote-syscall trampoline's in tramp.c.  Built for the
 * stub arch, and for a CPU whose folder does not have them yet
 * (Makefile.am's ARCH_SOURCES): what needs them fails, with the one
 * line of arch_unsupported(), and memtap traces what needs none of
 * them (syscall events).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/detour-plan.h"
#include "arch/stub-frame.h"
#include "util/error.h"
#include "unsupported.h"

int arch_unsupported(const char *what)
{
	static int said;

	if (!said)
		error_msg("%s: not supported on this CPU (memtap built with --with-arch=%s)",
			  what, ARCH_NAME);
	said = 1;
	return -ENOTSUP;
}

/* detour-plan.h */

int arch_detour_plan(uint64_t func, const uint8_t *buf, size_t size, struct plan *p,
		     const char **why)
{
	(void)func;
	(void)buf;
	(void)size;
	memset(p, 0, sizeof(*p));
	*why = "not supported on this CPU";
	return -ENOTSUP;
}

size_t arch_syscall_sites(uint64_t func, const uint8_t *buf, size_t size, uint64_t *sites,
			  size_t max)
{
	(void)func;
	(void)buf;
	(void)size;
	(void)sites;
	(void)max;
	return 0;	/* no detoured wrappers (arch_bp_wrappers_detoured()) */
}

size_t arch_detour_padded_size(uint64_t func, const uint8_t *buf, size_t got, size_t size)
{
	(void)func;
	(void)buf;
	(void)got;
	return size;
}

int arch_detour_relocate(struct plan *p, uint64_t at, uint8_t *code)
{
	(void)p;
	(void)at;
	(void)code;
	return arch_unsupported("relocating a function's entry");
}

int arch_detour_moved_pc(const struct plan *p, uint64_t at, uint64_t pc, uint64_t *to)
{
	(void)p;
	(void)at;
	(void)pc;
	(void)to;
	return 0;
}

int arch_detour_in_reach(const struct plan *p, uint64_t slot)
{
	(void)p;
	(void)slot;
	return 0;
}

void arch_detour_glue(uint64_t base, uint64_t far, uint64_t s, int result, int sync,
		      uint32_t desc, uint8_t *code)
{
	(void)base;
	(void)far;
	(void)s;
	(void)result;
	(void)sync;
	(void)desc;
	(void)code;
}

void arch_detour_patch(uint8_t *patch, uint64_t site, uint64_t to)
{
	(void)patch;
	(void)site;
	(void)to;
}

size_t arch_landing_pad(const uint8_t *buf, size_t n)
{
	(void)buf;
	(void)n;
	return 0;
}

uint64_t arch_patched_target(const uint8_t *buf, size_t n, uint64_t addr, size_t *off)
{
	(void)buf;
	(void)n;
	(void)addr;
	(void)off;
	return 0;
}

/* stub-frame.h */

int arch_stub_frame(const uint8_t *slot, uint64_t off, struct arch_stub_frame *f)
{
	(void)slot;
	(void)off;
	memset(f, 0, sizeof(*f));
	return -1;
}

/*
 * go.c (none) - Go's runtime as the arch layer decodes it (arch/go.h):
 * not understood; a Go program's stacks end where its frames need it.
 * Built for the stub arch, and for a CPU whose folder has no go.c yet.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "arch/go.h"

/* go.h: no Go runtime is understood. */
int arch_go_decode_systemstack(const uint8_t *code, size_t len, struct arch_go_offsets *off)
{
	(void)code;
	(void)len;
	(void)off;
	return -1;
}

uint64_t arch_go_switch_return(const uint8_t *code, size_t len, uint64_t start)
{
	(void)code;
	(void)len;
	(void)start;
	return 0;
}

int arch_go_running_g(const arch_regs_t *r, const struct arch_go_offsets *off,
		      arch_go_read_fn *read, void *ctx, uint64_t *g)
{
	(void)r;
	(void)off;
	(void)read;
	(void)ctx;
	(void)g;
	return -1;
}

int arch_go_switch_caller(const struct arch_go_sched *sched, arch_go_read_fn *read, void *ctx,
			  uint64_t *ra, uint64_t *sp, uint64_t *fp)
{
	(void)sched;
	(void)read;
	(void)ctx;
	(void)ra;
	(void)sp;
	(void)fp;
	return -1;
}

int arch_go_morestack_caller(const struct arch_go_sched *sched, arch_go_read_fn *read,
			     void *ctx, uint64_t *ra, uint64_t *sp)
{
	uint64_t fp;

	return arch_go_switch_caller(sched, read, ctx, ra, sp, &fp);
}

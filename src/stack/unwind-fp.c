/*
 * unwind-fp.c - frame-pointer walk over a stack snapshot.
 *
 * Code built with -fno-omit-frame-pointer keeps, in every frame, the
 * caller's %rbp at [%rbp] and the return address at [%rbp + 8].  The
 * walk follows that chain while it goes up the stack and lands on
 * return addresses in code.
 *
 * The leaf needs care: a stop in a syscall wrapper or at a function's
 * first instruction (a breakpoint) has no frame of its own yet, so %rbp
 * is still the caller's frame and the caller's own return address would
 * be skipped; its return address is the word at %rsp.  That word is
 * taken as frame 1 when it points into code of a known module (needs
 * the module list: without it the leaf's caller is lost).  Where the
 * leaf did push a frame, [%rsp] is the saved %rbp, a stack address,
 * and is ignored.
 *
 * Libraries built without frame pointers (Debian's glibc) break the
 * chain: %rbp may hold anything there.  The checks below stop the walk
 * at the first implausible link rather than report garbage.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "stack/modules.h"
#include "stack/unwind.h"
#include "util/xmalloc.h"

/* How far beyond the snapshot a frame may lie (then read from the process). */
#define FP_MAX_STACK (64u << 20)

struct fp_state {
	struct unwind_memcache cache;
};

static int fp_init(struct unwinder *uw)
{
	uw->priv = xcalloc(1, sizeof(struct fp_state));
	return 0;
}

static void fp_fini(struct unwinder *uw)
{
	free(uw->priv);
	uw->priv = NULL;
}

static int is_code(const struct unwinder *uw, uint64_t addr)
{
	if (addr < 4096)
		return 0;
	if (!uw->pm)
		return 1;
	return modules_find_range(uw->pm, addr) != NULL;
}

static int fp_walk(struct unwinder *uw, const struct stack_snapshot *s,
		   uint64_t *pcs, int max_depth)
{
	struct fp_state *st = uw->priv;
	uint64_t sp = arch_sp(&s->regs);
	uint64_t fp = s->regs.rbp;
	uint64_t limit = sp + FP_MAX_STACK;
	int n = 0;

	unwind_memcache_reset(&st->cache);
	pcs[n++] = arch_pc(&s->regs);
	if (n < max_depth && uw->pm) {
		uint64_t w;

		if (stack_snapshot_read(s, sp, &w, sizeof(w)) == 0 && is_code(uw, w))
			pcs[n++] = w;
	}
	while (n < max_depth) {
		uint64_t link[2];

		if (fp < sp || fp >= limit || (fp & 7))
			break;
		if (unwind_memcache_read(&st->cache, s, fp, link, sizeof(link)) < 0)
			break;
		if (!is_code(uw, link[1]))
			break;
		/* A leaf with a frame: [%rsp] was not taken, nothing to drop. */
		pcs[n++] = link[1];
		if (link[0] <= fp)
			break;
		sp = fp + 16;
		fp = link[0];
	}
	return n;
}

const struct unwinder_ops unwinder_fp_ops = {
	.name = "fp",
	.init = fp_init,
	.fini = fp_fini,
	.walk = fp_walk,
};

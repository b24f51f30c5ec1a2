/*
 * patch.h - where and how a function's entry becomes `jmp rel32` to a
 * stub: the instructions it displaces, their relocation next to the
 * stub, and a place for the stub page within reach.
 */
#ifndef SPIKE_PATCH_H
#define SPIKE_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "bp_arch.h"
#include "linux/procfs.h"

#define PATCH_JMP_LEN 5
#define PATCH_MAX_INSNS 8
#define PATCH_ORIG_ROOM 64	/* bytes for the relocated entry in the stub page */

struct patch {
	uint64_t func;		/* the function's address */
	uint64_t site;		/* where the jmp goes: func, or func + 4 after endbr64 */
	unsigned len;		/* bytes displaced at site (>= PATCH_JMP_LEN) */
	unsigned ninsns;
	struct bp_insn insns[PATCH_MAX_INSNS];
	uint8_t orig[32];	/* the bytes at site before the patch */
	int endbr;		/* func starts with endbr64 (kept in place) */
};

/*
 * Plan the patch of the function at func whose code is buf[0..size).
 * Returns 0, or -ENOTSUP with *why set: an instruction that cannot be
 * relocated, or a branch of the function into bytes 1.. of the patch.
 */
int patch_plan(uint64_t func, const uint8_t *buf, size_t size, struct patch *p,
	       const char **why);

/*
 * The relocated entry, to run at address at: code[PATCH_ORIG_ROOM],
 * ends with a jmp to site + len.  0 or -ERANGE/-ENOSPC.
 */
int patch_relocate(const struct patch *p, uint64_t at, uint8_t *code);

/* The bytes that replace orig: jmp rel32 to stub, int3 after.  0 or -ERANGE. */
int patch_jmp(const struct patch *p, uint64_t stub, uint8_t *bytes);

#endif

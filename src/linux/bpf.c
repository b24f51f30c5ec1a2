/*
 * bpf.c - a strictly bounds-checked classic-BPF interpreter for seccomp
 * filters, and the kernel's precedence of seccomp results.
 *
 * Semantics are those of the kernel for a filter that passed
 * seccomp_check_filter(): the accumulator A and the index X are 32-bit,
 * the scratch memory M[] has BPF_MEMWORDS words, BPF_LD|BPF_W|BPF_ABS
 * loads a native-endian word of struct seccomp_data at a 4-aligned
 * offset (64-bit fields are two loads, low word first on x86-64),
 * BPF_LEN is sizeof(struct seccomp_data), jumps go forward only.  Every
 * offset, index and jump is checked before use, so any array of
 * instructions, valid or not, yields either a result or -EINVAL; since
 * jumps only go forward, a program runs at most len instructions.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "linux/bpf.h"

/* The ALU operation op on a and b; -EINVAL for an unknown one. */
static int alu(uint16_t op, uint32_t *a, uint32_t b)
{
	switch (op) {
	case BPF_ADD: *a += b; break;
	case BPF_SUB: *a -= b; break;
	case BPF_MUL: *a *= b; break;
	case BPF_DIV: *a = b ? *a / b : 0; return b ? 0 : 1;
	case BPF_MOD: *a = b ? *a % b : 0; return b ? 0 : 1;
	case BPF_OR: *a |= b; break;
	case BPF_AND: *a &= b; break;
	case BPF_XOR: *a ^= b; break;
	case BPF_LSH: *a <<= (b & 31); break;
	case BPF_RSH: *a >>= (b & 31); break;
	case BPF_NEG: *a = -*a; break;
	default: return -EINVAL;
	}
	return 0;
}

/*
 * A load into A (BPF_LD) or X (BPF_LDX): 32-bit words only, from
 * seccomp_data (A only), its length, an immediate, or M[].  -EINVAL for
 * anything else or out of bounds.
 */
static int load(const struct sock_filter *f, const uint32_t *mem,
		const struct seccomp_data *data, uint32_t *reg)
{
	uint32_t k = f->k;

	if (BPF_SIZE(f->code) != BPF_W)
		return -EINVAL;
	switch (BPF_MODE(f->code)) {
	case BPF_ABS:
		if (BPF_CLASS(f->code) != BPF_LD || k % 4 || k > sizeof(*data) - 4)
			return -EINVAL;
		memcpy(reg, (const unsigned char *)data + k, 4);
		return 0;
	case BPF_LEN:
		*reg = sizeof(*data);
		return 0;
	case BPF_IMM:
		*reg = k;
		return 0;
	case BPF_MEM:
		if (k >= BPF_MEMWORDS)
			return -EINVAL;
		*reg = mem[k];
		return 0;
	default:
		return -EINVAL;
	}
}

int bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data,
	    uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS];

	if (!prog || len == 0 || len > BPF_PROG_MAX)
		return -EINVAL;
	memset(mem, 0, sizeof(mem));
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint32_t k = f->k, src;
		int r;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (load(f, mem, data, &a) < 0)
				return -EINVAL;
			break;
		case BPF_LDX:
			if (load(f, mem, data, &x) < 0)
				return -EINVAL;
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->code != BPF_ST && f->code != BPF_STX)
				return -EINVAL;
			if (k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[k] = f->code == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			if (BPF_OP(f->code) == BPF_NEG) {
				if (f->code != (BPF_ALU | BPF_NEG))
					return -EINVAL;
				src = 0;
			} else if (BPF_SRC(f->code) == BPF_K) {
				/* the kernel refuses these at load time */
				if ((BPF_OP(f->code) == BPF_DIV || BPF_OP(f->code) == BPF_MOD) && !k)
					return -EINVAL;
				if ((BPF_OP(f->code) == BPF_LSH || BPF_OP(f->code) == BPF_RSH) &&
				    k >= 32)
					return -EINVAL;
				src = k;
			} else {
				src = x;
			}
			r = alu(BPF_OP(f->code), &a, src);
			if (r < 0)
				return r;
			if (r > 0) {
				*ret = 0;	/* division by zero: the program returns 0 */
				return 0;
			}
			break;
		case BPF_JMP:
			if (f->code == (BPF_JMP | BPF_JA)) {
				if (k >= len - pc - 1)
					return -EINVAL;
				pc += k;
				break;
			}
			if (pc + f->jt + 1 >= len || pc + f->jf + 1 >= len)
				return -EINVAL;
			src = BPF_SRC(f->code) == BPF_K ? k : x;
			switch (BPF_OP(f->code)) {
			case BPF_JEQ: r = a == src; break;
			case BPF_JGT: r = a > src; break;
			case BPF_JGE: r = a >= src; break;
			case BPF_JSET: r = (a & src) != 0; break;
			default: return -EINVAL;
			}
			pc += r ? f->jt : f->jf;
			break;
		case BPF_RET:
			if (f->code == (BPF_RET | BPF_K))
				*ret = k;
			else if (f->code == (BPF_RET | BPF_A))
				*ret = a;
			else
				return -EINVAL;
			return 0;
		case BPF_MISC:
			if (f->code == (BPF_MISC | BPF_TAX))
				x = a;
			else if (f->code == (BPF_MISC | BPF_TXA))
				a = x;
			else
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;		/* ran off the end */
}

/* The action bits as the kernel compares them: lower is more restrictive. */
static int32_t action_rank(uint32_t ret)
{
	return (int32_t)(ret & SECCOMP_RET_ACTION_FULL);
}

uint32_t bpf_seccomp_combine(const uint32_t *rets, size_t n, size_t *which)
{
	uint32_t best = SECCOMP_RET_ALLOW;
	size_t at = 0;

	for (size_t i = 0; i < n; i++)
		if (action_rank(rets[i]) < action_rank(best)) {
			best = rets[i];
			at = i;
		}
	if (which)
		*which = at;
	return best;
}

const char *bpf_seccomp_action_name(uint32_t ret)
{
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS: return "KILL_PROCESS";
	case SECCOMP_RET_KILL_THREAD: return "KILL_THREAD";
	case SECCOMP_RET_TRAP: return "TRAP";
	case SECCOMP_RET_ERRNO: return "ERRNO";
	case SECCOMP_RET_USER_NOTIF: return "USER_NOTIF";
	case SECCOMP_RET_TRACE: return "TRACE";
	case SECCOMP_RET_LOG: return "LOG";
	case SECCOMP_RET_ALLOW: return "ALLOW";
	default: return "an unknown action";
	}
}

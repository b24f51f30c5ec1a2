/*
 * go.c (aarch64) - the CPU's part of a Go program's runtime (arch/go.h):
 * its offsets read from runtime.systemstack's arm64 code, the return
 * address of the switch functions' call on g0, the running g in x28,
 * and the callers of a goroutine's frame that a switch saved.
 *
 * runtime.systemstack is written alike in every Go since 1.5
 * (asm_arm64.s; g is x28 in Go's assembly, R28):
 *
 *	LDR	x4, [x28, #g_m]			the first load from g: g_m
 *	LDR	x5, [x4, #m_gsignal]
 *	CMP	x5, x28
 *	LDR	x5, [x4, #m_g0]
 *	CMP	x5, x28
 *	LDR	x6, [x4, #m_curg]		the last compare with g: m_curg
 *	CMP	x6, x28
 *	...
 *	BL	gosave_systemstack_switch
 *	MOV	x28, x5				the field moved into g: m_g0
 *	BL	runtime.save_g
 *	LDR	x3, [x28, #g_sched]		(g_sched+gobuf_sp)(g): g_sched
 *	MOV	sp, x3				the switch
 *
 * so a stripped program (-ldflags='-s -w') is read as well as one with
 * DWARF.  Go keeps g in x28 whenever Go code runs, the runtime's
 * assembly and the syscalls it makes included; TLS (runtime.tls_g) is
 * only a copy for cgo's C code, which is not read here (tls_g is 0).
 *
 * Go's arm64 frames: a function with a frame stores the return address
 * (x30) at 0(sp) of its frame and its caller's x29 below that, at
 * -8(sp), and keeps x29 = sp - 8: the frame record at x29 is its
 * caller's x29, then its return address, as AAPCS64's.
 * runtime.systemstack and asmcgocall ($0 frames that call) have a frame
 * of 16 bytes, as runtime.systemstack_switch, which their saved
 * sched.pc names and Go's own traceback steps with that size.
 * runtime.morestack is called from the prologue of a function before
 * it made its frame, its return address still in x30, which the
 * prologue moved to x3 and morestack saved in the gobuf's lr.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "arch/go.h"

/* Instructions of a runtime function read at most. */
#define DECODE_MAX 64
/* Offsets beyond this in g or m are not believed. */
#define FIELD_MAX 4096
/* x28: g in Go's arm64 code. */
#define G_REG 28
/* The frame of runtime.systemstack, asmcgocall and systemstack_switch. */
#define SWITCH_FRAME 16

/* What a register holds, as runtime.systemstack goes. */
enum held { H_NONE, H_G, H_M, H_MFIELD, H_G0 };

struct decode {
	enum held held[32];
	int64_t field[32];	/* H_MFIELD: the offset in m it was loaded from */
	int64_t g_m, m_g0, m_curg, g_sched;
};

/* LDR Xt, [Xn, #imm] (unsigned offset, 64-bit): 1 with *n, *t, *off. */
static int ldr_imm(uint32_t w, unsigned *n, unsigned *t, int64_t *off)
{
	if ((w & 0xffc00000u) != 0xf9400000u)
		return 0;
	*t = w & 31;
	*n = (w >> 5) & 31;
	*off = (int64_t)((w >> 10) & 0xfff) * 8;
	return 1;
}

/* MOV Xd, Xm (ORR Xd, XZR, Xm): 1 with *d, *m. */
static int mov_reg(uint32_t w, unsigned *d, unsigned *m)
{
	if ((w & 0xffe0ffe0u) != 0xaa0003e0u)
		return 0;
	*d = w & 31;
	*m = (w >> 16) & 31;
	return 1;
}

/* CMP Xn, Xm (SUBS XZR, Xn, Xm with no shift): 1 with *n, *m. */
static int cmp_reg(uint32_t w, unsigned *n, unsigned *m)
{
	if ((w & 0xffe0fc1fu) != 0xeb00001fu)
		return 0;
	*n = (w >> 5) & 31;
	*m = (w >> 16) & 31;
	return 1;
}

/* MOV SP, Xn (ADD SP, Xn, #0) with n not sp: the switch of stacks. */
static int sp_from_reg(uint32_t w)
{
	return (w & 0xfffffc1fu) == 0x9100001fu && ((w >> 5) & 31) != 31;
}

static int is_call(uint32_t w)
{
	return (w & 0xfc000000u) == 0x94000000u ||	/* BL */
	       (w & 0xfffffc1fu) == 0xd63f0000u;	/* BLR */
}

/* B, BR, RET: where runtime.systemstack's straight line ends. */
static int is_jump(uint32_t w)
{
	return (w & 0xfc000000u) == 0x14000000u || (w & 0xfffffc1fu) == 0xd61f0000u ||
	       (w & 0xfffffc1fu) == 0xd65f0000u;
}

static uint32_t word_at(const uint8_t *code, size_t at)
{
	return (uint32_t)code[at] | (uint32_t)code[at + 1] << 8 | (uint32_t)code[at + 2] << 16 |
	       (uint32_t)code[at + 3] << 24;
}

/*
 * An instruction not understood: the registers it may write unknown
 * after it.  Branches write none (BL and BLR x30, not tracked); a
 * store writes none but its base (writeback, sp here); anything else
 * may write its Rd/Rt, and a load pair its Rt2 too.
 */
static void clobber(struct decode *st, uint32_t w)
{
	if ((w & 0x1c000000u) == 0x14000000u)
		return;	/* branches, exceptions, system */
	if ((w & 0x0a000000u) == 0x08000000u) {
		/* loads and stores: L is bit 22 */
		if (!(w & (1u << 22)))
			return;
		if ((w & 0x3a000000u) == 0x28000000u)
			st->held[(w >> 10) & 31] = H_NONE;	/* LDP: Rt2 */
	}
	st->held[w & 31] = H_NONE;
}

int arch_go_decode_systemstack(const uint8_t *code, size_t len, struct arch_go_offsets *off)
{
	struct decode st;

	memset(&st, 0, sizeof(st));
	st.g_m = st.m_g0 = st.m_curg = st.g_sched = -1;
	st.held[G_REG] = H_G;
	for (size_t at = 0, n = 0; n < DECODE_MAX && at + 4 <= len; at += 4, n++) {
		uint32_t w = word_at(code, at);
		unsigned a, b, t;
		int64_t f;

		if (sp_from_reg(w) && st.g_sched >= 0)
			break;	/* MOV sp, x3: on g0 */
		if (ldr_imm(w, &a, &t, &f)) {
			enum held h = a < 31 ? st.held[a] : H_NONE;

			st.held[t] = H_NONE;
			if (f >= FIELD_MAX)
				continue;
			if (h == H_G) {
				if (st.g_m < 0)
					st.g_m = f;
				if (st.g_m == f)
					st.held[t] = H_M;
			} else if (h == H_M) {
				st.held[t] = H_MFIELD;
				st.field[t] = f;
			} else if (h == H_G0 && st.g_sched < 0) {
				st.g_sched = f;	/* (g_sched+gobuf_sp)(g): gobuf_sp is 0 */
			}
			continue;
		}
		if (cmp_reg(w, &a, &b)) {
			if (a < 31 && b < 31 && st.held[a] == H_MFIELD && st.held[b] == H_G)
				st.m_curg = st.field[a];
			else if (a < 31 && b < 31 && st.held[b] == H_MFIELD && st.held[a] == H_G)
				st.m_curg = st.field[b];
			continue;
		}
		if (mov_reg(w, &a, &b)) {
			if (a == 31)
				continue;
			if (a == G_REG) {
				/* MOV x28, x5: g0 becomes g */
				if (b < 31 && st.held[b] == H_MFIELD && st.m_curg >= 0) {
					st.m_g0 = st.field[b];
					st.held[a] = H_G0;
				} else {
					st.held[a] = H_NONE;
				}
				continue;
			}
			st.held[a] = b < 31 ? st.held[b] : H_NONE;
			st.field[a] = b < 31 ? st.field[b] : 0;
			continue;
		}
		if (is_call(w) || is_jump(w))
			continue;	/* gosave_systemstack_switch and save_g keep them */
		clobber(&st, w);
	}
	/* g0 is the field compared before curg, not curg */
	if (st.g_m < 0 || st.m_g0 < 0 || st.m_curg < 0 || st.g_sched < 0 || st.m_g0 == st.m_curg)
		return -1;
	off->tls_g = 0;
	off->g_m = (uint32_t)st.g_m;
	off->m_g0 = (uint32_t)st.m_g0;
	off->m_curg = (uint32_t)st.m_curg;
	off->g_sched = (uint32_t)st.g_sched;
	return 0;
}

/* The first BL or BLR after the first MOV sp, Xn (MOV sp, x3 or x0). */
uint64_t arch_go_switch_return(const uint8_t *code, size_t len, uint64_t start)
{
	int switched = 0;

	for (size_t at = 0, n = 0; n < DECODE_MAX && at + 4 <= len; at += 4, n++) {
		uint32_t w = word_at(code, at);

		if (is_call(w) && switched)
			return start + at + 4;
		if (sp_from_reg(w))
			switched = 1;
	}
	return 0;
}

/* g is x28 in Go code; off says nothing on arm64 (tls_g 0). */
int arch_go_running_g(const arch_regs_t *r, const struct arch_go_offsets *off,
		      arch_go_read_fn *read, void *ctx, uint64_t *g)
{
	(void)off;
	(void)read;
	(void)ctx;
	*g = r->r.regs[G_REG];
	return 0;
}

/*
 * sched.sp is runtime.systemstack's (asmcgocall's) sp, its frame of 16
 * bytes: the return address into its caller at 0(sp), the caller's sp
 * 16 above; the caller, which made a frame to call, keeps x29 8 below
 * its sp.
 */
int arch_go_switch_caller(const struct arch_go_sched *sched, arch_go_read_fn *read, void *ctx,
			  uint64_t *ra, uint64_t *sp, uint64_t *fp)
{
	if (read(ctx, sched->sp, ra, sizeof(*ra)) < 0)
		return -1;
	*sp = sched->sp + SWITCH_FRAME;
	*fp = *sp - 8;
	return 0;
}

/*
 * sched.sp is the function's at its entry, which is its caller's sp (a
 * call pushes nothing), and sched.lr its x30 then: the return address
 * into its caller.
 */
int arch_go_morestack_caller(const struct arch_go_sched *sched, arch_go_read_fn *read,
			     void *ctx, uint64_t *ra, uint64_t *sp)
{
	(void)read;
	(void)ctx;
	if (!sched->lr)
		return -1;
	*ra = sched->lr;
	*sp = sched->sp;
	return 0;
}

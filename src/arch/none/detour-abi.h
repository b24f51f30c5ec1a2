/*
 * detour-abi.h (none) - the stub layout for the stub arch: the same
 * offsets as x86_64's (its detour-abi.h says what each is), so that
 * the layers above compile alike; no stub is ever written (see cpu.h).
 * A change of the layout there is made here too.
 */
#ifndef MEMTAP_DETOUR_ABI_H
#define MEMTAP_DETOUR_ABI_H
#define DT_PAGE 0x1000
#define DT_CODE_SIZE 0x3000
#define DT_MAP_SIZE 0x66000
#define DT_DATA 0x3000
#define DT_COUNTERS 0x4000
#define DT_THREADS 0x5000
#define DT_POOL 0x6000
#define DT_POOL_N 4096
#define P_SHIFT 4
#define DT_SET 0x16000
#define DT_SET_N 8192
#define DT_PERTHREAD 0x26000
#define PT_SHIFT 12
#define PT_CALLS 0x00
#define PT_BYTES 0x08
#define PT_FILTERED 0x10
#define PT_FAST 0x18
#define PT_SLOT_SHIFT 5
#define S_PROBES 16
#define DT_TEMPLATE_MAX 0x1100
#define DT_SLOT_SIZE 0x80
#define DT_ORIG 0x30
#define DT_PF_LEN 0x14
#define DT_SAVED 0x68
#define DT_ORIG_ROOM (DT_SAVED - DT_ORIG)
#define DT_NSLOTS ((DT_CODE_SIZE - DT_TEMPLATE_MAX) / DT_SLOT_SIZE)
#define DT_FAR_MAX 2
#define DT_FAR_SLOTS 32
#define DT_ALL_SLOTS (DT_NSLOTS + DT_FAR_MAX * DT_FAR_SLOTS)
#define F_MAGIC 0x00
#define F_BASE 0x08
#define F_RESULT 0x10
#define F_ENTRY 0x18
#define F_SYNC 0x20
#define F_INDEX 0x28
#define F_PREFILTER 0x30
#define F_SIZE 0x38
#define DT_FAR_MAGIC 0x6567617072616674
#define D_DROPPED 0x000
#define D_PID 0x008
#define D_RING 0x010
#define D_COMMIT 0x018
#define D_NREC 0x020
#define D_MASK 0x028
#define D_REC_SIZE 0x030
#define D_COPY_LEN 0x038
#define D_STALL_TAIL 0x040
#define D_TID_OFF 0x048
#define D_WAIT_SPINS 0x050
#define D_MIN_SIZE 0x058
#define D_MAX_SIZE 0x060
#define D_COPY_FAIL 0x068
#define D_COPY_SLOW 0x070
#define D_SAMPLE_MEAN 0x078
#define D_SET_MASK 0x080
#define D_SET_FULL 0x088
#define D_PREFETCH 0x090
#define D_WTAB 0x098
#define D_WALK_MAX 0x0a0
#define D_WTAB_SIZE 0x0a8
#define D_HEAD 0x0c0
#define D_TAILP 0x100
#define D_SHARED_LEFT 0x140
#define D_SHARED_MEAN 0x148
#define D_POOL_IDX 0x180
#define D_NEST_LO 0x1c0
#define D_NEST_HI 0x1c8
#define D_NEST_N 0x1d0
#define D_COMPACT 0x1d8
#define D_CHAINS 0x1e0
#define D_CHAIN_MASK 0x1e8
#define D_KEEP_ALL 0x1f0
#define D_MEMO 0x1f8
#define D_NEST 0x200
#define D_NEST_MAX 96
#define D_SCRATCH 0x800
#define K_KEY 0x00
#define K_LO 0x08
#define K_HI 0x10
#define K_LEFT 0x18
#define K_MEAN 0x20
#define K_TAIL 0x28
#define K_SHIFT 6
#define K_NENT 64
#define K_HASH_SHIFT 58
#define K_PROBES 4
#define K_HASH_MUL 0x9e3779b97f4a7c15
#define DT_WAIT_NS 20000
#define DT_WAIT_YIELDS 8
#define C_CALLS 0x00
#define C_BYTES 0x08
#define C_KEPT 0x10
#define C_FILTERED 0x18
#define C_SHIFT 5
#define SK_NONE 0
#define SK_ARG0 1
#define SK_ARG1 2
#define SK_ARG2 3
#define SK_ARG01 4
#define SK_ARG12 5
#define DF_WORD 0x01
#define DF_NOSTACK 0x02
#define DF_ARG0_KEEP 0x04
#define DF_ALWAYS 0x08
#define DF_SETADD 0x10
#define DF_SETDEL 0x20
#define DF_RELEASE 0x40
#define DF_TAILS 0x80
#define R_SEQ 0x00
#define R_TID 0x08
#define R_DESC 0x10
#define R_ARG0 0x18
#define R_ARG1 0x20
#define R_ARG2 0x28
#define R_ARG3 0x30
#define R_ARG4 0x38
#define R_RESULT 0x40
#define R_RSP 0x48
#define R_RET 0x50
#define R_RBX 0x58
#define R_RBP 0x60
#define R_R12 0x68
#define R_R13 0x70
#define R_R14 0x78
#define R_R15 0x80
#define R_WORD 0x88
#define R_COPIED 0x90
#define R_MEAN 0x98
#define R_WALK 0xa0
#define R_TRIP 0xa8
#define R_TRSP 0xb0
#define R_TRBP 0xb8
#define R_STACK 0xc0
#define DC_COMPACT (1ull << 32)
#define RC_CHAIN_SHIFT 32
#define RC_RESULT 0x30
#define RC_MEAN 0x38
#define CH_KEY 0x00
#define CH_ID 0x08
#define CH_SIZE 16
#define CH_SHIFT 4
#define CH_PROBES 8
#define CH_MARGIN 0x4000
#define CH_MAX_PCS 256
#define MEMO_SHIFT 15
#define ME_SHIFT 10
#define ME_N_SHIFT 4
#define MB_BUSY (ME_N << ME_SHIFT)
#define ME_N (1 << ME_N_SHIFT)
#define ME_PC 0x00
#define ME_RSP 0x08
#define ME_RBP_USED 1
#define ME_DIR 0x18
#define ME_LO 0x20
#define ME_HI 0x28
#define ME_ID 0x30
#define ME_NP 0x38
#define ME_PAIRS 0x40
#define ME_MAXP (((1 << ME_SHIFT) - ME_PAIRS) / 16)
#define CH_BUF (R_STACK + CH_MAX_PCS * 8)
#define W_MAGIC 0x00
#define W_DIR 0x08
#define W_START 0x40
#define WD_LO 0x00
#define WD_HI 0x08
#define WD_TAB 0x10
#define WD_SIZE 24
#define WT_NROWS 0x00
#define WT_NPAGES 0x04
#define WT_INDEX 0x08
#define WT_PAGE_SHIFT 8
#define WR_START 0x00
#define WR_CFA 0x04
#define WR_RBP 0x08
#define WR_KIND 0x0a
#define WR_SIZE 12
#define WK_NONE 0
#define WK_RSP 1
#define WK_RBP 2
#define WK_END 3
#define DT_WTAB_MAGIC 0x6966636174706d6d

#include <stdint.h>
#include <string.h>

#include "cpu.h"

/* tables.c: empty, no stub routines */
extern const uint8_t dt_template[], dt_template_end[], dt_common_result[], dt_common_entry[],
	dt_common_sync[], dt_common_prefilter[];

/* The chain table's key of n return addresses, as x86_64's stubs compute it. */
static inline uint64_t dt_chain_hash(const uint64_t *pcs, uint64_t n)
{
	uint64_t h = n * K_HASH_MUL;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ pcs[i]) * K_HASH_MUL;
	return (h ^ (h >> 32)) | 1;
}

/* The word at off of a record. */
static inline uint64_t dt_rec_word(const uint8_t *rec, unsigned off)
{
	uint64_t v;

	memcpy(&v, rec + off, sizeof(v));
	return v;
}

/* No record is ever made: r is left as it is. */
static inline void arch_regs_from_record(arch_regs_t *r, const uint8_t *rec)
{
	(void)r;
	(void)rec;
}

#endif /* MEMTAP_DETOUR_ABI_H */

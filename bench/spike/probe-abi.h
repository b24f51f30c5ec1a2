/*
 * probe-abi.h - the layout shared by the stubs (stubs.S) and the tracer
 * (detour.c): the stub page, its data pages, the ring records.
 *
 * One mapping of PA_MAP_SIZE bytes within +-2 GiB of the probed object:
 *
 *   +0x0000  code page (r-x): every stub template, the relocated entries
 *   +0x1000  data page (rw-): counters, parameters, ring indexes
 *   +0x2000  slot page (rw-): per-thread counter slots
 *   +0x3000  stack page (rw-): each thread's stack bounds, by %fs base
 *
 * so that the stubs reach their data rip-relatively and the template
 * assembles once, position-independent.  The ring (records + commit
 * words) is a second anonymous mapping anywhere, found through the data
 * page.  Offsets are macros, not a struct, because stubs.S uses them.
 *
 * Ring protocol: a producer reserves sequence number s by cmpxchg on
 * HEAD while HEAD - TAIL < NREC; fills record s & MASK; then stores
 * s + 1 into commit[s & MASK] (plain store: x86 keeps stores in order).
 * The consumer reads commit[] from TAIL on, then the committed records,
 * then writes TAIL.  A full ring makes the producer sched_yield() up to
 * WAIT_SPINS times, then drop (DROPPED += 1) and remember TAIL in
 * STALL_TAIL: while TAIL stays there, later producers drop at once, so
 * a dead consumer costs one bounded wait, not one per call.
 */
#ifndef SPIKE_PROBE_ABI_H
#define SPIKE_PROBE_ABI_H

#define PA_PAGE		0x1000
#define PA_MAP_SIZE	0x4000
#define PA_DATA		0x1000	/* data page offset from the code page */
#define PA_SLOTS	0x2000	/* slot page offset */
#define PA_STACKS	0x3000	/* stack page offset */

/* data page */
#define D_CALLS		0x000	/* malloc calls (shared counter) */
#define D_BYTES		0x008	/* malloc bytes */
#define D_FREES		0x010	/* free calls */
#define D_MIN_SIZE	0x018	/* size threshold of the filter */
#define D_KEPT_CALLS	0x020	/* calls passing the filter / sampled */
#define D_KEPT_BYTES	0x028
#define D_DROPPED	0x030	/* records lost to a full ring */
#define D_PID		0x038	/* for process_vm_readv(pid, ...) */
#define D_RING		0x040	/* address of the records */
#define D_COMMIT	0x048	/* address of the commit words */
#define D_NREC		0x050	/* records in the ring (power of 2) */
#define D_MASK		0x058	/* NREC - 1 */
#define D_REC_SIZE	0x060	/* R_STACK + COPY_LEN */
#define D_COPY_LEN	0x068	/* bytes of stack copied per record */
#define D_STALL_TAIL	0x070	/* TAIL at the last drop; ~0 at start */
#define D_TID_OFF	0x078	/* tid's offset from %fs base; 0: gettid */
#define D_WAIT_SPINS	0x080	/* sched_yield()s before a drop */
#define D_COPY_MODE	0x088	/* 0 process_vm_readv; 1 rep movsb within the
				   thread's stack entry, else process_vm_readv */
#define D_COPY_SLOW	0x090	/* copies that went through process_vm_readv */
#define D_HEAD		0x0c0	/* next sequence number (own cache line) */
#define D_TAIL		0x100	/* consumer index, written by the tracer */
#define D_COUNTDOWN	0x140	/* bytes to the next sample (signed) */
#define D_IVAL_IDX	0x148	/* next interval to take */
#define D_IVALS		0x180	/* 64 sampling intervals, written by the tracer */
#define D_NAME		0x400	/* scratch: the memfd's name for memfd_create */
#define D_NIVALS	64

/* slot page: 64 slots of one cache line, hashed by the %fs base */
#define S_CALLS		0x00
#define S_BYTES		0x08
#define S_FREES		0x10
#define S_SHIFT		6	/* slot size 64 */
#define S_HASH_SHIFT	58	/* 64 slots */
#define S_NSLOTS	64

/*
 * stack page: 128 entries {%fs base, stack lo, stack hi}, open addressing
 * from the same hash, K_PROBES probes.  memtap fills an entry at a new
 * thread's first stop (lo and hi first, the key last) and clears the key
 * at the thread's exit stop, so that a live thread's entry never changes
 * under it.  A thread without an entry, or whose rsp is outside its
 * entry (sigaltstack, a coroutine's stack), copies by process_vm_readv.
 */
#define K_KEY		0x00
#define K_LO		0x08
#define K_HI		0x10
#define K_SHIFT		5	/* entry size 32 */
#define K_HASH_SHIFT	57	/* 128 entries */
#define K_NENT		128
#define K_PROBES	4

/* a ring record */
#define R_SEQ		0x00
#define R_TID		0x08
#define R_TIME		0x10	/* rdtsc */
#define R_ARG0		0x18
#define R_ARG1		0x20
#define R_ARG2		0x28
#define R_RESULT	0x30	/* rax after the call (result variant) */
#define R_RSP		0x38	/* rsp at the function's entry */
#define R_RET		0x40	/* the return address, [rsp] */
#define R_RBX		0x48
#define R_RBP		0x50
#define R_R12		0x58
#define R_R13		0x60
#define R_R14		0x68
#define R_R15		0x70
#define R_COPIED	0x78	/* bytes of stack copied, or -errno */
#define R_STACK		0x80	/* the copy of [rsp, rsp + COPY_LEN) */

#endif

/*
 * stub-cpu.h (none) - the stub arch's part of arch/stub-abi.h: no
 * stubs.  The glue constants have x86_64's values, only so that the
 * layers above compile; no stub mapping is ever made (cpu.h).
 */
#ifndef MEMTAP_ARCH_STUB_CPU_H
#define MEMTAP_ARCH_STUB_CPU_H

#define DT_TEMPLATE_MAX	0x1100
#define DT_SLOT_SIZE	0x80
#define DT_ORIG		0x30
#define DT_PF_LEN	0x14
#define DT_SAVED	0x68
#define DT_ORIG_ROOM	(DT_SAVED - DT_ORIG)

#ifndef __ASSEMBLER__
/* No record is ever made: r is left as it is. */
static inline void arch_regs_from_record(arch_regs_t *r, const uint8_t *rec)
{
	(void)r;
	(void)rec;
}

/* stub-abi.h: no stubs, no walk. */
static inline int arch_stub_walks(void)
{
	return 0;
}

/* stub-abi.h: no stubs: gettid. */
#define ARCH_STUB_TID_SIZE 0
static inline uint64_t arch_stub_tid_off(uint64_t in_pthread, uint64_t pthread_size)
{
	(void)in_pthread;
	(void)pthread_size;
	return 0;
}
#endif

#endif /* MEMTAP_ARCH_STUB_CPU_H */

/*
 * ring.h - memtap's side of the ring in the target (probe-abi.h): read
 * the committed records with process_vm_readv and hand the slots back
 * by writing TAIL with process_vm_writev.  The target never stops.
 */
#ifndef SPIKE_RING_H
#define SPIKE_RING_H

#include <stdint.h>
#include <sys/types.h>

#define RING_BATCH 256	/* records read per drain at most */

struct ring_reader {
	pid_t pid;
	uint64_t data;		/* the data page in the target */
	uint64_t ring, commit;	/* records and commit words in the target */
	const uint8_t *shared;	/* our mapping of commit words + records, or NULL */
	uint64_t nrec, rec_size;
	uint64_t tail;		/* next record to read */
	uint64_t batch;
	uint64_t *commits;	/* local copies, batch each */
	uint8_t *recs;
	/* what was read */
	uint64_t records, bytes, bad, copied_short, copied, drains, syscalls;
	uint64_t ns, cpu_ns;	/* wall, CPU time in ring_drain() calls that found records */
};

void ring_reader_init(struct ring_reader *r, pid_t pid, uint64_t data, uint64_t ring,
		      uint64_t commit, uint64_t nrec, uint64_t rec_size);
void ring_reader_free(struct ring_reader *r);
/*
 * The ring is a shared mapping (a memfd mapped in both processes) at
 * local, from the commit words on: read it in place, no syscall.
 */
void ring_reader_share(struct ring_reader *r, const void *local);
/* Read what is committed, give the slots back: records read, or -errno. */
long ring_drain(struct ring_reader *r);

#endif

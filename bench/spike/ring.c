/*
 * ring.c - drain the target's ring: HEAD, then the commit words from
 * TAIL on, then the committed prefix of records (at most two iovecs each
 * when the range wraps), then the new TAIL.  Four syscalls per batch,
 * whatever its size (at most RING_BATCH records, into buffers that stay
 * in the cache).  Reading the commit words before the records, in
 * two separate copies, is what makes a record seen committed complete:
 * one big copy may read a record's body before its commit word.  With a
 * shared ring (ring_reader_share()) the commit words and records are
 * read in place: two syscalls per batch (HEAD and TAIL stay in the
 * target's private data page).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>

#include "probe-abi.h"
#include "ring.h"
#include "util/xmalloc.h"

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ring_reader_init(struct ring_reader *r, pid_t pid, uint64_t data, uint64_t ring,
		      uint64_t commit, uint64_t nrec, uint64_t rec_size)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->data = data;
	r->ring = ring;
	r->commit = commit;
	r->nrec = nrec;
	r->rec_size = rec_size;
	r->batch = nrec < RING_BATCH ? nrec : RING_BATCH;
	r->commits = xcalloc(r->batch, sizeof(uint64_t));
	r->recs = xcalloc(r->batch, rec_size);
}

void ring_reader_free(struct ring_reader *r)
{
	free(r->commits);
	free(r->recs);
}

void ring_reader_share(struct ring_reader *r, const void *local)
{
	r->shared = local;
}

/* Read n elements of size sz from the target array at base, from index
 * first (mod nrec), into buf: one process_vm_readv, two iovecs on wrap. */
static int read_wrapped(struct ring_reader *r, uint64_t base, uint64_t sz,
			uint64_t first, uint64_t n, void *buf)
{
	uint64_t i = first & (r->nrec - 1), n1 = n < r->nrec - i ? n : r->nrec - i;
	struct iovec local = { buf, n * sz };
	struct iovec remote[2] = {
		{ (void *)(uintptr_t)(base + i * sz), n1 * sz },
		{ (void *)(uintptr_t)base, (n - n1) * sz },
	};
	ssize_t got;

	if (r->shared) {
		const uint8_t *at = r->shared + (base - r->commit);

		memcpy(buf, at + i * sz, n1 * sz);
		memcpy((uint8_t *)buf + n1 * sz, at, (n - n1) * sz);
		return 0;
	}
	got = process_vm_readv(r->pid, &local, 1, remote, n1 < n ? 2 : 1, 0);
	r->syscalls++;
	if (got < 0)
		return -errno;
	return (uint64_t)got == n * sz ? 0 : -EIO;
}

long ring_drain(struct ring_reader *r)
{
	uint64_t head, k = 0, n;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	struct iovec local = { &head, sizeof(head) };
	struct iovec remote = { (void *)(uintptr_t)(r->data + D_HEAD), sizeof(head) };
	int err;

	r->syscalls++;
	if (process_vm_readv(r->pid, &local, 1, &remote, 1, 0) != sizeof(head))
		return -errno;
	n = head - r->tail;
	if (n == 0)
		return 0;
	if (n > r->batch)
		n = r->batch;
	err = read_wrapped(r, r->commit, sizeof(uint64_t), r->tail, n, r->commits);
	if (err < 0)
		return err;
	for (; k < n; k++)
		if (r->commits[k] != r->tail + k + 1)
			break;	/* reserved, not yet committed */
	if (k == 0)
		return 0;
	err = read_wrapped(r, r->ring, r->rec_size, r->tail, k, r->recs);
	if (err < 0)
		return err;
	for (uint64_t j = 0; j < k; j++) {
		const uint8_t *rec = r->recs + j * r->rec_size;
		uint64_t seq, size;
		int64_t copied;

		memcpy(&seq, rec + R_SEQ, sizeof(seq));
		memcpy(&size, rec + R_ARG0, sizeof(size));
		memcpy(&copied, rec + R_COPIED, sizeof(copied));
		if (seq != r->tail + j)
			r->bad++;
		if (copied < (int64_t)(r->rec_size - R_STACK))
			r->copied_short++;
		if (copied > 0)
			r->copied += (uint64_t)copied;
		r->bytes += size;
	}
	r->tail += k;
	local.iov_base = &r->tail;
	remote.iov_base = (void *)(uintptr_t)(r->data + D_TAIL);
	r->syscalls++;
	if (process_vm_writev(r->pid, &local, 1, &remote, 1, 0) != sizeof(r->tail))
		return -errno;
	r->records += k;
	r->drains++;
	r->ns += now_ns(CLOCK_MONOTONIC) - t0;
	r->cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return (long)k;
}

/*
 * ring-code.c - which run-time code a ring's records ran (ring-code.h).
 */
#include "config.h"

#include "linux/memio.h"
#include "record/event.h"
#include "stack/runtimes/jitnames.h"
#include "trace/ring-code.h"

static void mark(struct ring_code *c, pid_t pid, uint64_t head_addr, uint64_t rw)
{
	uint64_t head;

	if (c->nmarks >= RING_CODE_MARKS ||
	    memio_read_all(pid, 0, head_addr, &head, sizeof(head)) < 0)
		return;		/* none yet: the next read tries again */
	c->read = rw;
	c->mark[c->nmarks].seq = head;
	c->mark[c->nmarks].rw = rw;
	c->nmarks++;
}

void ring_code_read(struct ring_code *c, pid_t pid, uint64_t head_addr, int after)
{
	uint64_t rw = jit_names_code_read(pid);

	if (rw != c->read)
		mark(c, pid, head_addr, rw);
	if (after)
		c->hi = rw;
}

uint64_t ring_code_of(struct ring_code *c, uint64_t seq)
{
	uint64_t lo = 0;

	/* the marks before seq: the last one gives what it surely ran */
	while (c->nmarks > 1 && c->mark[1].seq <= seq) {
		for (unsigned i = 1; i < c->nmarks; i++)
			c->mark[i - 1] = c->mark[i];
		c->nmarks--;
	}
	if (c->nmarks && c->mark[0].seq <= seq)
		lo = c->mark[0].rw;
	return lo == c->hi ? EV_CODE_KNOWN | lo : EV_CODE_UNSURE;
}

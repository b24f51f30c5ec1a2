/*
 * perf.c - page-fault events of one thread through perf_event_open(2):
 * open (with run-time fallbacks), the ring buffer and its reader, the
 * exact count, close.  See perf.h for the design.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "linux/perf.h"
#include "util/xmalloc.h"

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

#define SAMPLE_BASIC (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)

static const char *const kind_names[PERF_FAULTS_NKINDS] = {
	"faults", "minor-faults", "major-faults",
};

static const uint64_t kind_config[PERF_FAULTS_NKINDS] = {
	PERF_COUNT_SW_PAGE_FAULTS,
	PERF_COUNT_SW_PAGE_FAULTS_MIN,
	PERF_COUNT_SW_PAGE_FAULTS_MAJ,
};

/* What failed last: the reason line depends on it. */
static enum { STAGE_OPEN, STAGE_MMAP } fail_stage;
static size_t fail_ring_bytes;

int perf_fault_kind_from_name(const char *name)
{
	for (int i = 0; i < PERF_FAULTS_NKINDS; i++)
		if (!strcmp(name, kind_names[i]))
			return i;
	return -1;
}

const char *perf_fault_kind_name(enum perf_fault_kind kind)
{
	return kind < PERF_FAULTS_NKINDS ? kind_names[kind] : "?";
}

static int sys_perf_event_open(struct perf_event_attr *a, pid_t tid)
{
	int fd = (int)syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0 && errno == EINVAL) {
		/* Linux < 3.14: no PERF_FLAG_FD_CLOEXEC */
		fd = (int)syscall(SYS_perf_event_open, a, tid, -1, -1, 0UL);
		if (fd >= 0)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	return fd;
}

static void attr_init(struct perf_event_attr *a, enum perf_fault_kind kind, int user_only)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = kind_config[kind];
	a->exclude_kernel = user_only ? 1 : 0;
	a->exclude_hv = 1;
}

/*
 * The counting event.  exclude_kernel = 0 counts the faults the kernel
 * takes on user memory (copy_to_user into a fresh page); an
 * unprivileged user under perf_event_paranoid >= 2 may only have user
 * faults.
 */
static int open_count(struct perf_thread *pt, enum perf_fault_kind kind, pid_t tid)
{
	struct perf_event_attr a;

	attr_init(&a, kind, 0);
	pt->count_fd = sys_perf_event_open(&a, tid);
	if (pt->count_fd < 0 && (errno == EACCES || errno == EPERM)) {
		attr_init(&a, kind, 1);
		pt->count_fd = sys_perf_event_open(&a, tid);
		if (pt->count_fd >= 0)
			pt->user_only = 1;
	}
	return pt->count_fd < 0 ? -1 : 0;
}

/* The sampling event; falls back to ip alone before Linux 3.7. */
static int open_sample(struct perf_thread *pt, const struct perf_fault_config *c, pid_t tid)
{
	struct perf_event_attr a;

	attr_init(&a, c->kind, pt->user_only);
	a.sample_period = pt->period;
	a.sample_type = SAMPLE_BASIC | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = ARCH_PERF_REGS_MASK;
	a.sample_stack_user = (uint32_t)pt->stack_bytes;
	/* Wake up poll() at wakeup_bytes (0: when half the ring is full). */
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)c->wakeup_bytes;
	pt->sample_fd = sys_perf_event_open(&a, tid);
	if (pt->sample_fd < 0 && errno == EINVAL) {
		a.sample_type = SAMPLE_BASIC;
		a.sample_regs_user = 0;
		a.sample_stack_user = 0;
		pt->sample_fd = sys_perf_event_open(&a, tid);
	}
	if (pt->sample_fd < 0)
		return -1;
	pt->sample_type = a.sample_type;
	pt->regs_mask = a.sample_regs_user;
	pt->regs_stack = (a.sample_type & PERF_SAMPLE_STACK_USER) != 0;
	return 0;
}

/* One control page and a power of two of data pages; smaller if refused. */
static int map_ring(struct perf_thread *pt, size_t want)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t data = page;

	while (data < want)
		data <<= 1;
	for (;;) {
		void *p = mmap(NULL, page + data, PROT_READ | PROT_WRITE, MAP_SHARED,
			       pt->sample_fd, 0);

		if (p != MAP_FAILED) {
			struct perf_event_mmap_page *pg = p;

			pt->ring = p;
			pt->ring_len = page + data;
			/* data_offset/data_size: Linux >= 4.1; 0 before */
			pt->data = (unsigned char *)p + (pg->data_offset ? pg->data_offset : page);
			pt->data_size = pg->data_size ? pg->data_size : data;
			return 0;
		}
		/* the locked-memory limit (perf_event_mlock_kb, RLIMIT_MEMLOCK) */
		if ((errno != EPERM && errno != ENOMEM) || data <= 16 * page) {
			fail_stage = STAGE_MMAP;
			fail_ring_bytes = data;
			return -1;
		}
		data >>= 1;
	}
}

int perf_thread_open(struct perf_thread *pt, pid_t tid, const struct perf_fault_config *c)
{
	int err;

	memset(pt, 0, sizeof(*pt));
	pt->tid = tid;
	pt->count_fd = pt->sample_fd = pt->trip_fd = pt->trip_ended = -1;
	pt->period = c->period ? c->period : 1;
	pt->stack_bytes = (c->stack_bytes > PERF_STACK_MAX ? PERF_STACK_MAX : c->stack_bytes) &
			  ~(size_t)7;
	fail_stage = STAGE_OPEN;
	if (c->kind >= PERF_FAULTS_NKINDS) {
		errno = EINVAL;
		return -1;
	}
	if (open_count(pt, c->kind, tid) < 0 || open_sample(pt, c, tid) < 0 ||
	    map_ring(pt, c->ring_bytes ? c->ring_bytes : PERF_RING_DEFAULT) < 0) {
		err = errno;
		perf_thread_close(pt);
		errno = err;
		return -1;
	}
	return 0;
}

static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = -100;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

const char *perf_open_reason(int err)
{
	static char buf[256];
	int paranoid;

	if (fail_stage == STAGE_MMAP) {
		snprintf(buf, sizeof(buf), "cannot map a %zu KiB perf ring: %s "
			 "(the limit is kernel.perf_event_mlock_kb plus RLIMIT_MEMLOCK, "
			 "or CAP_IPC_LOCK)", fail_ring_bytes >> 10, strerror(err));
		return buf;
	}
	switch (err) {
	case EACCES:
	case EPERM:
		/* user-space faults were tried too: exclude_kernel = 1 */
		paranoid = read_paranoid();
		if (paranoid >= 3)
			snprintf(buf, sizeof(buf), "perf events refused: kernel.perf_event_paranoid "
				 "is %d, which forbids them without CAP_PERFMON (Linux >= 5.8) or "
				 "CAP_SYS_ADMIN; run with one, or set it to 2 or less "
				 "(sysctl kernel.perf_event_paranoid=2)", paranoid);
		else if (paranoid == -100)
			snprintf(buf, sizeof(buf), "perf events refused (%s): CAP_PERFMON or "
				 "CAP_SYS_ADMIN needed", strerror(err));
		else
			snprintf(buf, sizeof(buf), "perf events refused (%s): not allowed to "
				 "trace the thread (kernel.perf_event_paranoid is %d; CAP_PERFMON or "
				 "CAP_SYS_ADMIN lifts the limit)", strerror(err), paranoid);
		return buf;
	case ENOSYS:
		return "this kernel has no perf events (perf_event_open: ENOSYS; "
		       "built without CONFIG_PERF_EVENTS?)";
	case ENOENT:
	case EOPNOTSUPP:
		snprintf(buf, sizeof(buf), "this kernel has no software page-fault perf event "
			 "(perf_event_open: %s)", strerror(err));
		return buf;
	case ESRCH:
		return "the thread is gone (perf_event_open: ESRCH)";
	case EMFILE:
	case ENFILE:
		return "too many open files for one perf event per thread (ulimit -n)";
	default:
		snprintf(buf, sizeof(buf), "perf_event_open: %s", strerror(err));
		return buf;
	}
}

/* A reader over one record. */
struct rec {
	const unsigned char *p, *end;
};

static int rec_u64(struct rec *r, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < sizeof(*v))
		return -1;
	memcpy(v, r->p, sizeof(*v));
	r->p += sizeof(*v);
	return 0;
}

static int parse_sample(const struct perf_thread *pt, struct rec *r, struct perf_sample *s)
{
	uint64_t v;

	memset(s, 0, offsetof(struct perf_sample, regs));
	if (rec_u64(r, &s->ip) < 0 || rec_u64(r, &v) < 0 ||
	    rec_u64(r, &s->time) < 0 || rec_u64(r, &s->addr) < 0)
		return -1;
	s->pid = (pid_t)(uint32_t)v;
	s->tid = (pid_t)(uint32_t)(v >> 32);
	if (!(pt->sample_type & PERF_SAMPLE_REGS_USER))
		return 0;
	if (rec_u64(r, &v) < 0)
		return -1;
	if (v != PERF_SAMPLE_REGS_ABI_NONE) {
		s->have_regs = 1;
		memset(s->regs, 0, sizeof(s->regs));
		for (int i = 0; i < ARCH_PERF_NREGS; i++)
			if ((pt->regs_mask & (1ULL << i)) && rec_u64(r, &s->regs[i]) < 0)
				return -1;
	}
	if (!(pt->sample_type & PERF_SAMPLE_STACK_USER))
		return 0;
	if (rec_u64(r, &v) < 0 || v > (uint64_t)(r->end - r->p))
		return -1;
	s->stack = r->p;
	r->p += v;
	if (v) {
		uint64_t dyn;

		if (rec_u64(r, &dyn) < 0)
			return -1;
		s->stack_len = dyn < v ? (size_t)dyn : (size_t)v;
	}
	return 0;
}

static void handle_record(struct perf_thread *pt, const struct perf_event_header *h,
			  perf_sample_fn *fn, void *arg)
{
	struct rec r = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	struct perf_sample s;
	uint64_t id, n;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (parse_sample(pt, &r, &s) < 0) {
			pt->bad++;
			return;
		}
		pt->samples++;
		if (fn)
			fn(&s, arg);
		break;
	case PERF_RECORD_LOST:
		pt->lost_records++;
		if (rec_u64(&r, &id) == 0 && rec_u64(&r, &n) == 0)
			pt->lost += n;
		break;
	case PERF_RECORD_THROTTLE:
		pt->throttles++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		pt->unthrottles++;
		break;
	default:
		pt->bad++;
		break;
	}
}

uint64_t perf_thread_unread(const struct perf_thread *pt)
{
	const struct perf_event_mmap_page *pg = pt->ring;

	return pg ? __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) - pg->data_tail : 0;
}

uint64_t perf_thread_drain(struct perf_thread *pt, uint64_t max, perf_sample_fn *fn, void *arg)
{
	struct perf_event_mmap_page *pg = pt->ring;
	uint64_t before = pt->samples, head, tail, start, mask = pt->data_size - 1;

	if (!pg)
		return 0;
	/* pairs with the kernel's store of data_head after the records */
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = start = pg->data_tail;
	pt->fill = head - tail;
	while (tail < head && !(max && pt->samples - before >= max)) {
		uint64_t off = tail & mask;
		const struct perf_event_header *h = (const void *)(pt->data + off);
		size_t size = h->size;

		/* records are 8-byte aligned: a header never wraps */
		if (size < sizeof(*h) || size > head - tail) {
			pt->bad++;
			tail = head;
			break;
		}
		if (off + size > pt->data_size) {
			size_t first = (size_t)(pt->data_size - off);

			if (pt->wrap_cap < size) {
				free(pt->wrap);
				pt->wrap = xmalloc(size);
				pt->wrap_cap = size;
			}
			memcpy(pt->wrap, pt->data + off, first);
			memcpy(pt->wrap + first, pt->data, size - first);
			h = (const void *)pt->wrap;
		}
		handle_record(pt, h, fn, arg);
		tail += size;
	}
	/*
	 * The kernel went on writing while the records were read, into
	 * the room before the old tail only: the ring may have filled
	 * then, and the samples it lost be told by no record (none comes
	 * if the thread faults no more).
	 */
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	if (head - start > pt->fill)
		pt->fill = head - start;
	/* the records are read before the kernel may overwrite them */
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	pt->left = head - tail;
	return pt->samples - before;
}

int perf_thread_count(const struct perf_thread *pt, uint64_t *count)
{
	uint64_t v;

	if (pt->count_fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (read(pt->count_fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	*count = v;
	return 0;
}

double perf_sample_scale(const struct perf_thread *pt, uint64_t count)
{
	if (!pt->samples)
		return 0;
	return (double)count / (double)pt->samples;
}

int perf_thread_tripwire(struct perf_thread *pt, enum perf_fault_kind kind, uint64_t every,
			 int sig)
{
	struct perf_event_attr a;
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = pt->tid };
	int fd, fl, err;

	if (kind >= PERF_FAULTS_NKINDS || !every || !sig) {
		errno = EINVAL;
		return -1;
	}
	attr_init(&a, kind, pt->user_only);
	a.sample_period = every;
	a.sample_type = PERF_SAMPLE_IP;
	fd = sys_perf_event_open(&a, pt->tid);
	if (fd < 0)
		return -1;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0 || fcntl(fd, F_SETSIG, sig) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_ASYNC) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	pt->trip_fd = fd;
	pt->trip_every = every;
	return 0;
}

int perf_thread_is_tripwire(const struct perf_thread *pt, int signo, int code, int fd,
			    int sig)
{
	return signo == sig && code == POLL_IN && fd >= 0 &&
	       (fd == pt->trip_fd || fd == pt->trip_ended);
}

void perf_thread_tripwire_quiet(struct perf_thread *pt)
{
	int fl;

	if (pt->trip_fd < 0)
		return;
	fl = fcntl(pt->trip_fd, F_GETFL);
	if (fl >= 0 && (fl & O_ASYNC))
		fcntl(pt->trip_fd, F_SETFL, fl & ~O_ASYNC);
}

void perf_thread_tripwire_end(struct perf_thread *pt)
{
	int fd = pt->trip_fd;

	if (fd < 0)
		return;
	perf_thread_tripwire_close(pt);
	pt->trip_ended = fd;
}

void perf_thread_tripwire_close(struct perf_thread *pt)
{
	if (pt->trip_fd < 0)
		return;
	perf_thread_tripwire_quiet(pt);
	close(pt->trip_fd);
	pt->trip_fd = -1;
}

void perf_thread_close(struct perf_thread *pt)
{
	perf_thread_tripwire_close(pt);
	if (pt->ring)
		munmap(pt->ring, pt->ring_len);
	pt->ring = NULL;
	pt->data = NULL;
	if (pt->sample_fd >= 0)
		close(pt->sample_fd);
	if (pt->count_fd >= 0)
		close(pt->count_fd);
	pt->sample_fd = pt->count_fd = -1;
	free(pt->wrap);
	pt->wrap = NULL;
	pt->wrap_cap = 0;
}

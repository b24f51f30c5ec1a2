/*
 * thp.c - the bytes of a fault in a mapping of base pages (thp.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "linux/features.h"
#include "linux/procfs.h"
#include "linux/thp.h"
#include "util/clock.h"

/* <linux/fs.h> of Linux 6.7, for older headers */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

# define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
# define PAGE_IS_PRESENT (1 << 3)
# define PAGE_IS_PFNZERO (1 << 5)
# define PAGE_IS_HUGE (1 << 6)
#endif

/* /proc/kpageflags bits (<linux/kernel-page-flags.h>) */
#define KPF_ANON_BIT 12
#define KPF_HEAD_BIT 15
#define KPF_TAIL_BIT 16
#define KPF_HUGE_BIT 17
#define KPF_THP_BIT 22
#define KPF(b) (1ull << (b))

#define PM_PRESENT (1ull << 63)
#define PM_PFN ((1ull << 55) - 1)
#define PMD_DEFAULT (2u << 20)
#define MAX_WINDOW 512		/* kpageflags entries of a PMD folio */
#define REREAD_NS (10 * 1000000ull)
#define NCREDITS 64
#define NBLOCKS 64		/* PMD blocks known to be of base pages */

/* smaps_thp: the huge bytes seen in a mapping, and those not given yet */
struct credit {
	pid_t pid;
	uint64_t start;
	uint64_t seen;		/* AnonHugePages at the last read */
	uint64_t credits;	/* PMD blocks not yet given to a fault */
	uint64_t read_ns;
	int used;
	int never;		/* not eligible for huge pages: not read again */
};

static struct {
	pid_t pid;
	int pagemap_fd, kpf_fd;
	uint64_t pmd;
	int mthp;		/* a size below the PMD's may be used: -1 unknown */
	struct credit credit[NCREDITS];
	size_t next_credit;
	struct {
		pid_t pid;
		uint64_t block, round;
	} small[NBLOCKS];
	uint64_t round;
} ts = { .pagemap_fd = -1, .kpf_fd = -1, .mthp = -1, .round = 1 };

static uint64_t pmd_size(void)
{
	FILE *f;
	unsigned long long v = 0;

	if (ts.pmd)
		return ts.pmd;
	ts.pmd = PMD_DEFAULT;
	f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
	if (f) {
		if (fscanf(f, "%llu", &v) == 1 && v >= 8192 && !(v & (v - 1)))
			ts.pmd = v;
		fclose(f);
	}
	return ts.pmd;
}

/* Is "[never]" not the setting of this sysfs file? */
static int thp_setting_on(const char *path, int inherit_on)
{
	char buf[128];
	FILE *f = fopen(path, "re");
	int on = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		on = !strstr(buf, "[never]") && (!strstr(buf, "[inherit]") || inherit_on);
	fclose(f);
	return on;
}

/* May a fault be served with a large folio smaller than the PMD? */
static int mthp_possible(void)
{
	char path[128];
	int top;

	if (ts.mthp >= 0)
		return ts.mthp;
	ts.mthp = 0;
	top = thp_setting_on("/sys/kernel/mm/transparent_hugepage/enabled", 0);
	for (uint64_t kb = 8; kb * 1024 < pmd_size() && !ts.mthp; kb *= 2) {
		snprintf(path, sizeof(path),
			 "/sys/kernel/mm/transparent_hugepage/hugepages-%" PRIu64 "kB/enabled", kb);
		ts.mthp = thp_setting_on(path, top);
	}
	return ts.mthp;
}

static int pagemap_fd(pid_t pid)
{
	char path[64];

	if (ts.pid == pid && ts.pagemap_fd >= 0)
		return ts.pagemap_fd;
	if (ts.pagemap_fd >= 0)
		close(ts.pagemap_fd);
	ts.pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)procfs_live_task(pid));
	ts.pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	return ts.pagemap_fd;
}

/* pagemap_scan: 1 mapped by a PMD, 0 not, 2 not present, -1 no answer */
static int scan_huge(int fd, uint64_t page, uint64_t base)
{
	struct page_region r;
	struct pm_scan_arg arg;
	int n;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.start = page;
	arg.end = page + base;
	arg.vec = (uint64_t)(uintptr_t)&r;
	arg.vec_len = 1;
	arg.category_anyof_mask = PAGE_IS_PRESENT;
	arg.return_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO | PAGE_IS_HUGE;
	n = ioctl(fd, PAGEMAP_SCAN, &arg);
	if (n < 0) {
		if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)
			feature_lost(F_PAGEMAP_SCAN, errno);
		return -1;
	}
	if (n == 0)
		return 2;
	return (r.categories & PAGE_IS_HUGE) && !(r.categories & PAGE_IS_PFNZERO);
}

/* The pagemap entry of page: 1 present, 0 not, -1 no answer */
static int entry_of(int fd, uint64_t page, uint64_t base, uint64_t *e)
{
	if (pread(fd, e, sizeof(*e), (off_t)(page / base * sizeof(*e))) != sizeof(*e))
		return -1;
	return (*e & PM_PRESENT) != 0;
}

/*
 * kpageflags: the folio's bytes, base when not an anonymous large
 * folio, THP_NOT_PRESENT, or 0 no answer
 */
static uint64_t kpf_folio(int fd, uint64_t page, uint64_t base)
{
	uint64_t e, flags, w[MAX_WINDOW], npages = pmd_size() / base, pfn, first;
	size_t i, j;
	ssize_t got;
	int present = entry_of(fd, page, base, &e);

	if (npages > MAX_WINDOW)
		npages = MAX_WINDOW;
	if (present <= 0)
		return present < 0 ? 0 : THP_NOT_PRESENT;
	pfn = e & PM_PFN;
	if (!pfn) {
		/* frame numbers are for CAP_SYS_ADMIN only */
		feature_lost(F_KPAGEFLAGS, EPERM);
		return 0;
	}
	if (ts.kpf_fd < 0) {
		ts.kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
		if (ts.kpf_fd < 0) {
			feature_lost(F_KPAGEFLAGS, errno);
			return 0;
		}
	}
	if (pread(ts.kpf_fd, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) != sizeof(flags))
		return 0;
	if ((flags & (KPF(KPF_THP_BIT) | KPF(KPF_ANON_BIT))) !=
	    (KPF(KPF_THP_BIT) | KPF(KPF_ANON_BIT)) || (flags & KPF(KPF_HUGE_BIT)))
		return base;
	/* folios are naturally aligned: the head is in the PMD-sized window */
	first = pfn & ~(npages - 1);
	got = pread(ts.kpf_fd, w, npages * sizeof(*w), (off_t)(first * sizeof(*w)));
	if (got < (ssize_t)((pfn - first + 1) * sizeof(*w)))
		return 0;
	i = (size_t)(pfn - first);
	while (i > 0 && !(w[i] & KPF(KPF_HEAD_BIT)))
		i--;
	if (!(w[i] & KPF(KPF_HEAD_BIT)))
		return base;
	for (j = i + 1; j < (size_t)got / sizeof(*w) && (w[j] & KPF(KPF_TAIL_BIT)); j++)
		;
	return (uint64_t)(j - i) * base;
}

/*
 * AnonHugePages of the mapping that starts at start, in bytes; -1 not
 * found.  *never: its THPeligible is 0 (MADV_NOHUGEPAGE, a file...).
 */
static int64_t smaps_anon_huge(pid_t pid, uint64_t start, int *never)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int in = 0, eligible;
	int64_t got = -1;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)procfs_live_task(pid));
	f = fopen(path, "re");
	if (!f) {
		feature_lost(F_SMAPS_THP, errno);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		uint64_t lo, hi, kb;

		/* a mapping's first line; no field's name reads as "hex-hex" */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &lo, &hi) == 2) {
			if (in)
				break;
			in = lo == start;
		} else if (in && sscanf(line, "AnonHugePages: %" SCNu64 " kB", &kb) == 1) {
			got = (int64_t)(kb * 1024);
		} else if (in && sscanf(line, "THPeligible: %d", &eligible) == 1) {
			*never = !eligible;
			break;
		}
	}
	free(line);
	fclose(f);
	return got;
}

static struct credit *credit_of(pid_t pid, uint64_t start)
{
	struct credit *c;

	for (size_t i = 0; i < NCREDITS; i++)
		if (ts.credit[i].used && ts.credit[i].pid == pid && ts.credit[i].start == start)
			return &ts.credit[i];
	c = &ts.credit[ts.next_credit++ % NCREDITS];
	memset(c, 0, sizeof(*c));
	c->used = 1;
	c->pid = pid;
	c->start = start;
	return c;
}

/* smaps_thp: the PMD size when the mapping has a huge block to give */
static uint64_t smaps_fault(pid_t pid, uint64_t addr, uint64_t start, uint64_t end,
			    uint64_t base)
{
	uint64_t pmd = pmd_size(), block = addr & ~(pmd - 1), now = now_ns();
	struct credit *c;

	if (block < start || block + pmd > end)
		return base;
	c = credit_of(pid, start);
	if (c->never)
		return base;
	if (!c->credits && (!c->read_ns || now - c->read_ns >= REREAD_NS)) {
		int64_t got = smaps_anon_huge(pid, start, &c->never);

		c->read_ns = now;
		if (got >= 0 && (uint64_t)got > c->seen)
			c->credits += ((uint64_t)got - c->seen) / pmd;
		if (got >= 0)
			c->seen = (uint64_t)got;
	}
	if (!c->credits)
		return base;
	c->credits--;
	return pmd;
}

void thp_new_round(void)
{
	ts.round++;
}

uint64_t thp_fault_size(pid_t pid, uint64_t addr, uint64_t start, uint64_t end,
			uint64_t base)
{
	uint64_t page = addr & ~(base - 1), size, e, block = addr & ~(pmd_size() - 1);
	size_t slot = (size_t)(block / pmd_size()) % NBLOCKS;
	int fd, huge = -1;

	/* a block of base pages this round: no fault in it maps a huge page */
	if (ts.small[slot].pid == pid && ts.small[slot].block == block &&
	    ts.small[slot].round == ts.round)
		return base;

	fd = pagemap_fd(pid);
	if (fd >= 0 && feature_has(F_PAGEMAP_SCAN)) {
		huge = scan_huge(fd, page, base);
		if (huge == 2)
			return THP_NOT_PRESENT;
		if (huge > 0)
			return pmd_size();
		if (huge == 0 && !mthp_possible()) {
			ts.small[slot].pid = pid;
			ts.small[slot].block = block;
			ts.small[slot].round = ts.round;
		}
	}
	if (fd >= 0 && feature_has(F_KPAGEFLAGS) && (huge < 0 || mthp_possible())) {
		size = kpf_folio(fd, page, base);
		if (size)
			return size;
	}
	if (huge < 0 && feature_has(F_SMAPS_THP) && !feature_has(F_KPAGEFLAGS)) {
		if (fd >= 0 && entry_of(fd, page, base, &e) == 0)
			return THP_NOT_PRESENT;
		return smaps_fault(pid, addr, start, end, base);
	}
	return base;
}

void thp_release(void)
{
	if (ts.pagemap_fd >= 0)
		close(ts.pagemap_fd);
	if (ts.kpf_fd >= 0)
		close(ts.kpf_fd);
	ts.pagemap_fd = ts.kpf_fd = -1;
	ts.pid = 0;
	memset(ts.credit, 0, sizeof(ts.credit));
	ts.next_credit = 0;
	memset(ts.small, 0, sizeof(ts.small));
}

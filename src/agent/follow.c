/*
 * follow.c - memtap agent's selectors matched against /proc (follow.h).
 *
 * Everything read here is the target's or the kernel's text about it:
 * each file is read once, bounded, and parsed from its end where the
 * target chooses the start (the comm in /proc/PID/stat).  A process is
 * known by its pid and its start time (field 22 of /proc/PID/stat), so
 * that a pid used again by another process is a new process.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/follow.h"
#include "linux/procfs.h"
#include "trace/tracer.h"
#include "util/error.h"
#include "util/xmalloc.h"

#define PF_KTHREAD 0x00200000UL

/*
 * F_GONE: a traced process that exited or was let go; kept, with its
 * selector, until follow_forget_ended(), so that the samples of its
 * last interval are still its selector's when that interval is pushed.
 */
enum { F_TRACED, F_REFUSED, F_GONE };

struct followed {
	pid_t pid;
	uint64_t start;		/* start time, clock ticks after boot */
	int sel;		/* selector index */
	int state;		/* F_* */
	char comm[16];
};

static const struct selector *sels;
static size_t nsels;
static unsigned max_targets;
static double poll_s;
static struct followed *fl;
static size_t nfl, capfl;
static int *said_waiting;	/* per selector: "matches nothing" said */
static uint64_t *pid_start;	/* SEL_PID: the start time first seen, 0 none */
static int said_cap;		/* the --max-targets warning, once per excess */

int selector_parse(struct selector *sel, enum sel_kind kind, const char *value, char *err,
		   size_t size)
{
	static const char *const kinds[SEL_CGROUP + 1] = { "pid", "comm", "exe", "cgroup" };
	const char *v = value, *base;

	memset(sel, 0, sizeof(*sel));
	if ((unsigned)kind > SEL_CGROUP) {
		snprintf(err, size, "unknown selector kind %d", (int)kind);
		return -1;
	}
	sel->kind = kind;
	if (!*value) {
		snprintf(err, size, "empty value for --%s", kinds[kind]);
		return -1;
	}
	switch (kind) {
	case SEL_PID: {
		char *end;
		long n;

		errno = 0;
		n = strtol(value, &end, 10);
		if (errno || *end || n < 1 || n > 0x3fffffff) {
			snprintf(err, size, "invalid PID '%s' for -p (want a decimal process id)",
				 value);
			return -1;
		}
		sel->pid = (pid_t)n;
		break;
	}
	case SEL_COMM:
		if (strlen(value) > 15 || strchr(value, '\n')) {
			snprintf(err, size, "invalid name '%s' for --comm: the kernel keeps 15 "
				 "bytes of a process's name, without a newline", value);
			return -1;
		}
		break;
	case SEL_EXE:
		if (value[0] != '/') {
			snprintf(err, size, "invalid path '%s' for --exe: give the absolute path "
				 "of the program (as /proc/PID/exe shows it)", value);
			return -1;
		}
		break;
	case SEL_CGROUP:
		if (!strncmp(v, "/sys/fs/cgroup/unified/", 23))
			v += 22;
		else if (!strncmp(v, "/sys/fs/cgroup/", 15))
			v += 14;
		if (v[0] != '/') {
			snprintf(err, size, "invalid cgroup '%s' for --cgroup: give its path, as "
				 "/proc/PID/cgroup shows it (/system.slice/NAME.service) or "
				 "under /sys/fs/cgroup", value);
			return -1;
		}
		break;
	}
	sel->value = v;
	sel->name = xasprintf("%s=%s", kinds[kind], kind == SEL_PID ? value : v);
	base = strrchr(v, '/');
	base = base && base[1] ? base + 1 : v;
	if (kind == SEL_PID)
		sel->service = xasprintf("pid-%s", value);
	else if (kind == SEL_CGROUP && strlen(base) > 8 &&
		 !strcmp(base + strlen(base) - 8, ".service"))
		sel->service = xasprintf("%.*s", (int)(strlen(base) - 8), base);
	else
		sel->service = xstrdup(kind == SEL_COMM ? v : base);
	return 0;
}

void follow_init(const struct selector *sel, size_t nsel, unsigned max, double poll)
{
	sels = sel;
	nsels = nsel;
	max_targets = max;
	poll_s = poll;
	said_waiting = xcalloc(nsel ? nsel : 1, sizeof(*said_waiting));
	pid_start = xcalloc(nsel ? nsel : 1, sizeof(*pid_start));
}

/* Read a small /proc file whole into buf (NUL-terminated); its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n, len = 0;

	if (fd < 0)
		return -1;
	while ((size_t)len + 1 < size && (n = read(fd, buf + len, size - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* Is some cgroup of pid (any hierarchy) want, or below it? */
static int cgroup_matches(pid_t pid, const char *want)
{
	char path[64], buf[4096], *save = NULL;
	size_t wl = strlen(want);

	while (wl > 1 && want[wl - 1] == '/')
		wl--;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return 0;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strchr(line, ':');

		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		p++;
		if (!strncmp(p, want, wl) && (p[wl] == '\0' || p[wl] == '/' || wl == 1))
			return 1;
	}
	return 0;
}

/* The first selector pid matches, or -1.  start: its start time. */
static int match(pid_t pid, uint64_t start)
{
	char path[64], comm[32] = "", exe[PATH_MAX];
	ssize_t n;
	int have_comm = 0, have_exe = 0;

	for (size_t i = 0; i < nsels; i++) {
		const struct selector *s = &sels[i];

		switch (s->kind) {
		case SEL_PID:
			if (s->pid == pid && (!pid_start[i] || pid_start[i] == start))
				return (int)i;
			break;
		case SEL_COMM:
			if (!have_comm++) {
				snprintf(path, sizeof(path), "/proc/%d/comm", pid);
				if (read_small(path, comm, sizeof(comm)) < 0)
					comm[0] = '\0';
				comm[strcspn(comm, "\n")] = '\0';
			}
			if (!strcmp(comm, s->value))
				return (int)i;
			break;
		case SEL_EXE:
			if (!have_exe++) {
				snprintf(path, sizeof(path), "/proc/%d/exe", pid);
				n = readlink(path, exe, sizeof(exe) - 1);
				exe[n > 0 ? n : 0] = '\0';
			}
			if (!strcmp(exe, s->value))
				return (int)i;
			break;
		case SEL_CGROUP:
			if (cgroup_matches(pid, s->value))
				return (int)i;
			break;
		}
	}
	return -1;
}

/* The entry of pid, gone ones (F_GONE) only when nothing else has it. */
static struct followed *find(pid_t pid)
{
	struct followed *gone = NULL;

	for (size_t i = 0; i < nfl; i++)
		if (fl[i].pid == pid) {
			if (fl[i].state != F_GONE)
				return &fl[i];
			gone = &fl[i];
		}
	return gone;
}

/* Start time of pid, 0 when gone; state and flags of /proc/PID/stat. */
static uint64_t start_time(pid_t pid, char *state, unsigned long *flags)
{
	uint64_t start;

	if (procfs_stat_fields(pid, 22, 1, &start) < 0 ||
	    procfs_stat_state(pid, state, flags) < 0)
		return 0;
	return start ? start : 1;
}

/*
 * The processes no longer followed: a traced one that exited or was
 * detached is F_GONE (forgotten by follow_forget_ended()), a refused one
 * that exited is forgotten.
 */
static void forget_gone(void)
{
	size_t j = 0;

	for (size_t i = 0; i < nfl; i++) {
		struct followed *f = &fl[i];
		char state;
		unsigned long flags;
		int gone = 0;

		if (f->state == F_TRACED) {
			if (!tracer_traces(f->pid)) {
				info_msg("process %d (%s) of %s is gone", f->pid, f->comm,
					 sels[f->sel].name);
				f->state = F_GONE;
			}
		} else if (f->state == F_REFUSED) {
			gone = start_time(f->pid, &state, &flags) != f->start;
		}
		if (!gone)
			fl[j++] = *f;
	}
	nfl = j;
}

void follow_forget_ended(void)
{
	size_t j = 0;

	forget_gone();
	for (size_t i = 0; i < nfl; i++)
		if (fl[i].state != F_GONE)
			fl[j++] = fl[i];
	nfl = j;
}

static unsigned traced_count(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < nfl; i++)
		n += fl[i].state == F_TRACED;
	return n;
}

static void consider(pid_t pid, unsigned *over)
{
	char state, err[1024];
	unsigned long flags;
	uint64_t start;
	struct followed *f;
	int sel, traced;

	f = find(pid);
	if (pid == getpid() || (f && f->state != F_GONE))
		return;
	start = start_time(pid, &state, &flags);
	if (!start || (flags & PF_KTHREAD) || state == 'Z' || state == 'X')
		return;
	sel = match(pid, start);
	if (sel < 0)
		return;
	traced = tracer_traces(pid);	/* a fork child of one followed */
	if (!traced && traced_count() >= max_targets) {
		(*over)++;
		return;
	}
	fl = xgrowarray(fl, &capfl, nfl + 1, sizeof(*fl));
	f = &fl[nfl++];
	memset(f, 0, sizeof(*f));
	f->pid = pid;
	f->start = start;
	f->sel = sel;
	procfs_read_comm(pid, f->comm, sizeof(f->comm));
	if (sels[sel].kind == SEL_PID)
		pid_start[sel] = start;
	if (traced || tracer_attach_soft(pid, err, sizeof(err)) == 0) {
		f->state = F_TRACED;
		if (!traced)
			info_msg("following process %d (%s) for %s", pid, f->comm, sels[sel].name);
		said_waiting[sel] = 0;
		return;
	}
	f->state = F_REFUSED;
	warn_msg("%s: %s (not tried again while it runs)", sels[sel].name, err);
}

void follow_scan(void)
{
	DIR *d;
	struct dirent *de;
	unsigned over = 0;

	forget_gone();
	d = opendir("/proc");
	if (!d) {
		warn_msg("cannot read /proc: %s", strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid > 0x3fffffff)
			continue;
		consider((pid_t)pid, &over);
	}
	closedir(d);
	if (over && !said_cap)
		warn_msg("%u more processes match than --max-targets (%u) lets memtap follow: "
			 "they are not followed", over, max_targets);
	said_cap = over != 0;
	for (size_t i = 0; i < nsels; i++) {
		int any = 0;

		for (size_t j = 0; j < nfl && !any; j++)
			any = fl[j].sel == (int)i && fl[j].state == F_TRACED;
		if (!any && !said_waiting[i])
			info_msg("no process of %s is followed: waiting for one (every %g s)",
				 sels[i].name, poll_s);
		said_waiting[i] = !any;
	}
}

unsigned follow_count(void)
{
	return traced_count();
}

int follow_selector_of(pid_t pid, pid_t (*parent)(pid_t pid))
{
	for (int depth = 0; pid > 0 && depth < 64; depth++) {
		const struct followed *f = find(pid);

		if (f && (f->state == F_TRACED || f->state == F_GONE))
			return f->sel;
		pid = parent(pid);
	}
	return -1;
}

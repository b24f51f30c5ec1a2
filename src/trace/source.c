/*
 * source.c - the registered sources of events, and the loop's view of
 * them: ptrace stops offered in order, fds to poll, drain times (see
 * source.h).
 */
#include "config.h"

#include <errno.h>

#include "trace/memtap.h"
#include "trace/source.h"
#include "util/error.h"

static struct source {
	const struct source_ops *ops;
	void *self;
} sources[SOURCES_MAX];
static size_t nsources;

void source_register(const struct source_ops *ops, void *self)
{
	if (nsources == SOURCES_MAX)
		error_msg_and_die("too many sources of events (%d): cannot add '%s'",
				  SOURCES_MAX, ops->name);
	sources[nsources].ops = ops;
	sources[nsources].self = self;
	nsources++;
}

enum stop_verdict sources_stop(struct thread *tcp, int status)
{
	for (size_t i = 0; i < nsources; i++) {
		const struct source *s = &sources[i];
		enum stop_verdict v;

		if (!s->ops->stop)
			continue;
		v = s->ops->stop(s->self, tcp, status);
		if (v != STOP_NOT_MINE)
			return v;
	}
	return STOP_NOT_MINE;
}

static int source_fd(const struct source *s)
{
	return s->ops->fd ? s->ops->fd(s->self) : -1;
}

size_t sources_pollfds(struct pollfd *pfd)
{
	size_t n = 0;

	for (size_t i = 0; i < nsources; i++) {
		int fd = source_fd(&sources[i]);

		if (fd < 0)
			continue;
		pfd[n].fd = fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

static uint64_t source_next_ns(const struct source *s)
{
	return s->ops->next_drain_ns ? s->ops->next_drain_ns(s->self) : 0;
}

uint64_t sources_next_ns(void)
{
	uint64_t next = 0;

	for (size_t i = 0; i < nsources; i++) {
		uint64_t t = source_next_ns(&sources[i]);

		if (t && (!next || t < next))
			next = t;
	}
	return next;
}

/* Is s's fd readable now? */
static int fd_ready(const struct source *s)
{
	struct pollfd pfd = { .fd = source_fd(s), .events = POLLIN };

	if (pfd.fd < 0)
		return 0;
	while (poll(&pfd, 1, 0) < 0)
		if (errno != EINTR)
			return 0;
	return (pfd.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

size_t sources_drain(uint64_t now)
{
	size_t n = 0;

	for (size_t i = 0; i < nsources; i++) {
		const struct source *s = &sources[i];
		uint64_t t;

		if (!s->ops->drain)
			continue;
		t = source_next_ns(s);
		if ((t && t <= now) || fd_ready(s)) {
			s->ops->drain(s->self);
			n++;
		}
	}
	return n;
}

/* Member m of each source that has it, in order: m(self, ...). */
#define EACH(m, ...)								\
	do {									\
		for (size_t i = 0; i < nsources; i++)				\
			if (sources[i].ops->m)					\
				sources[i].ops->m(sources[i].self, ##__VA_ARGS__);	\
	} while (0)

void sources_detach(void)
{
	EACH(detach);
}

void sources_settle(void)
{
	EACH(settle);
}

void sources_thread_new(struct thread *tcp)
{
	EACH(thread_new, tcp);
}

void sources_thread_exit(struct thread *tcp)
{
	EACH(thread_exit, tcp);
}

void sources_thread_gone(struct thread *tcp)
{
	EACH(thread_gone, tcp);
}

int sources_hold(struct thread *tcp)
{
	for (size_t i = 0; i < nsources; i++)
		if (sources[i].ops->hold && sources[i].ops->hold(sources[i].self, tcp))
			return 1;
	return 0;
}

int sources_release(struct thread *tcp)
{
	int any = 0;

	/* every source: each turns its own signals off */
	for (size_t i = 0; i < nsources; i++)
		if (sources[i].ops->release && sources[i].ops->release(sources[i].self, tcp))
			any = 1;
	return any;
}

void sources_round_end(void)
{
	EACH(round_end);
}

void sources_execve_entry(struct thread *tcp)
{
	EACH(execve_entry, tcp);
}

void sources_exec(pid_t pid)
{
	EACH(exec, pid);
}

int sources_attach(struct proc *p)
{
	int any = 0;

	for (size_t i = 0; i < nsources; i++)
		if (sources[i].ops->attach && sources[i].ops->attach(sources[i].self, p))
			any = 1;
	return any;
}

void sources_new_task(struct thread *tcp, struct proc *child, int event)
{
	EACH(new_task, tcp, child, event);
}

enum life_verdict sources_event_stop(struct thread *tcp, int first, int group)
{
	for (size_t i = 0; i < nsources; i++) {
		const struct source *s = &sources[i];
		enum life_verdict v;

		if (s->ops->event_stop && (v = s->ops->event_stop(s->self, tcp, first, group)))
			return v;
	}
	return LIFE_RESUME;
}

enum life_verdict sources_exec_stop(struct thread *tcp)
{
	for (size_t i = 0; i < nsources; i++) {
		const struct source *s = &sources[i];
		enum life_verdict v;

		if (s->ops->exec_stop && (v = s->ops->exec_stop(s->self, tcp)))
			return v;
	}
	return LIFE_RESUME;
}

int sources_flush_thread(struct thread *tcp)
{
	int any = 0;

	for (size_t i = 0; i < nsources; i++)
		if (sources[i].ops->flush_thread &&
		    sources[i].ops->flush_thread(sources[i].self, tcp))
			any = 1;
	return any;
}

void sources_syscall_stop(struct thread *tcp)
{
	EACH(syscall_stop, tcp);
}

void sources_code_mapped(struct thread *tcp)
{
	EACH(code_mapped, tcp);
}

void sources_fix_stack(struct thread *tcp, struct stack_snapshot *snap)
{
	EACH(fix_stack, tcp, snap);
}

/* Does a source's member m say 1? */
#define ANY(m, ...)							\
	do {								\
		for (size_t i = 0; i < nsources; i++)			\
			if (sources[i].ops->m &&			\
			    sources[i].ops->m(sources[i].self, ##__VA_ARGS__))	\
				return 1;				\
		return 0;						\
	} while (0)

int sources_arming(void)
{
	ANY(arming);
}

int sources_in_target(void)
{
	ANY(in_target);
}

int sources_use_proc(const struct proc *p)
{
	ANY(uses_proc, p);
}

void sources_run_info(struct run_info *ri)
{
	EACH(run_info, ri);
}

void sources_final(void)
{
	EACH(final);
}

/* The source that has things in p's address space, or NULL. */
static const struct source *space_source(const struct proc *p, const void **space)
{
	for (size_t i = 0; i < nsources; i++)
		if (sources[i].ops->space && (*space = sources[i].ops->space(sources[i].self, p)))
			return &sources[i];
	*space = NULL;
	return NULL;
}

const void *sources_space(const struct proc *p)
{
	const void *space;

	space_source(p, &space);
	return space;
}

int sources_park(struct thread *tcp)
{
	const void *space;
	const struct source *s = space_source(tcp->proc, &space);

	return s && s->ops->park ? s->ops->park(s->self, tcp) : 0;
}

void sources_remove(const void *space, struct thread *good, struct thread *const *all,
		    size_t n)
{
	const void *own;
	const struct source *s = space_source(good->proc, &own);

	if (s && own == space && s->ops->remove)
		s->ops->remove(s->self, space, good, all, n);
}

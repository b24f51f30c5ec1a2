/*
 * source-unit - the sources of events as the loop serves them
 * (src/trace/source.c), with test-only sources: ptrace stops offered in
 * registration order until one claims them; an fd source's fd in the
 * poll set, drained once readable, after poll() woke for it; a timed
 * source drained once its time has come; threads and images told to
 * every source in order, a stop held by the first that keeps it;
 * detach() at the end.  Prints
 * "ok" or what differs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "trace/source.h"

static int failures;

#define CHECK(cond, ...) do {				\
	if (!(cond)) {					\
		printf("FAIL line %d: ", __LINE__);	\
		printf(__VA_ARGS__);			\
		printf("\n");				\
		failures++;				\
	}						\
} while (0)

/* Claims SIGTRAP signal-delivery-stops (a breakpoint source). */
static int trap_stops;

static enum stop_verdict trap_stop(void *self, struct thread *tcp, int status)
{
	(void)self;
	(void)tcp;
	if (!WIFSTOPPED(status) || (unsigned)status >> 16 || WSTOPSIG(status) != SIGTRAP)
		return STOP_NOT_MINE;
	trap_stops++;
	return STOP_RESUME;
}

static const struct source_ops trap_ops = { .name = "trap", .stop = trap_stop };

/* A ring: the read end of a pipe; drain reads every byte written. */
struct ring {
	int fd[2];
	size_t bytes, drains;
	int detached;
};

static int ring_fd(void *self)
{
	return ((struct ring *)self)->fd[0];
}

static void ring_drain(void *self)
{
	struct ring *r = self;
	char buf[64];
	ssize_t n;

	r->drains++;
	while ((n = read(r->fd[0], buf, sizeof(buf))) > 0)
		r->bytes += (size_t)n;
}

static void ring_detach(void *self)
{
	struct ring *r = self;

	ring_drain(r);
	r->detached = 1;
}

static const struct source_ops ring_ops = {
	.name = "ring", .fd = ring_fd, .drain = ring_drain, .detach = ring_detach,
};

/* A timed source: drained when its time has come, then every period. */
struct timed {
	uint64_t next, period;
	size_t drains;
};

static uint64_t timed_next(void *self)
{
	return ((struct timed *)self)->next;
}

static void timed_drain(void *self)
{
	struct timed *t = self;

	t->drains++;
	t->next += t->period;
}

static const struct source_ops timed_ops = {
	.name = "timed", .next_drain_ns = timed_next, .drain = timed_drain,
};

/* Claims every stop offered to it: registered last, it sees what the others leave. */
static int rest_stops;

static enum stop_verdict rest_stop(void *self, struct thread *tcp, int status)
{
	(void)self;
	(void)tcp;
	(void)status;
	rest_stops++;
	return STOP_KEPT;
}

static const struct source_ops rest_ops = { .name = "rest", .stop = rest_stop };

/*
 * Told of threads and images (a source with events per thread): counts
 * each call; holds the threads in hold_tcp, and lets them go in
 * round_end().  Two of them, so that the calls are seen in order.
 */
struct life {
	int id;
	int news, exits, gones, holds, rounds, execves, execs;
	struct thread *hold_tcp;
	pid_t exec_pid;
};

static int order[16], norder;

static void life_note(struct life *l)
{
	if (norder < 16)
		order[norder++] = l->id;
}

static void life_thread_new(void *self, struct thread *tcp)
{
	(void)tcp;
	((struct life *)self)->news++;
	life_note(self);
}

static void life_thread_exit(void *self, struct thread *tcp)
{
	(void)tcp;
	((struct life *)self)->exits++;
	life_note(self);
}

static void life_thread_gone(void *self, struct thread *tcp)
{
	(void)tcp;
	((struct life *)self)->gones++;
	life_note(self);
}

static int life_hold(void *self, struct thread *tcp)
{
	struct life *l = self;

	l->holds++;
	life_note(l);
	return tcp && tcp == l->hold_tcp;
}

static void life_round_end(void *self)
{
	struct life *l = self;

	l->rounds++;
	l->hold_tcp = NULL;
	life_note(l);
}

static void life_execve_entry(void *self, struct thread *tcp)
{
	(void)tcp;
	((struct life *)self)->execves++;
	life_note(self);
}

static void life_exec(void *self, pid_t pid)
{
	struct life *l = self;

	l->execs++;
	l->exec_pid = pid;
	life_note(l);
}

static const struct source_ops life_ops = {
	.name = "life", .thread_new = life_thread_new, .thread_exit = life_thread_exit,
	.thread_gone = life_thread_gone, .hold = life_hold, .round_end = life_round_end,
	.execve_entry = life_execve_entry, .exec = life_exec,
};

/* "12": the sources told, in order, since the last call. */
static const char *order_text(void)
{
	static char buf[17];

	for (int i = 0; i < norder; i++)
		buf[i] = (char)('0' + order[i]);
	buf[norder] = '\0';
	norder = 0;
	return buf;
}

/* A wait status as waitpid() gives it for a stop by sig, with event. */
static int stop_status(int sig, int event)
{
	return (event << 16) | (sig << 8) | 0x7f;
}

int main(void)
{
	struct ring ring = { .fd = { -1, -1 } };
	struct timed timed = { .next = 1000, .period = 500 };
	struct life one = { .id = 1 }, two = { .id = 2 };
	struct thread *t1 = (struct thread *)&one, *t2 = (struct thread *)&two;	/* opaque */
	const char *o;
	struct pollfd pfd[SOURCES_MAX];
	size_t n;
	pid_t pid;

	if (pipe2(ring.fd, O_NONBLOCK | O_CLOEXEC) < 0) {
		perror("pipe2");
		return 1;
	}
	source_register(&trap_ops, NULL);
	source_register(&ring_ops, &ring);
	source_register(&timed_ops, &timed);
	source_register(&rest_ops, NULL);
	source_register(&life_ops, &one);
	source_register(&life_ops, &two);

	/* ptrace stops: in order, until one claims the stop */
	CHECK(sources_stop(NULL, stop_status(SIGTRAP, 0)) == STOP_RESUME, "SIGTRAP not resumed");
	CHECK(trap_stops == 1 && rest_stops == 0, "SIGTRAP: trap %d, rest %d", trap_stops,
	      rest_stops);
	CHECK(sources_stop(NULL, stop_status(SIGTRAP | 0x80, 0)) == STOP_KEPT,
	      "syscall stop not kept");
	CHECK(trap_stops == 1 && rest_stops == 1, "syscall stop: trap %d, rest %d", trap_stops,
	      rest_stops);

	/* the poll set: the ring's fd alone; the next drain: the timed one's */
	n = sources_pollfds(pfd);
	CHECK(n == 1 && pfd[0].fd == ring.fd[0] && pfd[0].events == POLLIN,
	      "poll set: %zu fds, first %d", n, n ? pfd[0].fd : -1);
	CHECK(sources_next_ns() == 1000, "next drain at %llu, want 1000",
	      (unsigned long long)sources_next_ns());

	/* nothing ready, nothing due */
	CHECK(sources_drain(999) == 0, "drained with nothing ready");
	CHECK(ring.drains == 0 && timed.drains == 0, "ring %zu, timed %zu drains", ring.drains,
	      timed.drains);

	/* due: the timed source alone */
	CHECK(sources_drain(1000) == 1 && timed.drains == 1 && ring.drains == 0,
	      "at its time: timed %zu, ring %zu drains", timed.drains, ring.drains);
	CHECK(sources_next_ns() == 1500, "next drain at %llu, want 1500",
	      (unsigned long long)sources_next_ns());

	/*
	 * Another process writes to the ring while we sleep in poll() on
	 * the poll set, as the loop does: poll wakes, and the ring alone is
	 * drained, every byte of it.
	 */
	pid = fork();
	if (pid == 0) {
		usleep(50000);
		if (write(ring.fd[1], "0123456789", 10) != 10)
			_exit(1);
		_exit(0);
	}
	n = sources_pollfds(pfd);
	while (poll(pfd, n, -1) < 0)
		if (errno != EINTR) {
			perror("poll");
			return 1;
		}
	CHECK(pfd[0].revents & POLLIN, "poll woke without POLLIN");
	CHECK(sources_drain(1001) == 1 && ring.drains == 1 && ring.bytes == 10,
	      "ring: %zu drains, %zu bytes", ring.drains, ring.bytes);
	CHECK(timed.drains == 1, "timed drained before its time");
	waitpid(pid, NULL, 0);

	/* threads and images: every source told, in registration order */
	sources_thread_new(t1);
	sources_thread_exit(t1);
	sources_thread_gone(t1);
	sources_execve_entry(t1);
	sources_exec(42);
	o = order_text();
	CHECK(!strcmp(o, "1212121212"), "told in the order %s, want 1212121212", o);
	CHECK(one.news == 1 && two.news == 1 && one.exits == 1 && two.exits == 1 &&
	      one.gones == 1 && two.gones == 1 && one.execves == 1 && two.execves == 1,
	      "thread calls: new %d/%d, exit %d/%d, gone %d/%d, execve %d/%d", one.news,
	      two.news, one.exits, two.exits, one.gones, two.gones, one.execves, two.execves);
	CHECK(one.execs == 1 && two.execs == 1 && one.exec_pid == 42 && two.exec_pid == 42,
	      "exec: %d/%d, pid %d/%d", one.execs, two.execs, (int)one.exec_pid,
	      (int)two.exec_pid);

	/* hold: offered in order until one keeps the thread; none: 0 */
	CHECK(sources_hold(t1) == 0, "a thread held that nobody wanted");
	o = order_text();
	CHECK(!strcmp(o, "12"), "hold offered in the order %s, want 12", o);
	one.hold_tcp = t1;
	two.hold_tcp = t1;
	CHECK(sources_hold(t1) == 1, "thread not held");
	o = order_text();
	CHECK(!strcmp(o, "1"), "hold offered past the first taker: %s", o);
	two.hold_tcp = t2;
	CHECK(sources_hold(t2) == 1, "thread of the second not held");
	o = order_text();
	CHECK(!strcmp(o, "12"), "hold for the second offered in the order %s, want 12", o);
	sources_round_end();
	o = order_text();
	CHECK(!strcmp(o, "12") && !one.hold_tcp && !two.hold_tcp,
	      "round end told in the order %s, want 12", o);

	/* written and never drained by the loop: detach() has the last word */
	if (write(ring.fd[1], "abc", 3) != 3)
		return 1;
	sources_detach();
	CHECK(ring.detached && ring.bytes == 13, "detach: %d, %zu bytes", ring.detached,
	      ring.bytes);

	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

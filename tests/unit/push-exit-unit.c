/*
 * push-exit-unit.c - src/agent/push.c at exit: push_stop()'s time cut
 * short by push_cut_short() from a signal handler (as memtap agent's
 * second SIGTERM does) and before it, and a sender that does not end
 * when told, left behind:
 *
 *   push-exit-unit WORKDIR
 *
 * The server takes connections and never answers (a socket that
 * listens, in this process); "stuck.invalid" is a host whose name
 * lookup does not return for 60 s (getaddrinfo() wrapped: ld --wrap).
 * Every case has --push-drain's time far longer than its bound on "it
 * ended"; the profile waiting must be in the spool.  Prints "FAIL ..."
 * per failed check and "ok" at the end when none failed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "agent/push.h"
#include "unit-check.h"

static const char *work;

int __real_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		       struct addrinfo **res);
int __wrap_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		       struct addrinfo **res);

int __wrap_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		       struct addrinfo **res)
{
	if (node && !strcmp(node, "stuck.invalid")) {
		sleep(60);
		return EAI_AGAIN;
	}
	return __real_getaddrinfo(node, service, hints, res);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A server that takes connections and never answers; its URL in url. */
static int mute_server(char *url, size_t size)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0) {
		printf("FAIL: mute server: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(url, size, "http://127.0.0.1:%d", ntohs(a.sin_port));
	return s;
}

static void start(const char *url, const char *spool)
{
	struct push_config c = { .url = url, .spool_dir = spool, .spool_max = 3600 };
	char err[512];

	if (push_start(&c, err, sizeof(err)) < 0) {
		printf("FAIL: push_start %s: %s\n", url, err);
		exit(1);
	}
}

/* One profile (not a valid pprof: the server never reads it). */
static void submit(void)
{
	const char *labels[] = { "hostname", "h1", NULL };
	int64_t t = time(NULL);

	push_submit("profile", 7, "app", labels, t - 20, t - 10);
}

/* The spool files in dir, each checked to start as a spool file does. */
static int spooled_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[1024], head[32] = "";
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (f && fgets(head, sizeof(head), f) && !strcmp(head, "memtap-push 1\n") &&
		    fgets(head, 9, f) && !strcmp(head, "/ingest?"))
			n++;
		else
			CHECK(0, "%s: not a spool file", path);
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

static void on_alarm(int sig)
{
	(void)sig;
	push_cut_short();
}

/* push_stop(drain) with the spool dir/name: its seconds */
static double stop_timed(double drain)
{
	double t = now_s();

	push_stop(drain);
	return now_s() - t;
}

/* (a) a signal in push_stop(600): it ends at once, the profile spooled */
static void case_signal(const char *url)
{
	struct itimerval it = { .it_value = { 0, 300000 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct push_stats st;
	char spool[1024];
	double t;

	snprintf(spool, sizeof(spool), "%s/spool-signal", work);
	start(url, spool);
	submit();
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	t = stop_timed(600);
	push_get_stats(&st);
	printf("a signal 0.3 s into push_stop(600): it returned after %.2f s\n", t);
	CHECK(t < 60, "push_stop(600) cut short at 0.3 s took %.1f s", t);
	CHECK(st.pushed == 0 && st.spooled == 1 && st.dropped == 0,
	      "signal: pushed %" PRIu64 " spooled %" PRIu64 " dropped %" PRIu64, st.pushed,
	      st.spooled, st.dropped);
	CHECK(spooled_files(spool) == 1, "%s: %d spool files, want 1", spool, spooled_files(spool));
}

/* (b) cut short before push_stop(600): nothing more tried, spooled; no spool: dropped */
static void case_before(const char *url)
{
	struct push_stats st;
	char spool[1024];
	double t;

	snprintf(spool, sizeof(spool), "%s/spool-before", work);
	start(url, spool);
	submit();
	push_cut_short();
	submit();		/* the last interval's, after the signal */
	t = stop_timed(600);
	push_get_stats(&st);
	printf("cut short before push_stop(600): it returned after %.2f s\n", t);
	CHECK(t < 60, "push_stop(600) cut short before took %.1f s", t);
	CHECK(st.pushed == 0 && st.spooled == 2 && st.dropped == 0,
	      "before: pushed %" PRIu64 " spooled %" PRIu64 " dropped %" PRIu64, st.pushed,
	      st.spooled, st.dropped);
	CHECK(spooled_files(spool) == 2, "%s: %d spool files, want 2", spool, spooled_files(spool));

	start(url, NULL);
	submit();
	push_cut_short();
	t = stop_timed(600);
	push_get_stats(&st);
	CHECK(t < 60, "push_stop(600) without a spool, cut short before, took %.1f s", t);
	CHECK(st.pushed == 0 && st.spooled == 0 && st.dropped == 1,
	      "no spool: pushed %" PRIu64 " spooled %" PRIu64 " dropped %" PRIu64, st.pushed,
	      st.spooled, st.dropped);
}

/*
 * (c) the sender in a name lookup that does not return: push_stop(0.5)
 * returns without it, the profile it holds and the one behind it spooled
 */
static void case_stuck(void)
{
	struct push_stats st;
	char spool[1024];
	double t;

	snprintf(spool, sizeof(spool), "%s/spool-stuck", work);
	start("http://stuck.invalid:4040", spool);
	submit();
	submit();
	usleep(300000);		/* the first taken, in its lookup */
	t = stop_timed(0.5);
	push_get_stats(&st);
	printf("the sender in a 60 s name lookup, push_stop(0.5): it returned after %.2f s\n", t);
	CHECK(t < 30, "push_stop(0.5) with the sender in its lookup took %.1f s", t);
	CHECK(st.pushed == 0 && st.spooled == 2 && st.dropped == 0,
	      "stuck: pushed %" PRIu64 " spooled %" PRIu64 " dropped %" PRIu64, st.pushed,
	      st.spooled, st.dropped);
	CHECK(spooled_files(spool) == 2, "%s: %d spool files, want 2", spool, spooled_files(spool));
	CHECK(push_start(&(struct push_config){ .url = "http://127.0.0.1:1" }, (char[256]){ 0 },
			 256) < 0, "push_start() while the sender left behind runs");
}

int main(int argc, char **argv)
{
	char url[64];
	int s;

	if (argc < 2) {
		fprintf(stderr, "usage: push-exit-unit WORKDIR\n");
		return 2;
	}
	work = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	s = mute_server(url, sizeof(url));
	case_signal(url);
	case_before(url);
	case_stuck();		/* last: the sender left behind stays */
	close(s);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * push-unit.c - src/agent/push.c and src/util/http-client.c against
 * tests/pyroscope-recv.py, a local receiver of Pyroscope's /ingest:
 *
 *   push-unit RECV.py WORKDIR
 *
 * Each case starts its own receiver (python3, on 127.0.0.1) in a folder
 * of WORKDIR, pushes canned profiles (inuse 1000 + i, alloc 2000 + i
 * bytes, label seq=i) and checks what arrived from the receiver's log;
 * tests/push.test then decodes the bodies kept.  Prints "FAIL ..." per
 * failed check and "ok" at the end when none failed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/push.h"
#include "report/output.h"
#include "util/http-client.h"
#include "unit-check.h"

static const char *recv_py, *work;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *path_of(const char *dir, const char *name)
{
	static char buf[4][1024];
	static int k;

	k = (k + 1) % 4;
	if ((size_t)snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name) >= sizeof(buf[k]))
		buf[k][0] = '\0';
	return buf[k];
}

/* Start a receiver in work/name; its pid, *port set. */
static const char *recv_extra[8];	/* more arguments for the next receiver */

static pid_t recv_start(const char *name, const char *script, const char *down_until,
			int *port, char *dir, size_t dirsize)
{
	pid_t pid;
	FILE *f;
	double end = now_s() + 30;

	snprintf(dir, dirsize, "%s/%s", work, name);
	mkdir(dir, 0700);
	pid = fork();
	if (pid == 0) {
		const char *argv[20];
		int n = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* none left behind a killed test */

		argv[n++] = "python3";
		argv[n++] = recv_py;
		argv[n++] = "--dir";
		argv[n++] = dir;
		if (script) {
			argv[n++] = "--script";
			argv[n++] = script;
		}
		if (down_until) {
			argv[n++] = "--down-until";
			argv[n++] = down_until;
		}
		for (int i = 0; recv_extra[i]; i++)
			argv[n++] = recv_extra[i];
		argv[n] = NULL;
		execvp("python3", (char **)argv);
		_exit(127);
	}
	while (!(f = fopen(path_of(dir, "port"), "r"))) {
		if (now_s() > end) {
			printf("FAIL: the receiver did not start\n");
			exit(1);
		}
		usleep(20000);
	}
	if (fscanf(f, "%d", port) != 1)
		*port = 0;
	fclose(f);
	return pid;
}

static void recv_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* A profile of one sample: inuse 1000 + i, alloc 2000 + i, 2 frames. */
static void canned(int i, char **buf, size_t *len)
{
	struct profile p = { 0 };
	struct prof_line l1 = { 0, 10 }, l2 = { 0, 20 };
	size_t locs[2];
	int64_t v[2] = { 1000 + i, 2000 + i };
	FILE *f = open_memstream(buf, len);

	profile_add_value_type(&p, "inuse_space", "bytes");
	profile_add_value_type(&p, "alloc_space", "bytes");
	l1.function = profile_add_function(&p, "leaf_fn", "leaf_fn", "a.c");
	l2.function = profile_add_function(&p, "main", "main", "a.c");
	locs[0] = profile_add_location(&p, 0x1000, (size_t)-1, &l1, 1);
	locs[1] = profile_add_location(&p, 0x2000, (size_t)-1, &l2, 1);
	profile_add_sample(&p, locs, 2, v, 42, "app", "malloc");
	if (pprof_write_pyroscope(f, &p) < 0)
		printf("FAIL: pprof_write_pyroscope\n"), failures++;
	fclose(f);
	profile_release(&p);
}

static void submit(int i)
{
	char *buf, seq[16];
	size_t len;
	const char *labels[] = { "hostname", "h1", "pid", "42", "seq", seq, NULL };
	int64_t t = time(NULL);

	snprintf(seq, sizeof(seq), "%d", i);
	canned(i, &buf, &len);
	push_submit(buf, len, "app", labels, t - 20, t - 10);
	free(buf);
}

/* Wait until pushed + dropped reach n (60 s at most); the stats. */
static struct push_stats wait_done(uint64_t n)
{
	struct push_stats s;
	double end = now_s() + 60;

	do {
		push_get_stats(&s);
		if (s.pushed + s.dropped >= n)
			break;
		usleep(20000);
	} while (now_s() < end);
	return s;
}

struct line {
	int n, status;
	double t;
	char name[64], labels[128];
};

static int read_log(const char *dir, struct line *l, int max)
{
	FILE *f = fopen(path_of(dir, "log"), "r");
	int n = 0;
	long long fr, un;

	if (!f)
		return 0;
	while (n < max && fscanf(f, "%d %d %lf %63s %127s %lld %lld", &l[n].n, &l[n].status,
				 &l[n].t, l[n].name, l[n].labels, &fr, &un) == 7)
		n++;
	fclose(f);
	return n;
}

static void check_no_errors(const char *dir)
{
	FILE *f = fopen(path_of(dir, "errors"), "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		CHECK(0, "receiver: %s", line);
	fclose(f);
}

/* The log holds n 200 lines for seq first..first+n-1, in order. */
static void check_in_order(const char *dir, int n, int first)
{
	struct line l[256];
	int got = read_log(dir, l, 256), k = 0;

	for (int i = 0; i < got; i++) {
		char want[128];

		if (l[i].status != 200)
			continue;
		snprintf(want, sizeof(want), "hostname=h1;pid=42;seq=%d", first + k);
		CHECK(!strcmp(l[i].labels, want), "%s: request %d labels %s, want %s", dir,
		      l[i].n, l[i].labels, want);
		CHECK(!strcmp(l[i].name, "app"), "name %s", l[i].name);
		k++;
	}
	CHECK(k == n, "%s: %d profiles arrived, want %d", dir, k, n);
	check_no_errors(dir);
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

/* (a) every profile arrives, in order, with its values (push.test decodes them) */
static void case_order(void)
{
	char dir[512], url[64];
	int port;
	pid_t pid = recv_start("order", NULL, NULL, &port, dir, sizeof(dir));
	struct push_stats s;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	start(url, NULL);
	for (int i = 0; i < 5; i++)
		submit(i);
	s = wait_done(5);
	push_stop(5);
	CHECK(s.pushed == 5 && s.dropped == 0 && s.queued == 0,
	      "order: pushed %" PRIu64 " dropped %" PRIu64 " queued %" PRIu64, s.pushed,
	      s.dropped, s.queued);
	check_in_order(dir, 5, 0);
	recv_stop(pid);
}

/*
 * (b) server down: 70 profiles (past the memory queue: some spilled),
 * memtap stops (the rest spooled), a new start sends the spool first,
 * then the server comes up: all arrive in order.
 */
static void case_down(void)
{
	char dir[512], url[64], spool[512], up[512];
	int port, files = 0;
	pid_t pid;
	struct push_stats s;
	double end;

	snprintf(up, sizeof(up), "%s/down-up", work);
	snprintf(spool, sizeof(spool), "%s/spool-down/sub", work);
	pid = recv_start("down", NULL, up, &port, dir, sizeof(dir));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	start(url, spool);
	for (int i = 0; i < 70; i++)
		submit(i);
	push_get_stats(&s);
	CHECK(s.spooled == 70 - PUSH_QUEUE_MAX, "down: %" PRIu64 " spilled, want %d", s.spooled,
	      70 - PUSH_QUEUE_MAX);
	end = now_s() + 30;
	do {
		push_get_stats(&s);
		usleep(20000);
	} while (!s.failures && now_s() < end);
	push_stop(0);
	push_get_stats(&s);
	CHECK(s.pushed == 0 && s.dropped == 0 && s.spooled == 70 && s.queued == 70,
	      "down: pushed %" PRIu64 " dropped %" PRIu64 " spooled %" PRIu64 " queued %" PRIu64,
	      s.pushed, s.dropped, s.spooled, s.queued);
	for (int i = 1; i <= 70; i++) {
		char name[64];

		snprintf(name, sizeof(name), "memtap-push-%020d.prof", i);
		files += access(path_of(spool, name), F_OK) == 0;
	}
	CHECK(files == 70, "down: %d spool files, want 70", files);

	start(url, spool);		/* as a new memtap would */
	for (int i = 70; i < 72; i++)
		submit(i);
	close(open(up, O_WRONLY | O_CREAT, 0600));	/* the server comes up */
	s = wait_done(72);
	push_stop(5);
	CHECK(s.pushed == 72 && s.dropped == 0, "down: pushed %" PRIu64 " dropped %" PRIu64,
	      s.pushed, s.dropped);
	check_in_order(dir, 72, 0);
	files = 0;
	for (int i = 1; i <= 72; i++) {
		char name[64];

		snprintf(name, sizeof(name), "memtap-push-%020d.prof", i);
		files += access(path_of(spool, name), F_OK) == 0;
	}
	CHECK(files == 0, "down: %d spool files left", files);
	recv_stop(pid);
}

/* (c) 429 with Retry-After: 1, then 200: sent once, a second later at least */
static void case_retry_after(void)
{
	char dir[512], url[64];
	int port, n;
	pid_t pid = recv_start("retry", "429:1", NULL, &port, dir, sizeof(dir));
	struct push_stats s;
	struct line l[8];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	start(url, NULL);
	submit(0);
	s = wait_done(1);
	push_stop(5);
	CHECK(s.pushed == 1 && s.failures == 1 && s.dropped == 0,
	      "retry: pushed %" PRIu64 " failures %" PRIu64, s.pushed, s.failures);
	n = read_log(dir, l, 8);
	CHECK(n == 2 && l[0].status == 429 && l[1].status == 200, "retry: %d requests", n);
	if (n == 2)
		CHECK(l[1].t - l[0].t >= 0.95, "retry: sent again after %.3f s, before Retry-After",
		      l[1].t - l[0].t);
	check_in_order(dir, 1, 0);
	recv_stop(pid);
}

/* (d) 400 and 401: dropped, counted, not retried; the next one goes */
static void case_refused(void)
{
	char dir[512], url[64];
	int port, n;
	pid_t pid = recv_start("refused", "400,401", NULL, &port, dir, sizeof(dir));
	struct push_stats s;
	struct line l[8];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	start(url, NULL);
	for (int i = 0; i < 3; i++)
		submit(i);
	s = wait_done(3);
	push_stop(5);
	CHECK(s.pushed == 1 && s.dropped == 2 && s.failures == 0,
	      "refused: pushed %" PRIu64 " dropped %" PRIu64 " failures %" PRIu64, s.pushed,
	      s.dropped, s.failures);
	n = read_log(dir, l, 8);
	CHECK(n == 3 && l[0].status == 400 && l[1].status == 401 && l[2].status == 200,
	      "refused: %d requests", n);
	check_no_errors(dir);
	recv_stop(pid);
}

/* (e) spool directories refused; a FIFO, a link and junk in one ignored */
static void case_spool(void)
{
	struct push_config c = { .url = "http://127.0.0.1:9", .spool_max = 3600 };
	char err[512], dir[512], url[64], bad[512], real[512];
	int port;
	pid_t pid;
	struct push_stats s;

	snprintf(bad, sizeof(bad), "%s/spool-other", work);
	mkdir(bad, 0700);
	c.spool_dir = bad;
	if (geteuid() == 0 && chown(bad, 65534, 65534) == 0) {
		CHECK(push_start(&c, err, sizeof(err)) < 0 && strstr(err, "owned by uid 65534"),
		      "spool of another user: %s", err);
		puts(err);
	} else {
		printf("another user's spool not tried: not root\n");
	}
	snprintf(bad, sizeof(bad), "%s/spool-open", work);
	mkdir(bad, 0700);
	chmod(bad, 0777);
	c.spool_dir = bad;
	CHECK(push_start(&c, err, sizeof(err)) < 0 && strstr(err, "writable by others"),
	      "world-writable spool: %s", err);
	puts(err);

	/* a spool in use by another memtap */
	int ready[2];
	pid_t other = -1;

	snprintf(bad, sizeof(bad), "%s/spool-shared", work);
	if (pipe(ready) == 0 && (other = fork()) == 0) {
		struct push_config oc = { .url = "http://127.0.0.1:9", .spool_dir = bad };

		prctl(PR_SET_PDEATHSIG, SIGKILL);

		if (push_start(&oc, err, sizeof(err)) == 0 && write(ready[1], "1", 1) == 1)
			sleep(60);
		_exit(1);
	}
	char one;

	close(ready[1]);
	CHECK(read(ready[0], &one, 1) == 1, "the other memtap's push_start");
	c.spool_dir = bad;
	CHECK(push_start(&c, err, sizeof(err)) < 0 && strstr(err, "is in use by another memtap"),
	      "shared spool: %s", err);
	puts(err);
	if (other > 0) {
		kill(other, SIGKILL);
		waitpid(other, NULL, 0);
	}
	close(ready[0]);
	start("http://127.0.0.1:9", bad);	/* free again */
	push_stop(0);

	/* a spool with one profile of ours (seq 5) and things planted */
	snprintf(bad, sizeof(bad), "%s/spool-planted", work);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", 9);
	start("http://127.0.0.1:9", bad);
	submit(0);
	push_stop(0);
	rename(path_of(bad, "memtap-push-00000000000000000001.prof"),
	       path_of(bad, "memtap-push-00000000000000000005.prof"));
	snprintf(real, sizeof(real), "%s/spool-real.prof", work);
	FILE *f = fopen(real, "w");

	fputs("memtap-push 1\n/ingest?name=x%7B%7D&from=1&until=2&format=pprof&spyName=memtap\n9"
	      "999999999\nbody", f);
	fclose(f);
	CHECK(mkfifo(path_of(bad, "memtap-push-00000000000000000001.prof"), 0600) == 0, "mkfifo");
	CHECK(symlink(real, path_of(bad, "memtap-push-00000000000000000002.prof")) == 0,
	      "symlink");
	f = fopen(path_of(bad, "memtap-push-00000000000000000003.prof"), "w");
	fputs("not a spool file\n", f);
	fclose(f);
	f = fopen(path_of(bad, "notes.txt"), "w");
	fputs("x\n", f);
	fclose(f);

	pid = recv_start("planted", NULL, NULL, &port, dir, sizeof(dir));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	alarm(60);		/* a FIFO opened for good would hang here */
	start(url, bad);
	s = wait_done(1);
	push_stop(5);
	alarm(0);
	CHECK(s.pushed == 1 && s.dropped == 0, "planted: pushed %" PRIu64 " dropped %" PRIu64,
	      s.pushed, s.dropped);
	check_in_order(dir, 1, 0);
	struct stat st;

	CHECK(lstat(path_of(bad, "memtap-push-00000000000000000001.prof"), &st) == 0 &&
	      S_ISFIFO(st.st_mode), "the FIFO is left alone");
	CHECK(lstat(path_of(bad, "memtap-push-00000000000000000002.prof"), &st) == 0 &&
	      S_ISLNK(st.st_mode) && access(real, F_OK) == 0, "the link is left alone");
	recv_stop(pid);
}

/* (f) URLs: the one-line errors, and what a good one gives */
static void case_urls(void)
{
	static const struct {
		const char *url, *err;
	} bad[] = {
		{ "https://pyroscope.example:4040", "push URL 'https://pyroscope.example:4040': "
		  "https is not supported: push through a local TLS-terminating proxy "
		  "(http://127.0.0.1:PORT)" },
		{ "http://", "bad push URL 'http://': no host" },
		{ "http://h:99999", "bad push URL 'http://h:99999': port is not a number from 1 to 65535" },
		{ "http://h:", "bad push URL 'http://h:': empty port" },
		{ "pyroscope:4040", "bad push URL 'pyroscope:4040': not an http:// URL" },
		{ "http://h/p?x=1", "bad push URL 'http://h/p?x=1': a query or fragment in it" },
		{ "http://h o", "bad push URL 'http://h o': a space or control character in it" },
		{ "http://[::1/", "bad push URL 'http://[::1/': unclosed or empty '[' address" },
		{ "http://u@h", "bad push URL 'http://u@h': user without ':password'" },
		{ "http://h%/", "bad push URL 'http://h%/': bad character in the host name" },
	};
	struct push_config c = { .spool_max = 3600 };
	struct http_url u;
	char err[512], *q;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.url = bad[i].url;
		err[0] = '\0';
		CHECK(push_start(&c, err, sizeof(err)) < 0 && !strcmp(err, bad[i].err),
		      "%s: '%s', want '%s'", bad[i].url, err, bad[i].err);
	}
	CHECK(http_url_parse("http://us%65r:p%40ss@[::1]:4040/pyro/", &u, err, sizeof(err)) == 0,
	      "ipv6: %s", err);
	CHECK(u.host && !strcmp(u.host, "::1") && !strcmp(u.port, "4040") &&
	      !strcmp(u.hostport, "[::1]:4040") && !strcmp(u.prefix, "/pyro") &&
	      !strcmp(u.auth, "Basic dXNlcjpwQHNz"), "ipv6: %s %s %s %s", u.host, u.port,
	      u.prefix, u.auth);
	http_url_release(&u);
	CHECK(http_url_parse("http://localhost", &u, err, sizeof(err)) == 0 &&
	      !strcmp(u.port, "80") && !strcmp(u.prefix, "") && !u.auth, "localhost");
	http_url_release(&u);

	const char *labels[] = { "host-name", "a,b}=c\"", "pid", "7", NULL };

	q = push_query("my app{x}", labels, 100, 110);
	CHECK(!strcmp(q, "/ingest?name=my_app_x_%7Bhost_name%3Da_b__c_%2Cpid%3D7%7D"
		      "&from=100&until=110&format=pprof&spyName=memtap"), "query %s", q);
	free(q);

	CHECK(http_retry_after("120", 0) == 120, "delta-seconds");
	CHECK(http_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470) == 10,
	      "HTTP-date: %g", http_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470));
	CHECK(http_retry_after("soon", 0) < 0, "junk Retry-After");
}

/* (g) a server that accepts and never answers: the request ends at its timeout */
static void case_silent(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct http_url u;
	struct http_response r;
	char err[256], url[64];
	double t;
	int rc;

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0) {
		CHECK(0, "silent server: %s", strerror(errno));
		return;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	http_url_parse(url, &u, err, sizeof(err));
	t = now_s();
	rc = http_post(&u, "/ingest", NULL, "x", 1, 1.0, -1, &r, err, sizeof(err));
	t = now_s() - t;
	CHECK(rc < 0 && strstr(err, "no answer within 1 s"), "silent server: %d %s", rc, err);
	CHECK(t < 30, "silent server: %.1f s", t);
	http_url_release(&u);

	/* push_stop() cuts the request short at the end of the drain time */
	struct push_stats st;
	char spool[1024];

	snprintf(spool, sizeof(spool), "%s/spool-silent", work);
	start(url, spool);
	submit(0);
	usleep(200000);		/* sent or not yet: spooled either way */
	t = now_s();
	push_stop(0.5);
	t = now_s() - t;
	push_get_stats(&st);
	CHECK(t < 6, "push_stop(0.5) took %.1f s: the request was not cut short", t);
	CHECK(st.spooled == 1 && st.queued == 1 && st.pushed == 0,
	      "silent: spooled %" PRIu64 " queued %" PRIu64, st.spooled, st.queued);
	close(s);
}

/*
 * pprof_write_pyroscope() on 16,006 samples of 4 types (push.test
 * decodes work/pyro.pb.gz): a 1,200-frame one (inuse 1,000,000, alloc 7),
 * fn_J with inuse J + 1 and alloc 3 (J + 1) for J < 16,003, x_fn
 * (16,003, 1), y_fn (0, 50), z_fn (0, 0).
 */
static void case_pyro_pprof(void)
{
	struct profile p = { 0 };
	struct prof_line l = { 0, 1 };
	size_t *deep = calloc(1200, sizeof(*deep)), loc;
	int64_t v[4];
	char name[32];
	FILE *f = fopen(path_of(work, "pyro.pb.gz"), "w");

	profile_add_value_type(&p, "inuse_space", "bytes");
	profile_add_value_type(&p, "inuse_objects", "count");
	profile_add_value_type(&p, "alloc_space", "bytes");
	profile_add_value_type(&p, "alloc_objects", "count");
	for (int i = 0; i < 1200; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		l.function = profile_add_function(&p, name, name, NULL);
		deep[i] = profile_add_location(&p, 0x10000 + i, (size_t)-1, &l, 1);
	}
	v[0] = 1000000, v[1] = 1, v[2] = 7, v[3] = 1;
	profile_add_sample(&p, deep, 1200, v, 1, "t", "malloc");
	for (int j = 0; j < 16003; j++) {
		snprintf(name, sizeof(name), "fn_%d", j);
		l.function = profile_add_function(&p, name, name, NULL);
		loc = profile_add_location(&p, 0x100000 + j, (size_t)-1, &l, 1);
		v[0] = j + 1, v[2] = 3 * (j + 1);
		profile_add_sample(&p, &loc, 1, v, 1, "t", "malloc");
	}
	static const struct {
		const char *fn;
		int64_t inuse, alloc;
	} more[] = { { "x_fn", 16003, 1 }, { "y_fn", 0, 50 }, { "z_fn", 0, 0 } };
	for (int k = 0; k < 3; k++) {
		l.function = profile_add_function(&p, more[k].fn, more[k].fn, NULL);
		loc = profile_add_location(&p, 0x200000 + k, (size_t)-1, &l, 1);
		v[0] = more[k].inuse, v[2] = more[k].alloc;
		profile_add_sample(&p, &loc, 1, v, 1, "t", "malloc");
	}
	CHECK(f && pprof_write_pyroscope(f, &p) == 0, "pprof_write_pyroscope");
	if (f)
		fclose(f);
	profile_release(&p);
	free(deep);
}

/* (h) a server that sends endless headers and keeps the line open: 64 KiB read, no more */
static void case_flood(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), rc;
	struct http_url u;
	struct http_response r = { 0 };
	char err[256] = "", url[64];
	pid_t pid;
	double t;

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0) {
		CHECK(0, "flood server: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int c = accept(s, NULL, NULL);
		const char *line = "X-Junk: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";

		const char *head = "HTTP/1.1 503 Busy\r\nRetry-After: 2\r\n";

		if (c < 0 || write(c, head, strlen(head)) != (ssize_t)strlen(head))
			_exit(1);
		for (int i = 0; i < 4000; i++)
			if (write(c, line, strlen(line)) < 0)
				break;
		sleep(60);
		_exit(0);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	http_url_parse(url, &u, err, sizeof(err));
	t = now_s();
	rc = http_post(&u, "/ingest", NULL, "x", 1, 20.0, -1, &r, err, sizeof(err));
	t = now_s() - t;
	CHECK(rc == 0 && r.status == 503, "flood: %d %d %s", rc, r.status, err);
	CHECK(t < 15, "flood: %.1f s: read past 64 KiB or waited for the end", t);
	http_url_release(&u);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(s);
}

/* (i) IPv6, a prefix, Basic authentication and a tenant, end to end */
static void case_ipv6_auth(void)
{
	static const char *extra[] = { "--ipv6", "--prefix", "/pyro/x", "--auth", "us er:p@ss:w",
				       "--tenant", "team-a", NULL };
	struct push_config c = { .spool_max = 3600, .tenant = "team-a" };
	char dir[512], url[128], err[512];
	int port;
	pid_t pid;
	struct push_stats s;

	memcpy(recv_extra, extra, sizeof(extra));
	pid = recv_start("ipv6", NULL, NULL, &port, dir, sizeof(dir));
	memset(recv_extra, 0, sizeof(recv_extra));
	snprintf(url, sizeof(url), "http://us%%20er:p%%40ss:w@[::1]:%d/pyro/x/", port);
	c.url = url;
	CHECK(push_start(&c, err, sizeof(err)) == 0, "ipv6: %s", err);
	submit(0);
	s = wait_done(1);
	push_stop(5);
	CHECK(s.pushed == 1, "ipv6: pushed %" PRIu64 " dropped %" PRIu64, s.pushed, s.dropped);
	check_in_order(dir, 1, 0);
	recv_stop(pid);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: push-unit RECV.py WORKDIR\n");
		return 2;
	}
	recv_py = argv[1];
	work = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	case_pyro_pprof();
	case_urls();
	case_silent();
	case_flood();
	case_order();
	case_ipv6_auth();
	case_retry_after();
	case_refused();
	case_spool();
	case_down();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * http-server-unit - util/http-server.c through sockets: 200 with the
 * published body (and a body published again, and a response that keeps
 * the page it began with), 404, 405, 400, 431, HEAD; a client that
 * sends nothing or reads nothing does not keep a second one from being
 * served; 40 idle connections do not keep a 41st request from being
 * served once they close or time out; the server's thread blocks every
 * signal; bad addresses and a port in use give their one-line message.
 * Timeouts here only bound how long a step may take before the test
 * gives up.  Prints "ok" or what failed.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "util/http-server.h"
#include "unit-check.h"

#define GIVE_UP_S 60		/* a step that takes longer failed */

static unsigned port;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int connect_server(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { GIVE_UP_S, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		printf("FAIL connect to port %u: %s\n", port, strerror(errno));
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Everything until EOF (or an error) into a new buffer; its length. */
static char *read_all(int fd, size_t *lenp)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap + 1);
	ssize_t n;

	while ((n = recv(fd, buf + len, cap - len, 0)) > 0) {
		len += (size_t)n;
		if (len == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

/* Send req on a new connection; the response, its status (0: none). */
static char *exchange(const char *req, size_t reqlen, int *status, size_t *lenp)
{
	int fd = connect_server();
	char *resp;
	size_t len;

	send_all(fd, req, reqlen);
	resp = read_all(fd, &len);
	close(fd);
	*status = 0;
	sscanf(resp, "HTTP/1.1 %d ", status);
	if (lenp != NULL)
		*lenp = len;
	return resp;
}

static char *get(const char *req, int *status)
{
	return exchange(req, strlen(req), status, NULL);
}

static const char *body_of(const char *resp)
{
	const char *b = strstr(resp, "\r\n\r\n");

	return b != NULL ? b + 4 : "";
}

static void test_answers(struct http_server *s)
{
	char *r, *big;
	int st;

	http_server_publish(s, "/metrics", "text/plain; version=0.0.4", "a 1\n", 4);
	r = get("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &st);
	CHECK(st == 200 && strcmp(body_of(r), "a 1\n") == 0 &&
	      strstr(r, "\r\nContent-Length: 4\r\n") != NULL &&
	      strstr(r, "\r\nContent-Type: text/plain; version=0.0.4\r\n") != NULL &&
	      strstr(r, "\r\nConnection: close\r\n") != NULL, "GET /metrics: %s", r);
	free(r);
	http_server_publish(s, "/metrics", "text/plain; version=0.0.4", "a 2\nb 3\n", 8);
	r = get("GET /metrics?x=1 HTTP/1.0\r\n\r\n", &st);
	CHECK(st == 200 && strcmp(body_of(r), "a 2\nb 3\n") == 0, "GET after a second publish: %s", r);
	free(r);
	r = get("HEAD /metrics HTTP/1.1\r\n\r\n", &st);
	CHECK(st == 200 && strcmp(body_of(r), "") == 0 && strstr(r, "\r\nContent-Length: 8\r\n") != NULL,
	      "HEAD /metrics: %s", r);
	free(r);
	r = get("GET /nothing HTTP/1.1\r\n\r\n", &st);
	CHECK(st == 404, "GET /nothing: %s", r);
	free(r);
	r = get("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", &st);
	CHECK(st == 405 && strstr(r, "\r\nAllow: GET, HEAD\r\n") != NULL, "POST /metrics: %s", r);
	free(r);
	r = get("GET / HTTP/1.1\r\n\r\n", &st);
	CHECK(st == 200 && strstr(body_of(r), "/metrics\n") != NULL, "GET /: %s", r);
	free(r);
	r = get("hello\r\n\r\n", &st);
	CHECK(st == 400, "not HTTP: %s", r);
	free(r);
	r = get("GET /metrics\nHTTP/1.1\n\n", &st);
	CHECK(st == 400, "a newline in the request line: %s", r);
	free(r);
	/* bare newlines end a header too */
	r = get("GET /metrics HTTP/1.1\n\n", &st);
	CHECK(st == 200, "GET with bare newlines: %s", r);
	free(r);
	/* a header past 16 KiB */
	big = malloc(HTTP_MAX_HEADER + 2048);
	memset(big, 'x', HTTP_MAX_HEADER + 2048);
	memcpy(big, "GET /metrics HTTP/1.1\r\nX-Big: ", 30);
	r = exchange(big, HTTP_MAX_HEADER + 2048, &st, NULL);
	CHECK(st == 431, "a 18 KiB header: %.100s", r);
	free(r);
	free(big);
}

/* A client that sends nothing, and one that reads nothing of a long
 * response, while others are served; that response keeps its page. */
static void test_stalled(struct http_server *s)
{
	enum { BIG = 8 << 20 };
	char *big = malloc(BIG), *r, buf[1];
	const char *req = "GET /big HTTP/1.1\r\n\r\n";
	int idle, reader, st, bad = 0;
	size_t len;

	idle = connect_server();
	r = get("GET /metrics HTTP/1.1\r\n\r\n", &st);
	CHECK(st == 200 && strcmp(body_of(r), "a 2\nb 3\n") == 0, "GET beside an idle client: %s", r);
	free(r);
	/* served while the idle client was still connected, not after its
	 * deadline closed it */
	CHECK(recv(idle, buf, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN,
	      "the idle connection was closed before the second client was served");
	close(idle);

	memset(big, 'a', BIG);
	http_server_publish(s, "/big", "application/octet-stream", big, BIG);
	reader = connect_server();
	send_all(reader, req, strlen(req));
	r = get("GET /metrics HTTP/1.1\r\n\r\n", &st);
	CHECK(st == 200, "GET beside a client that reads nothing: %s", r);
	free(r);
	/* a new page while the old one is being sent */
	memset(big, 'b', BIG);
	http_server_publish(s, "/big", "application/octet-stream", big, BIG);
	r = read_all(reader, &len);
	close(reader);
	CHECK(len > BIG && strstr(r, "\r\n\r\n") == r + len - BIG - 4, "the slow reader got %zu bytes", len);
	for (size_t i = len - BIG; i < len && len > BIG; i++)
		bad += r[i] != 'a';
	CHECK(bad == 0, "the slow reader's page changed under it: %d bytes", bad);
	free(r);
	r = get("GET /big HTTP/1.1\r\n\r\n", &st);
	CHECK(st == 200 && body_of(r)[0] == 'b', "GET /big after the second publish");
	free(r);
	free(big);
}

/* A request on new connections until one is answered (GIVE_UP_S at most). */
static int served_eventually(void)
{
	for (int i = 0; i < GIVE_UP_S * 10; i++) {
		int st;
		char *r = get("GET /metrics HTTP/1.1\r\n\r\n", &st);

		free(r);
		if (st == 200)
			return 1;
		sleep_ms(100);
	}
	return 0;
}

/* 40 idle connections: the 41st request is served once they time out,
 * and again once 40 others close. */
static void test_idle_flood(void)
{
	enum { N = 40 };
	int fds[N], closed = 0;
	char buf[16];

	for (int i = 0; i < N; i++)
		fds[i] = connect_server();
	CHECK(served_eventually(), "no answer while 40 idle connections time out");
	/* each of them was closed by the server: at once (past 32) or at
	 * its deadline */
	for (int i = 0; i < N; i++) {
		ssize_t n = recv(fds[i], buf, sizeof(buf), 0);

		closed += n == 0 || (n < 0 && errno == ECONNRESET);
		close(fds[i]);
	}
	CHECK(closed == N, "%d of %d idle connections closed by the server", closed, N);

	for (int i = 0; i < N; i++)
		fds[i] = connect_server();
	for (int i = 0; i < N; i++)
		close(fds[i]);
	CHECK(served_eventually(), "no answer after 40 idle connections closed");
}

/* Every signal the tracer handles is blocked in the server's thread. */
static void test_sigmask(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGALRM, SIGUSR1 };
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int others = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char path[320], line[256];
		unsigned long long blk = 0;
		FILE *f;

		if (de->d_name[0] == '.' || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f))
			sscanf(line, "SigBlk: %llx", &blk);
		fclose(f);
		others++;
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			CHECK(blk & (1ull << (sigs[i] - 1)), "signal %d not blocked in thread %s (SigBlk %llx)",
			      sigs[i], de->d_name, blk);
	}
	if (d != NULL)
		closedir(d);
	CHECK(others == 1, "%d threads beside main", others);
}

static void test_addresses(const char *bound)
{
	static const struct {
		const char *addr, *msg;
	} bad[] = {
		{ "x:y", "bad metrics address 'x:y': the host is not a numeric IPv4 address or localhost" },
		{ "127.0.0.1:y", "bad metrics address '127.0.0.1:y': the port is not a number from 0 to 65535" },
		{ "70000", "bad metrics address '70000': the port is not a number from 0 to 65535" },
		{ "", "bad metrics address '': the port is not a number from 0 to 65535" },
		{ "::1:80", "bad metrics address '::1:80': an IPv6 address goes in brackets, as in [::1]:9464" },
		{ "[::1]", "bad metrics address '[::1]': no ':PORT' after the IPv6 address" },
		{ "[::1:80", "bad metrics address '[::1:80': no ']' after the IPv6 address" },
		{ "[1.2.3.4]:80", "bad metrics address '[1.2.3.4]:80': not an IPv6 address in the brackets" },
	};
	char err[256], want[320];
	struct http_server *s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		s = http_server_start(bad[i].addr, err, sizeof(err));
		CHECK(s == NULL && strcmp(err, bad[i].msg) == 0, "'%s': %s", bad[i].addr, err);
		http_server_stop(s);
	}
	/* the port in use */
	s = http_server_start(bound, err, sizeof(err));
	snprintf(want, sizeof(want), "cannot listen on %s: address already in use", bound);
	CHECK(s == NULL && strcmp(err, want) == 0, "port in use: %s", err);
	http_server_stop(s);
	/* a port alone, localhost, IPv6 */
	s = http_server_start("localhost:0", err, sizeof(err));
	CHECK(s != NULL && strncmp(http_server_address(s), "127.0.0.1:", 10) == 0, "localhost:0: %s",
	      s ? http_server_address(s) : err);
	http_server_stop(s);
	s = http_server_start("[::1]:0", err, sizeof(err));
	CHECK(s != NULL ? strncmp(http_server_address(s), "[::1]:", 6) == 0
			: strncmp(err, "cannot listen on [::1]:0: ", 26) == 0,
	      "[::1]:0: %s", s ? http_server_address(s) : err);
	http_server_stop(s);
}

int main(void)
{
	char err[256], bound[64];
	struct http_server *s;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	s = http_server_start("0", err, sizeof(err));
	if (s == NULL) {
		printf("FAIL http_server_start(\"0\"): %s\n", err);
		return 1;
	}
	snprintf(bound, sizeof(bound), "%s", http_server_address(s));
	CHECK(sscanf(bound, "127.0.0.1:%u", &port) == 1 && port != 0, "address %s", bound);
	test_sigmask();
	test_answers(s);
	test_stalled(s);
	test_idle_flood();
	test_addresses(bound);
	http_server_stop(s);
	/* nothing listens any more */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	{
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		CHECK(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno == ECONNREFUSED,
		      "still listening after http_server_stop()");
	}
	close(fd);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}

/*
 * http-server.c - the minimal HTTP/1.1 server of http-server.h.
 *
 * One thread polls the listening socket, a wake-up pipe (written by
 * http_server_stop()) and at most HTTP_MAX_CONNS connections, all
 * nonblocking.  A connection reads its request header into a buffer of
 * HTTP_MAX_HEADER bytes, sends one response, shuts its side down and
 * reads what the client still sends until the client closes (so that
 * the kernel does not reset a response the client has not read yet),
 * each step under a deadline: nothing a client does or fails to do
 * holds more than its own slot, and that for HTTP_DEADLINE_MS at most
 * without progress.
 *
 * Published pages are reference-counted under the lock: the table holds
 * one reference, and each response being sent one more.  Publishing
 * copies the page first, then swaps the table's pointer under the lock;
 * whoever drops the last reference frees the page, outside the lock.
 * The server's thread allocates with malloc() and drops a connection
 * when that fails: it never dies, and never calls into the rest of
 * memtap.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/http-server.h"
#include "util/xmalloc.h"

#define CTYPE_MAX 200		/* bytes of a content type kept */
#define ACCEPTS_PER_ROUND 64	/* then the connections get their turn */

struct page {
	char *path;
	char ctype[CTYPE_MAX + 1];
	char *body;
	size_t len;
	unsigned refs;		/* under the lock */
};

enum conn_state { CONN_FREE, CONN_READ, CONN_WRITE, CONN_DRAIN };

struct conn {
	enum conn_state state;
	int fd;
	uint64_t deadline;	/* now_ns() past which it is closed */
	char *in;		/* the request header, HTTP_MAX_HEADER bytes */
	size_t inlen;
	char head[CTYPE_MAX + 256];	/* the response's status line and header */
	size_t headlen;
	const char *body;	/* the body sent after head (NULL for HEAD) */
	size_t bodylen;
	size_t sent;		/* of head and body */
	struct page *page;	/* referenced while body points into it */
};

struct http_server {
	int lfd;
	int wake[2];		/* http_server_stop() writes wake[1] */
	pthread_t thread;
	char addr[INET6_ADDRSTRLEN + 16];
	pthread_mutex_t lock;
	struct page *pages[HTTP_MAX_PAGES];	/* under the lock */
	size_t npages;
	struct conn conns[HTTP_MAX_CONNS];
};

/* A reference to p dropped; called with the lock held.  Returns p when
 * the caller must free it (after unlocking), else NULL. */
static struct page *page_unref_locked(struct page *p)
{
	if (p == NULL || --p->refs > 0)
		return NULL;
	return p;
}

static void page_free(struct page *p)
{
	if (p == NULL)
		return;
	free(p->path);
	free(p->body);
	free(p);
}

static void page_unref(struct http_server *s, struct page *p)
{
	pthread_mutex_lock(&s->lock);
	p = page_unref_locked(p);
	pthread_mutex_unlock(&s->lock);
	page_free(p);
}

/* strerror(err) with a lowercase first letter, as memtap's messages are. */
static const char *lc_strerror(int err, char *buf, size_t size)
{
	snprintf(buf, size, "%s", strerror(err));
	buf[0] = (char)tolower((unsigned char)buf[0]);
	return buf;
}

/* A port: 1 to 5 decimal digits, at most 65535.  0 or -1. */
static int parse_port(const char *p, unsigned *port)
{
	unsigned v = 0;
	size_t n = 0;

	for (; p[n] != '\0'; n++) {
		if (p[n] < '0' || p[n] > '9' || n >= 5)
			return -1;
		v = v * 10 + (unsigned)(p[n] - '0');
	}
	if (n == 0 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

/* addr as http_server_start() takes it, into *ss.  0, or -1 and why in err. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *sslen,
		      char *err, size_t errsize)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[INET6_ADDRSTRLEN + 1];
	const char *portstr, *why;
	unsigned port;
	size_t hostlen;

	memset(ss, 0, sizeof(*ss));
	if (addr[0] == '[') {
		const char *end = strchr(addr, ']');

		why = "no ']' after the IPv6 address";
		if (end == NULL)
			goto bad;
		why = "no ':PORT' after the IPv6 address";
		if (end[1] != ':')
			goto bad;
		hostlen = (size_t)(end - addr - 1);
		why = "not an IPv6 address in the brackets";
		if (hostlen >= sizeof(host))
			goto bad;
		memcpy(host, addr + 1, hostlen);
		host[hostlen] = '\0';
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			goto bad;
		in6->sin6_family = AF_INET6;
		*sslen = sizeof(*in6);
		portstr = end + 2;
	} else {
		const char *colon = strrchr(addr, ':');

		why = "an IPv6 address goes in brackets, as in [::1]:9464";
		if (colon != NULL && colon != strchr(addr, ':'))
			goto bad;
		in4->sin_family = AF_INET;
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*sslen = sizeof(*in4);
		portstr = addr;
		if (colon != NULL) {
			hostlen = (size_t)(colon - addr);
			portstr = colon + 1;
			why = "the host is not a numeric IPv4 address or localhost";
			if (hostlen >= sizeof(host))
				goto bad;
			memcpy(host, addr, hostlen);
			host[hostlen] = '\0';
			if (hostlen > 0 && strcmp(host, "localhost") != 0 &&
			    inet_pton(AF_INET, host, &in4->sin_addr) != 1)
				goto bad;
		}
	}
	why = "the port is not a number from 0 to 65535";
	if (parse_port(portstr, &port) < 0)
		goto bad;
	if (ss->ss_family == AF_INET6)
		in6->sin6_port = htons((uint16_t)port);
	else
		in4->sin_port = htons((uint16_t)port);
	return 0;
bad:
	snprintf(err, errsize, "bad metrics address '%s': %s", addr, why);
	return -1;
}

/* "HOST:PORT" or "[V6ADDR]:PORT" of a socket address. */
static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, (unsigned)ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, (unsigned)ntohs(in4->sin_port));
	}
}

static void conn_close(struct http_server *s, struct conn *c)
{
	close(c->fd);
	free(c->in);
	if (c->page != NULL)
		page_unref(s, c->page);
	memset(c, 0, sizeof(*c));
	c->state = CONN_FREE;
	c->fd = -1;
}

static void accept_conns(struct http_server *s, uint64_t now)
{
	for (int n = 0; n < ACCEPTS_PER_ROUND; n++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c = NULL;

		if (fd < 0)
			return;	/* EAGAIN, or a connection that went away */
		for (size_t i = 0; i < HTTP_MAX_CONNS && c == NULL; i++)
			if (s->conns[i].state == CONN_FREE)
				c = &s->conns[i];
		if (c == NULL || (c->in = malloc(HTTP_MAX_HEADER)) == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->state = CONN_READ;
		c->inlen = 0;
		c->deadline = now + HTTP_DEADLINE_MS * 1000000ull;
	}
}

/* The index page of `/`: the published paths, one a line; a page of
 * its own (one reference, no path), or NULL. */
static struct page *index_page_locked(struct http_server *s)
{
	struct page *p = calloc(1, sizeof(*p));
	size_t len = sizeof("memtap\n");

	if (p == NULL)
		return NULL;
	for (size_t i = 0; i < s->npages; i++)
		len += strlen(s->pages[i]->path) + 1;
	p->body = malloc(len);
	if (p->body == NULL) {
		free(p);
		return NULL;
	}
	p->len = (size_t)sprintf(p->body, "memtap\n");
	for (size_t i = 0; i < s->npages; i++)
		p->len += (size_t)sprintf(p->body + p->len, "%s\n", s->pages[i]->path);
	strcpy(p->ctype, "text/plain; charset=utf-8");
	p->refs = 1;
	return p;
}

/* The page at path (its length plen), referenced, or NULL. */
static struct page *page_get(struct http_server *s, const char *path, size_t plen)
{
	struct page *p = NULL;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->npages && p == NULL; i++)
		if (strlen(s->pages[i]->path) == plen && memcmp(s->pages[i]->path, path, plen) == 0)
			p = s->pages[i];
	if (p != NULL)
		p->refs++;
	else if (plen == 1 && path[0] == '/')
		p = index_page_locked(s);
	pthread_mutex_unlock(&s->lock);
	return p;
}

/* Set up c's response: status, and a page (referenced) or a short text. */
static void respond(struct conn *c, int status, struct page *page, int head_only, uint64_t now)
{
	static const struct {
		int status;
		const char *reason, *text;
	} texts[] = {
		{ 200, "OK", "" },
		{ 400, "Bad Request", "bad request\n" },
		{ 404, "Not Found", "not found\n" },
		{ 405, "Method Not Allowed", "method not allowed: GET or HEAD\n" },
		{ 431, "Request Header Fields Too Large", "request header too large\n" },
		{ 503, "Service Unavailable", "out of memory\n" },
	};
	size_t t = 0;
	int n;

	while (t + 1 < sizeof(texts) / sizeof(texts[0]) && texts[t].status != status)
		t++;
	c->page = page;
	c->body = page != NULL ? page->body : texts[t].text;
	c->bodylen = page != NULL ? page->len : strlen(texts[t].text);
	n = snprintf(c->head, sizeof(c->head),
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "%s"
		     "Connection: close\r\n\r\n",
		     status, texts[t].reason,
		     page != NULL ? page->ctype : "text/plain; charset=utf-8",
		     c->bodylen, status == 405 ? "Allow: GET, HEAD\r\n" : "");
	c->headlen = (size_t)n < sizeof(c->head) ? (size_t)n : sizeof(c->head) - 1;
	if (head_only) {
		c->body = NULL;
		c->bodylen = 0;
	}
	c->sent = 0;
	c->state = CONN_WRITE;
	c->deadline = now + HTTP_DEADLINE_MS * 1000000ull;
}

static int is_token_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

/* A complete request header is in c->in: answer it. */
static void handle_request(struct http_server *s, struct conn *c, uint64_t now)
{
	const char *p = c->in, *end = c->in + c->inlen;
	const char *method, *target;
	size_t mlen = 0, tlen = 0, plen;
	int head_only;
	struct page *page;

	method = p;
	while (p + mlen < end && is_token_char(p[mlen]))
		mlen++;
	p += mlen;
	if (mlen == 0 || p >= end || *p != ' ') {
		respond(c, 400, NULL, 0, now);
		return;
	}
	target = ++p;
	while (p + tlen < end && p[tlen] > ' ' && p[tlen] < 0x7f)
		tlen++;
	p += tlen;
	if (tlen == 0 || end - p < 9 || memcmp(p, " HTTP/1.", 8) != 0 || target[0] != '/') {
		respond(c, 400, NULL, 0, now);
		return;
	}
	head_only = mlen == 4 && memcmp(method, "HEAD", 4) == 0;
	if (!head_only && !(mlen == 3 && memcmp(method, "GET", 3) == 0)) {
		respond(c, 405, NULL, 0, now);
		return;
	}
	for (plen = 0; plen < tlen && target[plen] != '?'; plen++)
		;
	/* "/" with no page of its own: the index, 503 if it cannot be made */
	page = page_get(s, target, plen);
	if (page == NULL)
		respond(c, plen == 1 ? 503 : 404, NULL, head_only, now);
	else
		respond(c, 200, page, head_only, now);
}

/* The end of a request header ("\r\n\r\n", or "\n\n") in c->in, from
 * byte from on. */
static int header_complete(const struct conn *c, size_t from)
{
	for (size_t i = from; i < c->inlen; i++) {
		if (c->in[i] != '\n')
			continue;
		if (i >= 1 && c->in[i - 1] == '\n')
			return 1;
		if (i >= 2 && c->in[i - 1] == '\r' && c->in[i - 2] == '\n')
			return 1;
	}
	return 0;
}

static void conn_read(struct http_server *s, struct conn *c, uint64_t now)
{
	char scratch[4096];
	ssize_t n;

	if (c->state == CONN_DRAIN) {
		n = recv(c->fd, scratch, sizeof(scratch), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_close(s, c);
		return;
	}
	n = recv(c->fd, c->in + c->inlen, HTTP_MAX_HEADER - c->inlen, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(s, c);
		return;
	}
	if (n < 0)
		return;
	c->inlen += (size_t)n;
	if (header_complete(c, c->inlen - (size_t)n))
		handle_request(s, c, now);
	else if (c->inlen == HTTP_MAX_HEADER)
		respond(c, 431, NULL, 0, now);
}

static void conn_write(struct http_server *s, struct conn *c, uint64_t now)
{
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov };
	ssize_t n;

	if (c->sent < c->headlen) {
		iov[msg.msg_iovlen].iov_base = c->head + c->sent;
		iov[msg.msg_iovlen++].iov_len = c->headlen - c->sent;
	}
	if (c->bodylen > 0) {
		size_t off = c->sent > c->headlen ? c->sent - c->headlen : 0;

		iov[msg.msg_iovlen].iov_base = (char *)c->body + off;
		iov[msg.msg_iovlen++].iov_len = c->bodylen - off;
	}
	n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(s, c);
		return;
	}
	c->sent += (size_t)n;
	c->deadline = now + HTTP_DEADLINE_MS * 1000000ull;
	if (c->sent < c->headlen + c->bodylen)
		return;
	if (c->page != NULL) {
		page_unref(s, c->page);
		c->page = NULL;
	}
	free(c->in);
	c->in = NULL;
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_DRAIN;
}

static void *server_thread(void *arg)
{
	struct http_server *s = arg;
	struct pollfd pfd[2 + HTTP_MAX_CONNS];
	struct conn *pc[2 + HTTP_MAX_CONNS];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		uint64_t now = now_ns(), next = UINT64_MAX;
		int timeout = -1;
		nfds_t n = 2;

		for (size_t i = 0; i < HTTP_MAX_CONNS; i++) {
			struct conn *c = &s->conns[i];

			if (c->state == CONN_FREE)
				continue;
			if (c->deadline <= now) {
				conn_close(s, c);
				continue;
			}
			if (c->deadline < next)
				next = c->deadline;
			pfd[n].fd = c->fd;
			pfd[n].events = c->state == CONN_WRITE ? POLLOUT : POLLIN;
			pfd[n].revents = 0;
			pc[n++] = c;
		}
		pfd[0] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		if (next != UINT64_MAX)
			timeout = (int)((next - now + 999999) / 1000000);
		if (poll(pfd, n, timeout) < 0)
			continue;	/* EINTR; nothing else is expected */
		if (pfd[0].revents != 0)
			break;
		now = now_ns();
		for (nfds_t i = 2; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pc[i]->state == CONN_WRITE)
				conn_write(s, pc[i], now);
			else
				conn_read(s, pc[i], now);
		}
		if (pfd[1].revents != 0)
			accept_conns(s, now);
	}
	return NULL;
}

struct http_server *http_server_start(const char *addr, char *err, size_t errsize)
{
	struct http_server *s;
	struct sockaddr_storage ss;
	socklen_t sslen;
	char where[sizeof(s->addr)], ebuf[128];
	sigset_t all, old;
	int one = 1, rc;

	if (parse_addr(addr, &ss, &sslen, err, errsize) < 0)
		return NULL;
	format_addr(&ss, where, sizeof(where));
	s = xcalloc(1, sizeof(*s));
	s->wake[0] = s->wake[1] = -1;
	for (size_t i = 0; i < HTTP_MAX_CONNS; i++)
		s->conns[i].fd = -1;
	s->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		goto fail;
	if (setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s->lfd, (struct sockaddr *)&ss, sslen) < 0 || listen(s->lfd, 64) < 0)
		goto fail;
	sslen = sizeof(ss);
	if (getsockname(s->lfd, (struct sockaddr *)&ss, &sslen) < 0)
		goto fail;
	format_addr(&ss, s->addr, sizeof(s->addr));
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		goto fail;
	pthread_mutex_init(&s->lock, NULL);
	/* the thread starts with every signal blocked: no moment where one
	 * meant for the tracer could land on it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&s->thread, NULL, server_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&s->lock);
		errno = rc;
		goto fail;
	}
	return s;
fail:
	snprintf(err, errsize, "cannot listen on %s: %s", where,
		 lc_strerror(errno, ebuf, sizeof(ebuf)));
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wake[0] >= 0) {
		close(s->wake[0]);
		close(s->wake[1]);
	}
	free(s);
	return NULL;
}

const char *http_server_address(const struct http_server *s)
{
	return s->addr;
}

void http_server_publish(struct http_server *s, const char *path, const char *content_type,
			 const char *body, size_t len)
{
	struct page *p = xcalloc(1, sizeof(*p)), *old = NULL;
	size_t i, j = 0;

	p->path = xstrdup(path);
	/* a content type that could end the header line early is cut there */
	for (i = 0; content_type[i] != '\0' && j < CTYPE_MAX; i++)
		if ((unsigned char)content_type[i] >= ' ')
			p->ctype[j++] = content_type[i];
	p->body = xmalloc(len > 0 ? len : 1);
	memcpy(p->body, body, len);
	p->len = len;
	p->refs = 1;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->npages && strcmp(s->pages[i]->path, path) != 0; i++)
		;
	if (i == HTTP_MAX_PAGES) {
		old = p;	/* no room for another path */
	} else {
		if (i == s->npages)
			s->npages++;
		else
			old = page_unref_locked(s->pages[i]);
		s->pages[i] = p;
	}
	pthread_mutex_unlock(&s->lock);
	page_free(old);
}

void http_server_stop(struct http_server *s)
{
	ssize_t n;

	if (s == NULL)
		return;
	do
		n = write(s->wake[1], "", 1);
	while (n < 0 && errno == EINTR);
	pthread_join(s->thread, NULL);
	for (size_t i = 0; i < HTTP_MAX_CONNS; i++)
		if (s->conns[i].state != CONN_FREE)
			conn_close(s, &s->conns[i]);
	for (size_t i = 0; i < s->npages; i++)
		page_free(s->pages[i]);
	pthread_mutex_destroy(&s->lock);
	close(s->lfd);
	close(s->wake[0]);
	close(s->wake[1]);
	free(s);
}

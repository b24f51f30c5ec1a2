/*
 * http-client.c - one blocking HTTP/1.1 POST with a deadline
 * (http-client.h).
 *
 * The socket is non-blocking and every connect, write and read waits in
 * poll() for at most what is left of the request's time, so a server
 * that accepts and then says nothing, or trickles bytes, costs the
 * timeout and no more.  The request says "Connection: close"; the answer
 * is read until the server closes, until the body announced by
 * Content-Length is complete, or until HTTP_MAX_RESPONSE bytes, whichever
 * comes first.  Only the status, Retry-After and the body's first line
 * are kept.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/http-client.h"
#include "util/xmalloc.h"

static int url_error(char *err, size_t errsize, const char *url, const char *why)
{
	snprintf(err, errsize, "bad push URL '%s': %s", url, why);
	return -1;
}

static char *dupn(const char *s, size_t n)
{
	return xasprintf("%.*s", (int)n, s);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode s[0..n) into a new string; NULL if malformed. */
static char *pct_decode(const char *s, size_t n)
{
	char *d = xmalloc(n + 1), *o = d;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= n) {
			free(d);
			return NULL;
		}
		int h = hexval((unsigned char)s[i + 1]), l = hexval((unsigned char)s[i + 2]);

		if (h < 0 || l < 0) {
			free(d);
			return NULL;
		}
		*o++ = (char)(h << 4 | l);
		i += 2;
	}
	*o = '\0';
	return d;
}

static char *base64(const unsigned char *s, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *d = xmalloc(4 * ((n + 2) / 3) + 1), *o = d;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = s[i] << 16 | (i + 1 < n ? s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);

		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return d;
}

void http_url_release(struct http_url *u)
{
	free(u->host);
	free(u->port);
	free(u->hostport);
	free(u->prefix);
	free(u->auth);
	memset(u, 0, sizeof(*u));
}

int http_url_parse(const char *url, struct http_url *u, char *err, size_t errsize)
{
	const char *a, *hp, *path, *at, *h, *hend, *port = NULL;
	size_t plen;

	memset(u, 0, sizeof(*u));
	if (!strncasecmp(url, "https://", 8)) {
		snprintf(err, errsize, "push URL '%s': https is not supported: push through a "
			 "local TLS-terminating proxy (http://127.0.0.1:PORT)", url);
		return -1;
	}
	if (strncasecmp(url, "http://", 7))
		return url_error(err, errsize, url, "not an http:// URL");
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			return url_error(err, errsize, url, "a space or control character in it");
	if (strpbrk(url, "?#"))
		return url_error(err, errsize, url, "a query or fragment in it");
	a = url + 7;
	path = a + strcspn(a, "/");
	at = memchr(a, '@', path - a);
	hp = at ? at + 1 : a;
	if (at) {
		char *ui = pct_decode(a, at - a);
		char *b64;

		if (!ui)
			return url_error(err, errsize, url, "bad %-escape in the user name or password");
		if (!strchr(ui, ':')) {
			free(ui);
			return url_error(err, errsize, url, "user without ':password'");
		}
		b64 = base64((const unsigned char *)ui, strlen(ui));
		u->auth = xasprintf("Basic %s", b64);
		free(b64);
		free(ui);
	}
	if (hp == path)
		goto nohost;
	if (*hp == '[') {
		h = hp + 1;
		hend = memchr(h, ']', path - h);
		if (!hend || hend == h) {
			http_url_release(u);
			return url_error(err, errsize, url, "unclosed or empty '[' address");
		}
		if (hend + 1 < path && hend[1] != ':') {
			http_url_release(u);
			return url_error(err, errsize, url, "junk after ']'");
		}
		if (hend + 1 < path)
			port = hend + 2;
	} else {
		h = hp;
		hend = memchr(h, ':', path - h);
		if (hend)
			port = hend + 1;
		else
			hend = path;
		if (hend == h)
			goto nohost;
		for (const char *c = h; c < hend; c++)
			if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.' && *c != '_') {
				http_url_release(u);
				return url_error(err, errsize, url, "bad character in the host name");
			}
	}
	if (port) {
		unsigned long v = 0;

		if (port == path) {
			http_url_release(u);
			return url_error(err, errsize, url, "empty port");
		}
		for (const char *c = port; c < path; c++) {
			if (!isdigit((unsigned char)*c) || (v = v * 10 + (*c - '0')) > 65535) {
				http_url_release(u);
				return url_error(err, errsize, url, "port is not a number from 1 to 65535");
			}
		}
		if (!v) {
			http_url_release(u);
			return url_error(err, errsize, url, "port is not a number from 1 to 65535");
		}
		u->port = xasprintf("%lu", v);
	} else {
		u->port = xstrdup("80");
	}
	u->host = dupn(h, hend - h);
	u->hostport = dupn(hp, path - hp);
	plen = strlen(path);
	while (plen && path[plen - 1] == '/')
		plen--;
	u->prefix = dupn(path, plen);
	return 0;
nohost:
	http_url_release(u);
	return url_error(err, errsize, url, "no host");
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait for events on fd until the deadline: 1 ready, 0 timed out, -1
 * (errno ECANCELED when cancel_fd became readable).
 */
static int wait_fd(int fd, short events, double deadline, int cancel_fd)
{
	for (;;) {
		double left = deadline - mono_now();
		struct pollfd pfd[2] = { { .fd = fd, .events = events },
					 { .fd = cancel_fd, .events = POLLIN } };
		int r;

		if (left <= 0)
			return 0;
		r = poll(pfd, cancel_fd >= 0 ? 2 : 1, (int)(left * 1000) + 1);
		if (r > 0 && cancel_fd >= 0 && pfd[1].revents) {
			errno = ECANCELED;
			return -1;
		}
		if (r > 0)
			return 1;
		if (r == 0)
			continue;
		if (errno != EINTR)
			return -1;
	}
}

static int connect_one(const struct addrinfo *ai, double deadline, int cancel_fd)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			ai->ai_protocol);
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS)
		goto fail;
	switch (wait_fd(fd, POLLOUT, deadline, cancel_fd)) {
	case 1:
		break;
	case 0:
		errno = ETIMEDOUT;
		/* fall through */
	default:
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		goto fail;
	if (soerr) {
		errno = soerr;
		goto fail;
	}
	return fd;
fail:
	soerr = errno;
	close(fd);
	errno = soerr;
	return -1;
}

static int send_all(int fd, const void *d, size_t n, double deadline, int cancel_fd)
{
	const char *p = d;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w > 0) {
			p += w;
			n -= w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		int r = wait_fd(fd, POLLOUT, deadline, cancel_fd);

		if (r <= 0) {
			if (!r)
				errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

/* The header named name (with its ':') in the header block h, or NULL. */
static const char *find_header(const char *h, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = strstr(h, "\r\n"); l; l = strstr(l, "\r\n")) {
		l += 2;
		if (!strncasecmp(l, name, n)) {
			l += n;
			while (*l == ' ' || *l == '\t')
				l++;
			return l;
		}
	}
	return NULL;
}

double http_retry_after(const char *s, double now)
{
	struct tm tm;
	const char *e;
	char *end;

	while (*s == ' ')
		s++;
	if (isdigit((unsigned char)*s)) {
		unsigned long v = strtoul(s, &end, 10);

		if (*end && *end != '\r' && *end != '\n' && *end != ' ')
			return -1;
		return v > 86400 * 365UL ? 86400 * 365.0 : (double)v;
	}
	memset(&tm, 0, sizeof(tm));
	e = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!e)
		return -1;
	double t = (double)timegm(&tm) - now;

	return t > 0 ? t : 0;
}

/* The response in buf (n bytes, NUL-terminated): r filled, 0 or -1. */
static int parse_response(char *buf, size_t n, struct http_response *r)
{
	char *hend = strstr(buf, "\r\n\r\n"), *body, *v;
	size_t k = 0;

	if (n < 12 || strncmp(buf, "HTTP/1.", 7) || !isdigit((unsigned char)buf[9]) ||
	    !isdigit((unsigned char)buf[10]) || !isdigit((unsigned char)buf[11]) ||
	    buf[8] != ' ')
		return -1;
	r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	if (r->status < 100 || r->status > 599)
		return -1;
	r->retry_after = -1;
	r->line[0] = '\0';
	if (!hend)
		return 0;
	*hend = '\0';
	if ((v = (char *)find_header(buf, "Retry-After:")))
		r->retry_after = http_retry_after(v, (double)time(NULL));
	body = hend + 4;
	v = (char *)find_header(buf, "Transfer-Encoding:");
	if (v && !strncasecmp(v, "chunked", 7)) {
		char *nl = strstr(body, "\r\n");

		body = nl ? nl + 2 : buf + n;
	}
	while (body < buf + n && *body && *body != '\n' && *body != '\r' &&
	       k < sizeof(r->line) - 1) {
		unsigned char c = *body++;

		r->line[k++] = c >= ' ' && c < 0x7f ? c : '?';
	}
	r->line[k] = '\0';
	return 0;
}

/* Content-Length of a complete header block in buf, or -1. */
static long response_length(const char *buf)
{
	const char *hend = strstr(buf, "\r\n\r\n");
	const char *p = buf;
	size_t n = strlen("content-length:");

	if (!hend)
		return -1;
	for (p = strstr(buf, "\r\n"); p && p < hend; p = strstr(p, "\r\n")) {
		p += 2;
		if (!strncasecmp(p, "content-length:", n)) {
			long v = strtol(p + n, NULL, 10);

			if (v < 0 || v > HTTP_MAX_RESPONSE)
				v = HTTP_MAX_RESPONSE;
			return (hend + 4 - buf) + v;
		}
	}
	return -1;
}

int http_post(const struct http_url *u, const char *path, const char *const *headers,
	      const void *body, size_t len, double timeout, int cancel_fd,
	      struct http_response *r, char *err, size_t errsize)
{
	double deadline = mono_now() + timeout;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *res = NULL, *ai;
	char *head = NULL, *buf = NULL, *extra = NULL;
	size_t n = 0, elen = 0;
	int fd = -1, ret = -1, e, gai;

	gai = getaddrinfo(u->host, u->port, &hints, &res);
	if (gai) {
		snprintf(err, errsize, "%s: %s", u->hostport,
			 gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
		return -1;
	}
	e = ECONNREFUSED;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = connect_one(ai, deadline, cancel_fd);
		if (fd < 0)
			e = errno;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errsize, "connect to %s: %s", u->hostport, strerror(e));
		return -1;
	}
	for (size_t i = 0; headers && headers[i]; i++) {
		size_t hl = strlen(headers[i]);

		extra = xrealloc(extra, elen + hl + 3);
		memcpy(extra + elen, headers[i], hl);
		memcpy(extra + elen + hl, "\r\n", 3);
		elen += hl + 2;
	}
	head = xasprintf("POST %s%s HTTP/1.1\r\nHost: %s\r\n%s%s%sContent-Length: %zu\r\n"
			 "User-Agent: memtap/" PACKAGE_VERSION "\r\nConnection: close\r\n%s\r\n",
			 u->prefix, path, u->hostport, u->auth ? "Authorization: " : "",
			 u->auth ? u->auth : "", u->auth ? "\r\n" : "", len, extra ? extra : "");
	if (send_all(fd, head, strlen(head), deadline, cancel_fd) < 0 ||
	    send_all(fd, body, len, deadline, cancel_fd) < 0) {
		/* the server may have answered early (413) and closed */
		if (errno != EPIPE && errno != ECONNRESET) {
			snprintf(err, errsize, "send to %s: %s", u->hostport, strerror(errno));
			goto out;
		}
	}
	buf = xmalloc(HTTP_MAX_RESPONSE + 1);
	for (;;) {
		ssize_t got;
		long want;

		buf[n] = '\0';
		want = response_length(buf);
		if (n >= HTTP_MAX_RESPONSE || (want >= 0 && (size_t)want <= n))
			break;
		got = recv(fd, buf + n, HTTP_MAX_RESPONSE - n, 0);
		if (got > 0) {
			n += got;
			continue;
		}
		if (got == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			if (n)
				break;	/* reset after an answer: keep it */
			snprintf(err, errsize, "read from %s: %s", u->hostport, strerror(errno));
			goto out;
		}
		int w = wait_fd(fd, POLLIN, deadline, cancel_fd);

		if (w < 0) {
			snprintf(err, errsize, "read from %s: %s", u->hostport, strerror(errno));
			goto out;
		}
		if (w == 0) {
			if (n && strstr(buf, "\r\n\r\n"))
				break;	/* headers in: enough to act on */
			snprintf(err, errsize, "%s: no answer within %g s", u->hostport, timeout);
			goto out;
		}
	}
	buf[n] = '\0';
	/* a NUL in the answer ends it for the parser: fine, it is bounded */
	if (parse_response(buf, n, r) < 0) {
		snprintf(err, errsize, "%s: not an HTTP answer", u->hostport);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(head);
	free(extra);
	free(buf);
	return ret;
}

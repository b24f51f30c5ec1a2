/*
 * http-client.h - the one HTTP request memtap makes: a blocking POST
 * over plain HTTP/1.1 to a server given by URL (memtap agent's pushes).
 *
 * No TLS: an https:// URL is refused with a message saying to push
 * through a local TLS-terminating proxy.  The server is not trusted: a
 * request never takes longer than its timeout (name resolution aside:
 * getaddrinfo() cannot be bounded, numeric hosts need none), and at most
 * HTTP_MAX_RESPONSE bytes of the answer are read.  No global state: the
 * functions may be called from any thread.
 */
#ifndef MEMTAP_HTTP_CLIENT_H
#define MEMTAP_HTTP_CLIENT_H

#include <stddef.h>

enum { HTTP_MAX_RESPONSE = 64 * 1024 };

/* A parsed http://[user:pass@]host[:port][/prefix]; owns its strings. */
struct http_url {
	char *host;		/* name or address, without IPv6 brackets */
	char *port;		/* "80" unless given */
	char *hostport;		/* the Host header's value, as written */
	char *prefix;		/* "" or "/a/b", no trailing slash */
	char *auth;		/* "Basic <base64(user:pass)>", or NULL */
};

/*
 * Parse url into u.  0, or -1 with a one-line message in err (which
 * quotes the URL): "bad push URL '...': why", or https's.
 */
int http_url_parse(const char *url, struct http_url *u, char *err, size_t errsize);
void http_url_release(struct http_url *u);

struct http_response {
	int status;		/* 100..599 */
	double retry_after;	/* seconds the server asked to wait, or -1 */
	char line[160];		/* the body's first line, printable ASCII only */
};

/*
 * POST body (len bytes) to u's prefix + path (which starts with '/' and
 * may hold a query), with the extra header lines in headers (each
 * "Name: value", NULL-terminated; Host, Content-Length, Connection and
 * u's Authorization are added).  The request ends within timeout
 * seconds of the call, connect included, or as soon as cancel_fd (-1:
 * none) is readable.  0 with *r filled when a status line came back
 * (whatever the status), or -1 with a one-line message in err (connect
 * refused, timed out, cancelled, not HTTP).
 */
int http_post(const struct http_url *u, const char *path, const char *const *headers,
	      const void *body, size_t len, double timeout, int cancel_fd,
	      struct http_response *r, char *err, size_t errsize);

/*
 * The value of a Retry-After header: delta-seconds or an HTTP-date
 * (IMF-fixdate) taken relative to now (Unix seconds).  Seconds to wait
 * (0 for a date past), or -1 when s is neither.
 */
double http_retry_after(const char *s, double now);

#endif /* MEMTAP_HTTP_CLIENT_H */

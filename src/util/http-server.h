/*
 * http-server.h - a minimal HTTP/1.1 server on a thread of its own, for
 * what `memtap agent` serves to Prometheus: pages published by the
 * caller, answered to GET and HEAD, one request per connection.
 *
 * The server's thread blocks every signal and touches nothing but its
 * own state.  What a client can cost is bounded: at most
 * HTTP_MAX_CONNS connections at once (one more is accepted and closed
 * at once), a request's header at most HTTP_MAX_HEADER bytes (431), the
 * request read within HTTP_DEADLINE_MS of the accept and a response
 * that makes no progress for as long closed; every socket is
 * nonblocking, so a client that sends nothing or reads nothing never
 * delays another.  Answers: 200 with the page, 404 for a path nothing
 * was published at (`/`: a short text index of the published paths),
 * 405 for a method other than GET and HEAD, 400 for a request that is
 * not HTTP, each with `Connection: close`.
 */
#ifndef MEMTAP_HTTP_SERVER_H
#define MEMTAP_HTTP_SERVER_H

#include <stddef.h>

#define HTTP_MAX_CONNS 32
#define HTTP_MAX_HEADER (16 * 1024)
#define HTTP_DEADLINE_MS 5000
#define HTTP_MAX_PAGES 16

struct http_server;

/*
 * Listen on addr and start the server's thread.  addr is "PORT",
 * "HOST:PORT" or "[V6ADDR]:PORT"; HOST is a numeric IPv4 or IPv6
 * address or "localhost" (127.0.0.1); without a host, 127.0.0.1.
 * Port 0: the kernel chooses (http_server_address() says which).
 * Returns NULL and a one-line message in err ("cannot listen on
 * 127.0.0.1:9464: address already in use", "bad metrics address
 * 'x:y': ...") on failure; nothing is left open then.
 */
struct http_server *http_server_start(const char *addr, char *err, size_t errsize);

/* The bound address as "HOST:PORT" ("[V6ADDR]:PORT"); owned by s. */
const char *http_server_address(const struct http_server *s);

/*
 * From now on, GET and HEAD of path (e.g. "/metrics") answer 200 with
 * body (len bytes) and content_type.  Everything is copied before the
 * server's lock is taken, and the lock only swaps pointers: the caller
 * is never blocked by a client.  A response being sent keeps the page
 * it began with.  At most HTTP_MAX_PAGES paths: a page at a further
 * path is dropped.  Thread-safe; dies only when memory is exhausted.
 */
void http_server_publish(struct http_server *s, const char *path, const char *content_type,
			 const char *body, size_t len);

/* Stop the thread, close every connection and free s, once no other
 * thread can call http_server_publish() on it.  NULL: nothing. */
void http_server_stop(struct http_server *s);

#endif /* MEMTAP_HTTP_SERVER_H */

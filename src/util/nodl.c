/*
 * nodl.c - dlopen, dlsym, dlclose and dlerror for memtap-static: no
 * dynamic loading.
 *
 * libdw's debuginfod client dlopens libdebuginfod.so.1 on its first
 * lookup by build ID.  In a statically linked memtap that would map the
 * host's libc.so.6 (and libcurl, ...) next to memtap's own C library:
 * two mallocs, two TLS layouts.  memtap-static is linked with
 * -Wl,--wrap=dlopen (and dlsym, dlclose, dlerror: see m4/mt_static.m4),
 * so every such call lands here: dlopen fails, dlerror says why, and
 * libdw goes on without debuginfod, as when it is not installed.  Not
 * one call reaches the C library's dlopen, which is then not linked.
 *
 * The name service switch loads its modules the same way (getaddrinfo
 * dlopens libnss_*.so): memtap-static is linked with
 * -Wl,--wrap=getaddrinfo and freeaddrinfo too, and resolves numeric
 * addresses and "localhost" alone (--push's URL; man memtap, BUGS).
 *
 * No config.h: configure's check includes this file as it is.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

void *__wrap_dlopen(const char *file, int mode);
void *__wrap_dlsym(void *handle, const char *name);
int __wrap_dlclose(void *handle);
char *__wrap_dlerror(void);

static char nodl_msg[] = "memtap-static: no dynamic loading in a static executable";
static __thread int nodl_failed;

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	nodl_failed = 1;
	return NULL;
}

void *__wrap_dlsym(void *handle, const char *name)
{
	(void)handle;
	(void)name;
	nodl_failed = 1;
	return NULL;
}

int __wrap_dlclose(void *handle)
{
	(void)handle;
	nodl_failed = 1;
	return -1;
}

/* As dlerror(3): the message once after a failure, then NULL. */
char *__wrap_dlerror(void)
{
	if (!nodl_failed)
		return NULL;
	nodl_failed = 0;
	return nodl_msg;
}

int __wrap_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		       struct addrinfo **res);
void __wrap_freeaddrinfo(struct addrinfo *ai);

/* One answer in one block: freeaddrinfo() is one free(). */
struct nodl_addr {
	struct addrinfo ai;
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} sa;
};

int __wrap_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		       struct addrinfo **res)
{
	int family = hints ? hints->ai_family : AF_UNSPEC;
	struct nodl_addr *r;
	char *end = NULL;
	long port = 0;

	if (service) {
		port = strtol(service, &end, 10);
		if (!*service || *end || port < 0 || port > 65535)
			return EAI_SERVICE;
	}
	if (!node || !strcmp(node, "localhost"))
		node = family == AF_INET6 ? "::1" : "127.0.0.1";
	r = calloc(1, sizeof(*r));
	if (!r)
		return EAI_MEMORY;
	if (family != AF_INET6 && inet_pton(AF_INET, node, &r->sa.in.sin_addr) == 1) {
		r->sa.in.sin_family = AF_INET;
		r->sa.in.sin_port = htons((uint16_t)port);
		r->ai.ai_family = AF_INET;
		r->ai.ai_addrlen = sizeof(r->sa.in);
	} else if (family != AF_INET && inet_pton(AF_INET6, node, &r->sa.in6.sin6_addr) == 1) {
		r->sa.in6.sin6_family = AF_INET6;
		r->sa.in6.sin6_port = htons((uint16_t)port);
		r->ai.ai_family = AF_INET6;
		r->ai.ai_addrlen = sizeof(r->sa.in6);
	} else {
		free(r);
		return EAI_NONAME;
	}
	r->ai.ai_socktype = hints && hints->ai_socktype ? hints->ai_socktype : SOCK_STREAM;
	r->ai.ai_addr = (struct sockaddr *)&r->sa;
	*res = &r->ai;
	return 0;
}

void __wrap_freeaddrinfo(struct addrinfo *ai)
{
	free(ai);
}

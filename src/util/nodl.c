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
 * No config.h: configure's check includes this file as it is.
 */
#include <stddef.h>

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

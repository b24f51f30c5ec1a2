/*
 * fake-pagesize.c - an LD_PRELOAD for memtap itself: sysconf() says
 * pages are 16 KiB (a CPU with larger pages, as arm64's can be), the
 * rest of sysconf as it was.  It takes itself out of LD_PRELOAD at
 * load, so that the command memtap starts runs without it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void unset(void)
{
	unsetenv("LD_PRELOAD");
}

long sysconf(int name)
{
	static long (*real)(int);

	if (name == _SC_PAGESIZE)
		return 16384;
	if (!real)
		real = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
	return real(name);
}

/*
 * dl-busy-lib.c - the plugin of dl-busy: mallocx(size, flags), jemalloc's
 * name (a result probe: its stub calls it and returns into the stub),
 * which tail-calls plug_hook: a caller of it blocked in plug_hook has a
 * return address into the stub and none into this library, which may
 * then be unloaded under it.
 */
#include <stddef.h>

void *(*plug_hook)(size_t);

void *mallocx(size_t size, int flags)
{
	(void)flags;
	return plug_hook(size);	/* a tail call: built with sibling calls */
}

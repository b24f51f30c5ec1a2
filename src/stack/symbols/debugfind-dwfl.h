/*
 * debugfind-dwfl.h - debugfind.h as libdwfl's find_debuginfo callback,
 * the one that the unwinder's Dwfls (unwind-dwfl.c) and the
 * symbolizer's (through debug-cache.c) use instead of
 * dwfl_standard_find_debuginfo(), which opens every candidate path
 * itself (following links, waiting on FIFOs) and may ask debuginfod.
 *
 * Compiled only with libdw (HAVE_LIBDW).
 */
#ifndef MEMTAP_DEBUGFIND_DWFL_H
#define MEMTAP_DEBUGFIND_DWFL_H

#include <sys/types.h>
#include <elfutils/libdwfl.h>

/*
 * The body of a find_debuginfo for mod, a module whose path (file_name)
 * is in pid's root (0: memtap's): its debug file (debuglink_file and
 * debuglink_crc from its .gnu_debuglink), or, when libdwfl asks for the
 * dwz file of the module's DWARF (debuglink_file is then that file's
 * name), that one.  An fd and *debuginfo_file_name (malloc'd), or -1.
 */
int debugfind_dwfl(Dwfl_Module *mod, pid_t pid, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name);

/* Is this call of find_debuginfo for mod's dwz file (see above)? */
int debugfind_dwfl_is_alt(Dwfl_Module *mod, const char *debuglink_file);

#endif /* MEMTAP_DEBUGFIND_DWFL_H */

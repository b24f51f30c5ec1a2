/*
 * debug-cache.h - uncompressed copies of compressed debug files, so that
 * only the first run inflates them.
 *
 * A separate debug file whose .debug_* sections are compressed
 * (SHF_COMPRESSED, as in Debian's debug packages) is inflated whole by
 * libelf each time libdw opens it: about 60 ms for the C library's.  The
 * first time, memtap writes an uncompressed copy, named by the file's
 * build-id, into its cache directory, and opens that copy from then on:
 *
 *   $MEMTAP_DEBUG_CACHE, else $XDG_CACHE_HOME/memtap/debug, else
 *   $HOME/.cache/memtap/debug; MEMTAP_DEBUG_CACHE=0 (or empty): none.
 *
 * The directory is made mode 0700 and used only when it is the effective
 * user's and writable by no one else (held open from then on); a copy is
 * written to a temporary name and renamed, and used only when it is a
 * regular file (no link followed) with the debug file's build-id.  Any failure: the debug
 * file as it is, as before.
 */
#ifndef MEMTAP_DEBUG_CACHE_H
#define MEMTAP_DEBUG_CACHE_H

#include <elfutils/libdwfl.h>

/*
 * A Dwfl_Callbacks.find_debuginfo: the debug file memtap finds
 * (debugfind-dwfl.h), or its uncompressed copy.  The Dwfl_Module's
 * userdata is the pid whose root the module's path is in, as
 * (void *)(intptr_t)pid (0: memtap's own).
 */
int debug_cache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name);

/* Copies written and copies used, so far (for -v). */
void debug_cache_counts(unsigned *written, unsigned *used);

#endif /* MEMTAP_DEBUG_CACHE_H */

/*
 * unwind-dwfl.h - the Dwfl of one process's unwinder (unwind-libdw.c):
 * its modules reported from the process's struct proc_modules, their
 * ELF files opened from the module table (through /proc/PID/map_files
 * or /proc/PID/root: libdwfl's own dwfl_linux_proc_find_elf opens the
 * path as memtap sees it, which fails across mount namespaces).
 *
 * Compiled only with libdw (HAVE_LIBDW).
 */
#ifndef MEMTAP_UNWIND_DWFL_H
#define MEMTAP_UNWIND_DWFL_H

#include <elfutils/libdwfl.h>

struct proc_modules;

/* A new Dwfl with memtap's callbacks (dwfl_end() frees it), or NULL. */
Dwfl *unwind_dwfl_new(void);

/*
 * Report every module instance of pm to dwfl: dwfl_report_begin(), a
 * dwfl_report_module() for each, dwfl_report_end().  A module reported
 * again with the same name and range keeps its Dwfl_Module and caches;
 * the others are dropped.  [vdso] and modules without a path are left
 * out.
 */
void unwind_dwfl_report(Dwfl *dwfl, const struct proc_modules *pm);

#endif /* MEMTAP_UNWIND_DWFL_H */

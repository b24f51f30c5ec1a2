/*
 * unwind-dwfl.c - the Dwfl of one process's unwinder (unwind-dwfl.h).
 *
 * Compiled only with libdw (HAVE_LIBDW).
 */
#include "config.h"

#ifdef HAVE_LIBDW

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stack/symbols/debugfind-dwfl.h"
#include "stack/modules.h"
#include "stack/unwind/unwind-dwfl.h"

/* The module id travels in the Dwfl_Module's userdata, as id + 1. */
static int dw_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	uintptr_t v = (uintptr_t)*userdata;
	const struct module *m = v ? module_get((uint32_t)(v - 1)) : NULL;
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	*elfp = NULL;
	if (!m)
		return -1;
	fd = module_open(m);
	if (fd < 0)
		return -1;
	*file_name = strdup(m->path);
	return fd;
}

/* The module's debug file, found by memtap (debugfind.h), in its process's root. */
static int dw_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	uintptr_t v = (uintptr_t)*userdata;
	const struct module *m = v ? module_get((uint32_t)(v - 1)) : NULL;

	(void)modname;
	(void)base;
	if (!m)
		return -1;
	return debugfind_dwfl(mod, m->pid, file_name, debuglink_file, debuglink_crc,
			      debuginfo_file_name);
}

static char *dw_debuginfo_path;

static const Dwfl_Callbacks dw_callbacks = {
	.find_elf = dw_find_elf,
	.find_debuginfo = dw_find_debuginfo,
	.debuginfo_path = &dw_debuginfo_path,
};

Dwfl *unwind_dwfl_new(void)
{
	return dwfl_begin(&dw_callbacks);
}

void unwind_dwfl_report(Dwfl *dwfl, const struct proc_modules *pm)
{
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < pm->nranges; ) {
		const struct module_range *r = &pm->ranges[i];
		const struct module *m = module_get(r->module);
		uint64_t low = r->start, high = r->end;
		size_t j = i + 1;

		/* the ranges of one instance: same module and bias */
		while (j < pm->nranges && pm->ranges[j].module == r->module &&
		       pm->ranges[j].bias == r->bias) {
			high = pm->ranges[j].end;
			j++;
		}
		i = j;
		if (!m || m->path[0] != '/')
			continue;	/* [vdso] */
		if (m->elf_ok) {
			low = r->bias + m->first_vaddr;
			high = r->bias + m->end_vaddr;
		}
		Dwfl_Module *mod = dwfl_report_module(dwfl, m->path, low, high);
		void **ud = NULL;

		if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud)
			*ud = (void *)(uintptr_t)(m->id + 1);
	}
	dwfl_report_end(dwfl, NULL, NULL);
}

#endif /* HAVE_LIBDW */

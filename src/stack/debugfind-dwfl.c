/*
 * debugfind-dwfl.c - debugfind.h for libdwfl (debugfind-dwfl.h).
 *
 * libdwfl calls find_debuginfo for two files: the module's debug file,
 * with the .gnu_debuglink of the module's main ELF (or none), and, once
 * the module's DWARF is loaded, its .gnu_debugaltlink file, with that
 * link's name and no CRC.  The debuglink name is a pointer into the main
 * ELF's section, so the two calls are told apart by that pointer: the
 * Dwarf that the second one needs is loaded by then (and asking for it
 * during the first would search again).
 */
#include "config.h"

#ifdef HAVE_LIBDW

#include <elfutils/libdwelf.h>

#include "stack/debugfind.h"
#include "stack/debugfind-dwfl.h"

int debugfind_dwfl_is_alt(Dwfl_Module *mod, const char *debuglink_file)
{
	GElf_Addr bias = 0;
	Elf *elf;
	GElf_Word crc;

	if (!debuglink_file)
		return 0;
	elf = dwfl_module_getelf(mod, &bias);
	return !elf || dwelf_elf_gnu_debuglink(elf, &crc) != debuglink_file;
}

int debugfind_dwfl(Dwfl_Module *mod, pid_t pid, const char *file_name,
		   const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	GElf_Addr vaddr;
	const unsigned char *bits;
	int len;

	if (debugfind_dwfl_is_alt(mod, debuglink_file)) {
		Dwarf_Addr dbias;
		Dwarf *dw = dwfl_module_getdwarf(mod, &dbias);
		const char *altname;
		const void *id;
		ssize_t n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &altname, &id) : -1;

		if (n <= 0 || altname != debuglink_file)
			return -1;
		return debugfind_open_alt(pid, file_name, altname, id, (size_t)n,
					  debuginfo_file_name);
	}
	len = dwfl_module_build_id(mod, &bits, &vaddr);

	struct debugfind_req q = {
		.pid = pid,
		.path = file_name,
		.build_id = len > 0 ? bits : NULL,
		.build_id_len = len > 0 ? (size_t)len : 0,
		.debuglink = debuglink_file,
		.crc = debuglink_crc,
	};

	return debugfind_open(&q, debuginfo_file_name);
}

#endif /* HAVE_LIBDW */

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
 *
 * A dwz file not found must not be searched for again: libdw's
 * dwarf_getalt() would, at the first reference into it, open paths of
 * its own with open() (the debug file's directory, which the target's
 * user may own: a FIFO there would block).  The Dwarf is given an empty
 * alternate instead, made in memory once for each thread that looks
 * (memtap's main thread, the symbolizer's: libdw's lookups write to
 * their Dwarf): references into it find nothing.
 */
#include "config.h"

#ifdef HAVE_LIBDW

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <elfutils/libdwelf.h>

#include "arch/arch.h"
#include "stack/symbols/debugfind.h"
#include "stack/symbols/debugfind-dwfl.h"
#include "util/error.h"

static __thread Dwarf *empty_alt;
static __thread int empty_tried;
/* every thread's, kept for the run (Dwfls of any thread may point to them) */
static Dwarf *empty_alts[8];
static unsigned n_empty_alts;

/* An ELF file of one 1-byte .debug_line (the least libdw takes as DWARF), in a memfd. */
static void make_empty_alt(void)
{
	static const char shstr[] = "\0.shstrtab\0.debug_line";
	static const char line[1];
	int fd = memfd_create("memtap-no-dwz", MFD_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!elf || !gelf_newehdr(elf, ELFCLASS64) || !gelf_getehdr(elf, &eh))
		goto fail;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_REL;
	eh.e_machine = ARCH_ELF_MACHINE;
	eh.e_version = EV_CURRENT;
	for (int i = 0; i < 2; i++) {
		if (!(scn = elf_newscn(elf)) || !(d = elf_newdata(scn)) || !gelf_getshdr(scn, &sh))
			goto fail;
		d->d_buf = (void *)(i ? line : shstr);
		d->d_size = i ? sizeof(line) : sizeof(shstr);
		d->d_align = 1;
		sh.sh_type = i ? SHT_PROGBITS : SHT_STRTAB;
		sh.sh_name = i ? 11 : 1;
		if (!gelf_update_shdr(scn, &sh))
			goto fail;
		if (!i)
			eh.e_shstrndx = (Elf64_Half)elf_ndxscn(scn);
	}
	if (!gelf_update_ehdr(elf, &eh) || elf_update(elf, ELF_C_WRITE) < 0)
		goto fail;
	elf_end(elf);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		empty_alt = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!empty_alt)
		goto fail;
	/* the fd, Elf and Dwarf are kept for the run */
	unsigned i = __atomic_fetch_add(&n_empty_alts, 1, __ATOMIC_RELAXED);

	if (i < sizeof(empty_alts) / sizeof(empty_alts[0]))
		empty_alts[i] = empty_alt;
	return;
fail:
	debug_msg("no empty dwz file to stand for those not found: %s", elf_errmsg(-1));
	if (elf)
		elf_end(elf);
	close(fd);
}

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

		int fd;

		if (n <= 0 || altname != debuglink_file)
			return -1;
		fd = debugfind_open_alt(pid, file_name, altname, id, (size_t)n, debuginfo_file_name);
		if (fd < 0) {
			if (!empty_tried++)
				make_empty_alt();
			if (empty_alt)
				dwarf_setalt(dw, empty_alt);
		}
		return fd;
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

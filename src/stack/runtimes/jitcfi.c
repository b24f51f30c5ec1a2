/*
 * jitcfi.c - the CFI of run-time code from its jitdump (jitcfi.h).
 *
 * The ELF image: its header, the .eh_frame_hdr (when the record has
 * one), the .eh_frame, the section names and four section headers
 * (null, .eh_frame_hdr, .eh_frame, .shstrtab).  libdw reads the
 * .eh_frame_hdr's table only when its pointer to the .eh_frame agrees
 * with the section's address, and searches the .eh_frame otherwise; an
 * image it refuses with the .eh_frame_hdr is tried once without.
 * The last image stays, for the next pcs of the same code.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBDW

#include <elf.h>
#include <libelf.h>

#include "arch/arch.h"
#include "stack/runtimes/jitcfi.h"
#include "stack/runtimes/jitnames.h"
#include "util/xmalloc.h"

static const char names[] = "\0.eh_frame_hdr\0.eh_frame\0.shstrtab";
#define NAME_HDR 1
#define NAME_EH 15
#define NAME_STR 25
#define ALIGN8(x) (((x) + 7) & ~(uint64_t)7)

static struct {
	uint32_t module;
	uint64_t code_start, code_end;
	unsigned char *data;		/* the record's .eh_frame and .eh_frame_hdr */
	size_t eh_size, hdr_size;
	char *image;
	Elf *elf;
	Dwarf_CFI *cfi;
} last;

static void section(Elf64_Shdr *sh, uint32_t name, uint32_t type, uint64_t addr, uint64_t off,
		    uint64_t size, uint64_t align)
{
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_flags = type == SHT_STRTAB ? 0 : SHF_ALLOC;
	sh->sh_addr = addr;
	sh->sh_offset = off;
	sh->sh_size = size;
	sh->sh_addralign = align;
}

/* The image of last's data, its .eh_frame at eh_addr; with_hdr: and the
 * .eh_frame_hdr right after it.  Into last.image and last.elf. */
static Elf *build(uint64_t eh_addr, int with_hdr)
{
	size_t hdr = with_hdr ? last.hdr_size : 0;
	uint64_t hdr_off = sizeof(Elf64_Ehdr), eh_off = ALIGN8(hdr_off + hdr);
	uint64_t str_off = eh_off + last.eh_size, sh_off = ALIGN8(str_off + sizeof(names));
	size_t size = (size_t)sh_off + 4 * sizeof(Elf64_Shdr);
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;

	last.image = xcalloc(1, size);
	eh = (Elf64_Ehdr *)last.image;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = ARCH_ELF_MACHINE;
	eh->e_version = EV_CURRENT;
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 4;
	eh->e_shstrndx = 3;
	memcpy(last.image + hdr_off, last.data + last.eh_size, hdr);
	memcpy(last.image + eh_off, last.data, last.eh_size);
	memcpy(last.image + str_off, names, sizeof(names));
	sh = (Elf64_Shdr *)(last.image + sh_off);
	/* a section of size 0 where there is no .eh_frame_hdr: libdw
	 * reads no table from it */
	section(&sh[1], with_hdr ? NAME_HDR : NAME_STR, SHT_PROGBITS,
		eh_addr + last.eh_size, hdr_off, hdr, 4);
	section(&sh[2], NAME_EH, SHT_PROGBITS, eh_addr, eh_off, last.eh_size, 8);
	section(&sh[3], NAME_STR, SHT_STRTAB, 0, str_off, sizeof(names), 1);
	elf_version(EV_CURRENT);
	last.elf = elf_memory(last.image, size);
	return last.elf;
}

void jit_cfi_release(void)
{
	if (last.cfi)
		dwarf_cfi_end(last.cfi);
	if (last.elf)
		elf_end(last.elf);
	free(last.image);
	free(last.data);
	memset(&last, 0, sizeof(last));
}

Dwarf_CFI *jit_cfi_get(uint32_t module, uint64_t pc)
{
	struct jit_unwind u;

	jit_names_note(module, pc);
	if (jit_names_unwind(module, pc, &u) < 0 || !u.eh_frame_size ||
	    u.code_end <= u.code_start || u.code_end > UINT64_MAX - 8)
		return NULL;
	if (last.data && last.module == module && last.code_start == u.code_start &&
	    last.code_end == u.code_end && last.eh_size == u.eh_frame_size &&
	    last.hdr_size == u.eh_frame_hdr_size &&
	    memcmp(last.data, u.eh_frame, u.eh_frame_size + u.eh_frame_hdr_size) == 0)
		return last.cfi;
	jit_cfi_release();
	last.module = module;
	last.code_start = u.code_start;
	last.code_end = u.code_end;
	last.eh_size = u.eh_frame_size;
	last.hdr_size = u.eh_frame_hdr_size;
	last.data = xmalloc(u.eh_frame_size + u.eh_frame_hdr_size);
	memcpy(last.data, u.eh_frame, u.eh_frame_size + u.eh_frame_hdr_size);
	/* perf's genelf: the .eh_frame after the code, 8-byte aligned */
	for (int with_hdr = last.hdr_size > 0; with_hdr >= 0; with_hdr--) {
		uint64_t eh_addr = u.code_start + ALIGN8(u.code_end - u.code_start);

		if (build(eh_addr, with_hdr) && (last.cfi = dwarf_getcfi_elf(last.elf)))
			break;
		if (last.elf)
			elf_end(last.elf);
		free(last.image);
		last.elf = NULL;
		last.image = NULL;
	}
	return last.cfi;
}

#endif /* HAVE_LIBDW */

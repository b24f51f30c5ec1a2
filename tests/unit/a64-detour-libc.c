/*
 * a64-detour-libc.c - the arm64 detour planner of
 * src/arch/aarch64/detour.c over every function entry of arm64 ELF
 * files (Debian's arm64 libc, libc6-arm64-cross), read on this host
 * with libelf: the planner is a pure function of the words it reads.
 *
 *   a64-detour-libc [-b PERCENT] [-v] [-w NAME,...] FILE...
 *
 * Every symbol of .symtab and .dynsym that is an STT_FUNC with a size,
 * once per address, its code read from the file (its size, at most
 * 64 KiB, after arch_detour_padded_size()): planned with
 * arch_detour_plan(), or refused with its why.  A planned entry is also
 * relocated to a slot 64 MiB above it, its copy and the glue of each
 * probe kind written there, and the patch must be recognised again by
 * arch_patched_target().  Prints
 *
 *   FILE: N functions: planned P (X%), with a landing pad L (PACIASP S);
 *     first instruction pc-relative R; refused F
 *   refused: WHY: N ...
 *
 * With -w, each NAME (the C library's syscall wrappers that memtap
 * detours: probe/probes.c) must be a function of some FILE, planned and
 * through after_plan() as above; one line each:
 *
 *   wrapper NAME ADDR: planned, displaced WORD (pc-relative P), site +OFF
 *
 * or "wrapper NAME: ..." with what failed.
 *
 * Exit status 1 when fewer than PERCENT are planned, a planned entry
 * fails later or a NAME of -w is missing or refused, 77 when no FILE is
 * an arm64 ELF with functions, 99 on other failures.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "arch/detour-plan.h"
#include "arch/stub-abi.h"

/* dt_template and the common routines: tests/unit/a64-dt-template.c. */

#define MAX_READ 0x10000
#define SLOT_DIST 0x4000000	/* 64 MiB */

struct image {
	const unsigned char *map;
	size_t size;
	GElf_Phdr loads[16];
	int nloads;
};

/* Up to len bytes at addr from the file: how many, 0 when addr is not in it. */
static size_t image_read(const struct image *im, uint64_t addr, uint8_t *buf, size_t len)
{
	for (int i = 0; i < im->nloads; i++) {
		const GElf_Phdr *ph = &im->loads[i];
		uint64_t off;

		if (addr < ph->p_vaddr || addr - ph->p_vaddr >= ph->p_filesz)
			continue;
		if (len > ph->p_filesz - (addr - ph->p_vaddr))
			len = ph->p_filesz - (addr - ph->p_vaddr);
		off = ph->p_offset + (addr - ph->p_vaddr);
		if (off > im->size)
			return 0;
		if (len > im->size - off)
			len = im->size - off;
		memcpy(buf, im->map + off, len);
		return len;
	}
	return 0;
}

struct why_count {
	const char *why;
	unsigned n;
};

struct totals {
	unsigned funcs, planned, pad, pac, pcrel, tail, failed;
	struct why_count whys[16];
	unsigned nwhys;
};

static int verbose;

#define MAX_WANTED 16

/* -w: the functions that must be planned, found by name in any symbol table */
static struct wanted {
	const char *name;
	uint64_t addr, size;
	int found;
} wanted[MAX_WANTED];
static int nwanted;

static void want_name(const char *name, const GElf_Sym *sym)
{
	for (int i = 0; i < nwanted; i++)
		if (!wanted[i].found && !strcmp(wanted[i].name, name)) {
			wanted[i].addr = sym->st_value;
			wanted[i].size = sym->st_size;
			wanted[i].found = 1;
		}
}

static void count_why(struct totals *t, const char *why)
{
	for (unsigned i = 0; i < t->nwhys; i++)
		if (!strcmp(t->whys[i].why, why)) {
			t->whys[i].n++;
			return;
		}
	if (t->nwhys < sizeof(t->whys) / sizeof(t->whys[0]))
		t->whys[t->nwhys++] = (struct why_count){ why, 1 };
}

/* Is v not in the sorted seen[0..*n) yet?  Then it is put in its place (room for one more). */
static int first_seen(uint64_t *seen, size_t *n, uint64_t v)
{
	size_t lo = 0, hi = *n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (seen[mid] == v)
			return 0;
		if (seen[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(seen + lo + 1, seen + lo, (*n - lo) * sizeof(*seen));
	seen[lo] = v;
	(*n)++;
	return 1;
}

/* Everything a planned entry goes through after its plan: 0, or -1 with a message. */
static int after_plan(const char *file, uint64_t addr, struct plan *p)
{
	uint64_t slot = (addr + SLOT_DIST) & ~(uint64_t)15;
	uint8_t code[DT_SLOT_SIZE], patch[ARCH_PATCH_LEN], entry[8] = { 0 };
	uint64_t to;
	size_t off;
	int err;

	if (!arch_detour_in_reach(p, slot)) {
		printf("%s: %#" PRIx64 ": a slot 64 MiB away is out of reach\n", file, addr);
		return -1;
	}
	for (int kind = 0; kind < 3; kind++)
		arch_detour_glue(slot - DT_TEMPLATE_MAX, 0, slot, kind == 1, kind == 2,
				 (uint32_t)(kind == 1 ? SK_ARG0 << 16 : DF_SETDEL << 24), code);
	err = arch_detour_relocate(p, slot + DT_ORIG, code + DT_ORIG);
	if (err < 0) {
		printf("%s: %#" PRIx64 ": relocation: %s\n", file, addr, strerror(-err));
		return -1;
	}
	if (arch_detour_moved_pc(p, slot + DT_ORIG, p->site + p->len, &to) < 0) {
		printf("%s: %#" PRIx64 ": the pc after the site does not move\n", file, addr);
		return -1;
	}
	arch_detour_patch(patch, p->site, slot);
	if (p->site != addr)
		a64_put(entry, p->cpu.pad);	/* the pad stays */
	memcpy(entry + (p->site - addr), patch, sizeof(patch));
	if (arch_patched_target(entry, p->site - addr + sizeof(patch), addr, &off) != slot ||
	    off != p->site - addr) {
		printf("%s: %#" PRIx64 ": the patch is not recognised\n", file, addr);
		return -1;
	}
	return 0;
}

/* A -w function found in file: planned and through after_plan(), 0; else -1, said. */
static int check_wanted(const char *file, const struct image *im, struct wanted *w, uint8_t *buf)
{
	size_t size = w->size < MAX_READ - 16 ? (size_t)w->size : MAX_READ - 16, got;
	const char *why = NULL;
	struct plan p;

	w->found = 2;	/* checked: not again for another file */
	got = image_read(im, w->addr, buf, size + 16);
	if (got < size) {
		printf("wrapper %s: %s: not in an executable segment\n", w->name, file);
		return -1;
	}
	size = arch_detour_padded_size(w->addr, buf, got, size);
	if (arch_detour_plan(w->addr, buf, size, &p, &why) < 0) {
		printf("wrapper %s %#" PRIx64 ": refused: %s\n", w->name, w->addr,
		       why ? why : "(no why)");
		return -1;
	}
	if (after_plan(file, w->addr, &p) < 0)
		return -1;
	printf("wrapper %s %#" PRIx64 ": planned, displaced %08" PRIx32 " (pc-relative %d), "
	       "site +%" PRIu64 "\n", w->name, w->addr, p.cpu.insn[0].word,
	       !!(p.cpu.insn[0].flags & A64_PCREL), p.site - w->addr);
	return 0;
}

static int scan(const char *file, struct totals *t)
{
	struct image im = { 0 };
	uint64_t *seen = NULL;
	size_t nseen = 0, cap = 0;
	struct stat st;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t nph;
	uint8_t *buf;
	Elf *elf;
	int fd, ret = 77;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		printf("%s: %s\n", file, strerror(errno));
		return 99;
	}
	im.size = (size_t)st.st_size;
	im.map = mmap(NULL, im.size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (im.map == MAP_FAILED) {
		printf("%s: mmap: %s\n", file, strerror(errno));
		return 99;
	}
	elf = elf_memory((char *)im.map, im.size);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_AARCH64 ||
	    elf_getphdrnum(elf, &nph) < 0) {
		printf("%s: not an arm64 ELF file\n", file);
		goto out;
	}
	for (size_t i = 0; i < nph && im.nloads < 16; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			im.loads[im.nloads++] = ph;
	}
	buf = malloc(MAX_READ);
	if (!buf)
		return 99;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym sym;
			const char *why = NULL, *name;
			struct plan p;
			size_t got, size;

			if (!gelf_getsym(data, (int)k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || sym.st_shndx == SHN_UNDEF)
				continue;
			if (nseen == cap) {
				cap = cap ? 2 * cap : 4096;
				seen = realloc(seen, cap * sizeof(*seen));
				if (!seen)
					return 99;
			}
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name)
				want_name(name, &sym);
			if (!first_seen(seen, &nseen, sym.st_value))
				continue;
			size = sym.st_size < MAX_READ - 16 ? (size_t)sym.st_size : MAX_READ - 16;
			got = image_read(&im, sym.st_value, buf, size + 16);
			if (got < size)
				continue;	/* not in an executable segment */
			size = arch_detour_padded_size(sym.st_value, buf, got, size);
			t->funcs++;
			if (arch_detour_plan(sym.st_value, buf, size, &p, &why) < 0) {
				count_why(t, why ? why : "(no why)");
				if (verbose)
					printf("refused %#" PRIx64 " %s: %s\n", (uint64_t)sym.st_value,
					       name ? name : "?", why ? why : "(no why)");
				continue;
			}
			t->planned++;
			t->pad += p.site != sym.st_value;
			t->pac += p.cpu.pad == 0xd503233f || p.cpu.pad == 0xd503237f;
			t->pcrel += !!(p.cpu.insn[0].flags & A64_PCREL);
			t->tail += p.tail;
			if (after_plan(file, sym.st_value, &p) < 0)
				t->failed++;
		}
	}
	for (int i = 0; i < nwanted; i++)
		if (wanted[i].found == 1 && check_wanted(file, &im, &wanted[i], buf) < 0)
			t->failed++;
	free(buf);
	ret = t->funcs ? 0 : 77;
out:
	free(seen);
	if (elf)
		elf_end(elf);
	munmap((void *)im.map, im.size);
	return ret;
}

int main(int argc, char **argv)
{
	struct totals t = { 0 };
	double floor_pct = 0;
	int opt, any = 0;

	while ((opt = getopt(argc, argv, "b:vw:")) != -1) {
		if (opt == 'b') {
			floor_pct = atof(optarg);
		} else if (opt == 'v') {
			verbose = 1;
		} else if (opt == 'w') {
			for (char *n = strtok(optarg, ","); n; n = strtok(NULL, ","))
				if (nwanted < MAX_WANTED)
					wanted[nwanted++].name = n;
		} else {
			return 99;
		}
	}
	if (optind >= argc || elf_version(EV_CURRENT) == EV_NONE)
		return 99;
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = optind; i < argc; i++) {
		int st = scan(argv[i], &t);

		if (st == 99)
			return 99;
		any |= st == 0;
	}
	if (!any)
		return 77;
	printf("all: %u functions: planned %u (%.1f%%), with a landing pad %u (PACIASP or "
	       "PACIBSP %u); first instruction pc-relative %u, ending the plan %u; refused %u; "
	       "failed after the plan %u\n",
	       t.funcs, t.planned, 100.0 * t.planned / t.funcs, t.pad, t.pac, t.pcrel, t.tail,
	       t.funcs - t.planned, t.failed);
	for (unsigned i = 0; i < t.nwhys; i++)
		printf("refused: %s: %u\n", t.whys[i].why, t.whys[i].n);
	for (int i = 0; i < nwanted; i++)
		if (!wanted[i].found) {
			printf("wrapper %s: no such function\n", wanted[i].name);
			t.failed++;
		}
	if (t.failed || 100.0 * t.planned / t.funcs < floor_pct)
		return 1;
	return 0;
}

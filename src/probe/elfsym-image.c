/*
 * elfsym-image.c - one ELF file's symbols (.symtab, .dynsym), its
 * PT_LOAD segments, DT_NEEDED, soname, debug link and build id (libelf),
 * and the matching of Rust mangled names against a path.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <sys/stat.h>

#include "linux/tfile.h"
#include "probe/elfsym-image.h"
#include "util/xmalloc.h"

/* ---- one image ---- */

static size_t pool_add(struct elfsym_image *img, const char *s, size_t len)
{
	size_t off = img->pool_len;

	img->pool = xgrowarray(img->pool, &img->pool_cap, img->pool_len + len + 1, 1);
	memcpy(img->pool + off, s, len);
	img->pool[off + len] = '\0';
	img->pool_len += len + 1;
	return off;
}

/*
 * The symbols of a symbol table section.  Its string table goes into
 * the pool whole, in one copy (a NUL after it ends the last name): a
 * symbol's name is an offset into that copy.
 */
static void read_symbols(struct elfsym_image *img, Elf *elf, Elf_Scn *scn,
			 const GElf_Shdr *sh, int dynamic)
{
	Elf_Data *data = elf_getdata(scn, NULL), *str;
	Elf_Scn *strscn = elf_getscn(elf, sh->sh_link);
	size_t ent = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t n, base;

	if (!data || !ent || !data->d_buf || !strscn)
		return;
	str = elf_getdata(strscn, NULL);
	if (!str || !str->d_buf || !str->d_size)
		return;
	base = pool_add(img, str->d_buf, str->d_size);
	n = data->d_size / ent;
	img->syms = xgrowarray(img->syms, &img->syms_cap, img->nsyms + n, sizeof(*img->syms));
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_name == 0 || s.st_name >= str->d_size)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT &&
		    type != STT_NOTYPE)
			continue;
		name = img->pool + base + s.st_name;
		if (!*name)
			continue;
		if (name[0] == '_' && (name[1] == 'R' || (name[1] == 'Z' && name[2] == 'N')))
			img->rust_candidates++;

		struct sym *y = &img->syms[img->nsyms++];

		y->name = base + s.st_name;
		y->value = s.st_value;
		y->size = s.st_size;
		y->bind = GELF_ST_BIND(s.st_info);
		y->type = type;
		y->dynamic = dynamic;
		y->visible = GELF_ST_VISIBILITY(s.st_other) == STV_DEFAULT ||
			     GELF_ST_VISIBILITY(s.st_other) == STV_PROTECTED;
	}
}

static void read_dynamic(struct elfsym_image *img, Elf *elf, Elf_Scn *scn,
			 const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t ent = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);

	if (!data || !ent)
		return;
	for (size_t i = 0; i < data->d_size / ent; i++) {
		GElf_Dyn d;
		const char *s;

		if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME)
			continue;
		s = elf_strptr(elf, sh->sh_link, d.d_un.d_val);
		if (!s)
			continue;
		if (d.d_tag == DT_SONAME) {
			img->soname = (ssize_t)pool_add(img, s, strlen(s));
		} else {
			img->needed = xgrowarray(img->needed, &img->needed_cap,
						 img->nneeded + 1, sizeof(*img->needed));
			img->needed[img->nneeded++] = pool_add(img, s, strlen(s));
		}
	}
}

static void read_notes(struct elfsym_image *img, Elf_Scn *scn)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data)
		return;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= sizeof(img->build_id)) {
			memcpy(img->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
			img->build_id_len = nh.n_descsz;
		}
	}
}

static int parse_image(struct elfsym_image *img, Elf *elf)
{
	GElf_Ehdr eh;
	size_t phnum, shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -1;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return -1;
	img->etype = eh.e_type;
	if (elf_getphdrnum(elf, &phnum) < 0 || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -1;
		if (ph.p_type != PT_LOAD)
			continue;
		img->loads = xrealloc(img->loads, (img->nloads + 1) * sizeof(*img->loads));
		img->loads[img->nloads].vaddr = ph.p_vaddr;
		img->loads[img->nloads].offset = ph.p_offset;
		img->loads[img->nloads].filesz = ph.p_filesz;
		img->loads[img->nloads].memsz = ph.p_memsz;
		img->loads[img->nloads].flags = ph.p_flags;
		img->nloads++;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -1;
		switch (sh.sh_type) {
		case SHT_SYMTAB:
			img->has_symtab = 1;
			read_symbols(img, elf, scn, &sh, 0);
			break;
		case SHT_DYNSYM:
			read_symbols(img, elf, scn, &sh, 1);
			break;
		case SHT_DYNAMIC:
			read_dynamic(img, elf, scn, &sh);
			break;
		case SHT_NOTE:
			read_notes(img, scn);
			break;
		case SHT_PROGBITS:
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && strcmp(name, ".gnu_debuglink") == 0) {
				Elf_Data *d = elf_getdata(scn, NULL);

				if (d && d->d_buf && d->d_size > 0) {
					size_t len = strnlen(d->d_buf, d->d_size);

					size_t at = (len + 4) & ~(size_t)3;	/* the CRC, 4-aligned */

					if (len > 0 && at + 4 <= d->d_size) {
						img->debuglink = (ssize_t)pool_add(img, d->d_buf, len);
						memcpy(&img->debuglink_crc, (char *)d->d_buf + at, 4);
					}
				}
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

static struct elfsym_image *parse_fd(int fd)
{
	struct elfsym_image *img;
	Elf *elf;

	elf_version(EV_CURRENT);
	/* ELF_C_READ reads the file: a file truncated later cannot SIGBUS us */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		errno = ENOEXEC;
		return NULL;
	}
	img = xcalloc(1, sizeof(*img));
	img->soname = -1;
	img->debuglink = -1;
	img->refs = 1;
	if (parse_image(img, elf) < 0) {
		elf_end(elf);
		elfsym_image_free(img);
		errno = ENOEXEC;
		return NULL;
	}
	elf_end(elf);
	return img;
}

/*
 * The images of the files parsed last, newest first, each holding one
 * reference: a command that runs a shell script parses libc and the
 * shell once, not at each fork and exec.
 */
#define IMAGE_CACHE 32
static struct elfsym_image *cache[IMAGE_CACHE];

static int same_file(const struct elfsym_image *img, const struct stat *st)
{
	return img->dev == st->st_dev && img->ino == st->st_ino && img->size == st->st_size &&
	       img->mtime.tv_sec == st->st_mtim.tv_sec &&
	       img->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       img->ctime.tv_sec == st->st_ctim.tv_sec && img->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

struct elfsym_image *elfsym_image_from_fd(int fd)
{
	struct elfsym_image *img;
	struct stat st;
	size_t i;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return parse_fd(fd);
	for (i = 0; i < IMAGE_CACHE && cache[i]; i++)
		if (same_file(cache[i], &st))
			break;
	if (i < IMAGE_CACHE && cache[i]) {
		img = cache[i];
		img->refs++;	/* the caller's */
	} else {
		if (!(img = parse_fd(fd)))
			return NULL;
		img->dev = st.st_dev;
		img->ino = st.st_ino;
		img->size = st.st_size;
		img->mtime = st.st_mtim;
		img->ctime = st.st_ctim;
		i = IMAGE_CACHE - 1;
		elfsym_image_free(cache[i]);	/* the oldest goes */
		img->refs++;	/* the cache's */
	}
	/* to the front */
	memmove(&cache[1], &cache[0], i * sizeof(cache[0]));
	cache[0] = img;
	return img;
}

struct elfsym_image *elfsym_image_open(const char *path)
{
	struct elfsym_image *img;
	/* a path of memtap's own (a tool's, a test's): its links resolved first */
	char *abs = realpath(path, NULL);
	struct tfile_req req = { .path = abs ? abs : path, .shown = path, .kind = TF_ELF };
	int fd = tfile_open(&req);

	free(abs);
	if (fd < 0)
		return NULL;
	img = elfsym_image_from_fd(fd);
	close(fd);
	return img;
}

void elfsym_image_free(struct elfsym_image *img)
{
	if (!img || --img->refs > 0)
		return;
	free(img->loads);
	free(img->syms);
	free(img->pool);
	free(img->needed);
	free(img->buckets);
	free(img);
}

size_t elfsym_image_nsyms(const struct elfsym_image *img)
{
	return img->nsyms;
}

int elfsym_image_lookup(const struct elfsym_image *img, const char *name,
			uint64_t *value)
{
	const struct sym *s = elfsym_image_named(img, name);

	if (!s)
		return -ENOENT;
	*value = s->value;
	return 0;
}

/* ---- the index of names ---- */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/*
 * Chain every symbol into the bucket of its name's hash, filled from the
 * table's end so that each chain runs in table order.  A probe set is
 * dozens of names looked up in every object at each arming (each dlopen
 * of the target): a scan of the tables per name and object costs more
 * than this once per image.
 */
static void build_index(struct elfsym_image *img)
{
	size_t nb = 16;

	while (nb < img->nsyms)
		nb *= 2;
	img->buckets = xmalloc(nb * sizeof(*img->buckets));
	for (size_t b = 0; b < nb; b++)
		img->buckets[b] = NO_SYM;
	for (size_t i = img->nsyms; i-- > 0;) {
		uint32_t b = name_hash(img->pool + img->syms[i].name) & (nb - 1);

		img->syms[i].next_named = img->buckets[b];
		img->buckets[b] = (uint32_t)i;
	}
	img->nbuckets = nb;
}

/* The first symbol named name at or after chain position i. */
static const struct sym *chain_find(const struct elfsym_image *img, uint32_t i,
				    const char *name)
{
	for (; i != NO_SYM; i = img->syms[i].next_named)
		if (strcmp(img->pool + img->syms[i].name, name) == 0)
			return &img->syms[i];
	return NULL;
}

const struct sym *elfsym_image_named(const struct elfsym_image *img, const char *name)
{
	/* the index is a cache of what the image holds: built on a shared image */
	if (!img->nbuckets)
		build_index((struct elfsym_image *)img);
	return chain_find(img, img->buckets[name_hash(name) & (img->nbuckets - 1)], name);
}

const struct sym *elfsym_image_next_named(const struct elfsym_image *img,
					  const struct sym *s, const char *name)
{
	return chain_find(img, s->next_named, name);
}

/* ---- Rust names ---- */

/* Does s[0..len) end with the identifiers of path ("a::b::c")? */
static int ends_with_path(const char *s, size_t len, const char *path)
{
	const char *segs[32];
	size_t nsegs = 0, seglen[32];
	const char *p = path;

	while (*p && nsegs < 32) {
		const char *e = strstr(p, "::");
		size_t l = e ? (size_t)(e - p) : strlen(p);

		segs[nsegs] = p;
		seglen[nsegs++] = l;
		p += l;
		if (e)
			p += 2;
	}
	if (nsegs == 0)
		return 0;
	/* from the last identifier backwards: <decimal length>[_]<ident> */
	for (size_t k = nsegs; k-- > 0;) {
		size_t l = seglen[k];
		char num[24];
		int nl;

		if (l == 0 || l > len)
			return 0;
		if (memcmp(s + len - l, segs[k], l) != 0)
			return 0;
		len -= l;
		/* v0 puts '_' between the length and an ident starting with a digit or '_' */
		if (len > 0 && s[len - 1] == '_' && (segs[k][0] == '_' ||
		    (segs[k][0] >= '0' && segs[k][0] <= '9')))
			len--;
		nl = snprintf(num, sizeof(num), "%zu", l);
		if ((size_t)nl > len || memcmp(s + len - nl, num, nl) != 0)
			return 0;
		len -= nl;
		if (len > 0 && s[len - 1] >= '0' && s[len - 1] <= '9')
			return 0;	/* "13foo" is not "3foo" */
	}
	return 1;
}

int elfsym_rust_match(const char *mangled, const char *path)
{
	size_t len = strlen(mangled);
	const char *dot = strchr(mangled, '.');

	if (dot)
		len = (size_t)(dot - mangled);	/* ".llvm.1234" suffixes */
	if (strncmp(mangled, "_R", 2) == 0)
		return ends_with_path(mangled + 2, len - 2, path);
	if (strncmp(mangled, "_ZN", 3) == 0 && len > 3 && mangled[len - 1] == 'E') {
		len--;
		/* legacy: a trailing "17h<16 hex digits>" hash component */
		if (len >= 3 + 19 && memcmp(mangled + len - 19, "17h", 3) == 0)
			len -= 19;
		return ends_with_path(mangled + 3, len - 3, path);
	}
	return 0;
}

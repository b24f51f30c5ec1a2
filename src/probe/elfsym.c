/*
 * elfsym.c - symbols of the ELF objects mapped in a process (libelf).
 *
 * Load bias.  A PT_LOAD segment maps file offset p_offset at link-time
 * address p_vaddr; the kernel (or ld.so) maps it page-aligned, so a
 * mapping that starts at address start with file offset off shows link
 * address p_vaddr - p_offset + off at start:
 *
 *	bias = start - (p_vaddr - p_offset + off)
 *
 * for the PT_LOAD whose page-rounded file range holds off.  Taking the
 * first mapping's start as the base, or the executable mapping's start
 * minus the text section's address, is wrong for separate-code layouts
 * (ld -z separate-code, the default on Debian 12), where the first
 * segment is read-only and text starts one or more pages later.  ET_EXEC
 * comes out as bias 0.
 *
 * Scope order.  ld.so binds a symbol to its first definition in the
 * global scope: the executable, the LD_PRELOAD objects, then DT_NEEDED
 * breadth-first.  Objects loaded later (dlopen) come after, in address
 * order, which is as good a guess as any.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <sys/stat.h>

#include "arch/arch.h"
#include "probe/elfsym-image.h"
#include "stack/symbols/debugfind.h"
#include "util/error.h"
#include "linux/procfs.h"
#include "linux/tfile.h"
#include "util/xmalloc.h"

#define PAGE_MASK_ (~(uint64_t)(arch_page_size() - 1))

struct module {
	struct elfsym_module pub;	/* first: pub pointers convert back */
	struct elfsym_image *img;
	struct elfsym_image *dbg;	/* separate debug file or NULL, read at first need */
	pid_t pid;		/* whose root the debug file is looked up in */
	int dbg_sought;
	uint64_t ino;
	uint64_t first_start, first_end, first_off;
	int has_off0;
	int placed;
};

struct elfsym_proc {
	pid_t pid;
	struct module **mods;	/* scope order once loaded */
	size_t nmods, mods_cap;
	size_t skipped;
};

/* ---- process ---- */

/* The mappings that can belong to an object: a file's, by path. */
static int object_mapping(const struct procfs_map *m)
{
	return m->ino != 0 && m->path && m->path[0] == '/';
}

/* Open the object as the target sees it (tfile.h); fd or -1. */
static int open_object(pid_t pid, const struct module *mod, int deleted)
{
	char path[96];
	struct tfile_req req = {
		.pid = pid, .path = mod->pub.path, .kind = TF_ELF, .flags = TF_IN_ROOT,
	};
	struct stat st;
	int fd = -1;

	if (!deleted) {
		fd = tfile_open(&req);
		if (fd < 0 && tfile_last_why()[0])
			return -1;	/* refused: a FIFO, a link... */
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino != mod->ino) {
			/* replaced on disk since it was mapped */
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 pid, mod->first_start, mod->first_end);
		req.path = path;
		req.shown = mod->pub.path;
		req.flags = TF_MAGIC;
		fd = tfile_open(&req);
	}
	return fd;
}

/* A separate debug file with .symtab for mod (debugfind.h). */
static struct elfsym_image *find_debug(pid_t pid, const struct module *mod)
{
	const struct elfsym_image *img = mod->img;
	struct debugfind_req q = {
		.pid = pid,
		.path = mod->pub.path,
		.build_id = img->build_id,
		.build_id_len = img->build_id_len,
		.debuglink = img->debuglink >= 0 ? img->pool + img->debuglink : NULL,
		.crc = img->debuglink_crc,
	};
	struct elfsym_image *d = NULL;
	char *found = NULL;
	int fd = debugfind_open(&q, &found);

	if (fd >= 0) {
		d = elfsym_image_from_fd(fd);
		close(fd);
		if (d && !d->has_symtab) {
			elfsym_image_free(d);
			d = NULL;
		}
	}
	free(found);
	return d;
}

/*
 * mod's separate debug file, when mod has no .symtab: found and read at
 * the first lookup that gets past the file's own symbols (the probed
 * functions of the C library are in .dynsym: a run that probes only
 * them reads no debug file).
 */
static const struct elfsym_image *module_dbg(const struct module *m)
{
	struct module *mod = (struct module *)m;

	if (!mod->dbg_sought && !mod->img->has_symtab)
		mod->dbg = find_debug(mod->pid, mod);
	mod->dbg_sought = 1;
	return mod->dbg;
}

/*
 * Bias from the mappings of mod: the first one whose file offset falls in
 * a PT_LOAD segment.  -1 when none does.
 */
static int compute_bias(struct module *mod, const struct procfs_map *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!object_mapping(&m[i]) || m[i].ino != mod->ino || m[i].start < mod->pub.lo ||
		    m[i].end > mod->pub.hi)
			continue;
		for (size_t k = 0; k < mod->img->nloads; k++) {
			const struct load *l = &mod->img->loads[k];
			uint64_t page_off = l->offset & PAGE_MASK_;

			if (m[i].offset < page_off || m[i].offset >= l->offset + l->filesz)
				continue;
			mod->pub.bias = m[i].start - (l->vaddr - l->offset + m[i].offset);
			return 0;
		}
	}
	return -1;
}

int elfsym_code_gap(const struct elfsym_proc *p, size_t len, uint64_t *at)
{
	for (size_t i = 0; i < p->nmods; i++) {
		const struct module *mod = p->mods[i];

		for (size_t k = 0; k < mod->img->nloads; k++) {
			const struct load *l = &mod->img->loads[k];
			uint64_t end = l->vaddr + l->filesz + mod->pub.bias;
			uint64_t start = (end + 15) & ~(uint64_t)15;
			uint64_t page_end = (end + arch_page_size() - 1) & PAGE_MASK_;

			if (!(l->flags & PF_X) || l->memsz != l->filesz || !l->filesz ||
			    start + len > page_end || page_end > mod->pub.hi)
				continue;
			*at = start;
			return 0;
		}
	}
	return -ENOSPC;
}

static struct module *module_by_name(struct elfsym_proc *p, const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	for (size_t i = 0; i < p->nmods; i++) {
		struct module *mod = p->mods[i];
		const char *mb = strrchr(mod->pub.path, '/');

		mb = mb ? mb + 1 : mod->pub.path;
		if (strcmp(mod->pub.path, name) == 0 ||
		    (mod->pub.soname && strcmp(mod->pub.soname, base) == 0) ||
		    strcmp(mb, base) == 0)
			return mod;
	}
	return NULL;
}

/* LD_PRELOAD of the target's environment, then its /etc/ld.so.preload. */
static char *read_preloads(pid_t pid)
{
	char path[64], buf[65536];
	char *list = xstrdup("");
	ssize_t n = 0, r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (n < (ssize_t)sizeof(buf) - 1 &&
		       (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
			n += r;
		close(fd);
		buf[n] = '\0';
		for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
			if (strncmp(buf + i, "LD_PRELOAD=", 11) == 0) {
				free(list);
				list = xstrdup(buf + i + 11);
			}
	}
	struct tfile_req req = {
		.pid = pid, .path = "/etc/ld.so.preload", .kind = TF_ELF, .flags = TF_IN_ROOT,
	};

	fd = tfile_open(&req);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			char *both;

			buf[n] = '\0';
			both = xasprintf("%s %s", list, buf);
			free(list);
			list = both;
		}
	}
	return list;
}

/* Reorder p->mods into scope order. */
static void order_scope(struct elfsym_proc *p)
{
	struct module **order = xcalloc(p->nmods + 1, sizeof(*order));
	size_t n = 0, head = 0;
	uint64_t entry = procfs_auxv_entry(p->pid);
	char *pre, *tok, *save = NULL;

	for (size_t i = 0; i < p->nmods; i++)
		if (entry >= p->mods[i]->pub.lo && entry < p->mods[i]->pub.hi) {
			order[n++] = p->mods[i];
			p->mods[i]->placed = 1;
		}
	if (n == 0 && p->nmods) {
		order[n++] = p->mods[0];
		p->mods[0]->placed = 1;
	}
	pre = read_preloads(p->pid);
	for (tok = strtok_r(pre, ": \t\n", &save); tok; tok = strtok_r(NULL, ": \t\n", &save)) {
		struct module *mod = module_by_name(p, tok);

		if (mod && !mod->placed) {
			order[n++] = mod;
			mod->placed = 1;
		}
	}
	free(pre);
	/* breadth-first over DT_NEEDED */
	while (head < n) {
		struct module *cur = order[head++];

		for (size_t k = 0; k < cur->img->nneeded; k++) {
			struct module *mod = module_by_name(p, cur->img->pool + cur->img->needed[k]);

			if (mod && !mod->placed) {
				order[n++] = mod;
				mod->placed = 1;
			}
		}
	}
	for (size_t i = 0; i < p->nmods; i++)
		if (!p->mods[i]->placed)
			order[n++] = p->mods[i];
	for (size_t i = 0; i < n; i++) {
		order[i]->pub.scope = (int)i;
		p->mods[i] = order[i];
	}
	free(order);
}

struct elfsym_proc *elfsym_proc_load(pid_t pid)
{
	struct elfsym_proc *p;
	struct procfs_map *m;
	size_t nm;

	if (procfs_read_maps(pid, &m, &nm) < 0)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	/* group mappings into objects: same inode, a new one at offset 0 */
	for (size_t i = 0; i < nm; i++) {
		struct module *mod = NULL;

		if (!object_mapping(&m[i]))
			continue;
		for (size_t k = p->nmods; k-- > 0;)
			if (p->mods[k]->ino == m[i].ino &&
			    strcmp(p->mods[k]->pub.path, m[i].path) == 0) {
				mod = p->mods[k];
				break;
			}
		if (mod && m[i].offset == 0 && mod->has_off0)
			mod = NULL;	/* the same file mapped twice */
		if (!mod) {
			mod = xcalloc(1, sizeof(*mod));
			mod->pub.path = xstrdup(m[i].path);
			mod->ino = m[i].ino;
			mod->pub.lo = m[i].start;
			mod->pub.hi = m[i].end;
			mod->first_start = m[i].start;
			mod->first_end = m[i].end;
			mod->first_off = m[i].offset;
			mod->pub.scope = m[i].deleted;	/* scratch: reset below */
			p->mods = xgrowarray(p->mods, &p->mods_cap, p->nmods + 1,
					     sizeof(*p->mods));
			p->mods[p->nmods++] = mod;
		}
		if (m[i].offset == 0)
			mod->has_off0 = 1;
		if (m[i].start < mod->pub.lo)
			mod->pub.lo = m[i].start;
		if (m[i].end > mod->pub.hi)
			mod->pub.hi = m[i].end;
	}
	if (!p->nmods) {
		/* no file mapped: a zombie, a kernel thread */
		procfs_maps_free(m);
		free(p);
		errno = ENOENT;
		return NULL;
	}
	/* read each object; drop the unreadable ones */
	size_t keep = 0;

	for (size_t i = 0; i < p->nmods; i++) {
		struct module *mod = p->mods[i];
		int fd = open_object(pid, mod, mod->pub.scope);
		char magic[SELFMAG];
		int is_elf = 0;

		mod->pub.scope = 0;
		if (fd >= 0) {
			is_elf = pread(fd, magic, SELFMAG, 0) == SELFMAG &&
				 memcmp(magic, ELFMAG, SELFMAG) == 0;
			if (is_elf)
				mod->img = elfsym_image_from_fd(fd);
			close(fd);
		}
		if (!mod->img || compute_bias(mod, m, nm) < 0) {
			/* mapped data files (locale-archive...) are not objects */
			if (fd < 0 || is_elf) {
				debug_msg("pid %d: cannot read ELF object '%s'", pid,
					  mod->pub.path);
				p->skipped++;
			}
			elfsym_image_free(mod->img);
			free((char *)mod->pub.path);
			free(mod);
			continue;
		}
		mod->pub.etype = mod->img->etype;
		mod->pub.soname = mod->img->soname >= 0 ? mod->img->pool + mod->img->soname : NULL;
		mod->pid = pid;
		p->mods[keep++] = mod;
	}
	p->nmods = keep;
	procfs_maps_free(m);
	order_scope(p);
	return p;
}

void elfsym_proc_free(struct elfsym_proc *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nmods; i++) {
		elfsym_image_free(p->mods[i]->img);
		elfsym_image_free(p->mods[i]->dbg);
		free((char *)p->mods[i]->pub.path);
		free(p->mods[i]);
	}
	free(p->mods);
	free(p);
}

size_t elfsym_proc_nmodules(const struct elfsym_proc *p)
{
	return p->nmods;
}

const struct elfsym_module *elfsym_proc_module(const struct elfsym_proc *p, size_t i)
{
	return i < p->nmods ? &p->mods[i]->pub : NULL;
}

size_t elfsym_proc_skipped(const struct elfsym_proc *p)
{
	return p->skipped;
}

const struct elfsym_module *elfsym_module_at(const struct elfsym_proc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nmods; i++)
		if (addr >= p->mods[i]->pub.lo && addr < p->mods[i]->pub.hi)
			return &p->mods[i]->pub;
	return NULL;
}

/* Does mod match OBJECT of "NAME@OBJECT"? */
static int module_matches(const struct module *mod, const char *obj)
{
	const char *base = strrchr(mod->pub.path, '/');
	size_t ol = strlen(obj);

	base = base ? base + 1 : mod->pub.path;
	if (strcmp(mod->pub.path, obj) == 0 || strcmp(base, obj) == 0)
		return 1;
	/* "libc" matches libc.so.6 and libc-2.36.so, not libcrypt.so */
	return strncmp(base, obj, ol) == 0 &&
	       (base[ol] == '.' || base[ol] == '-' || base[ol] == '_');
}

enum pass { PASS_EXPORTED, PASS_SYMTAB, PASS_RUST };

static const struct sym *find_in(const struct elfsym_image *img, const char *name,
				 enum pass pass)
{
	const struct sym *weak = NULL;

	if (!img)
		return NULL;
	if (pass == PASS_RUST) {
		if (!img->rust_candidates)
			return NULL;
		for (size_t i = 0; i < img->nsyms; i++) {
			const struct sym *s = &img->syms[i];
			const char *sn = img->pool + s->name;

			if (s->type != STT_OBJECT && sn[0] == '_' && elfsym_rust_match(sn, name))
				return s;
		}
		return NULL;
	}
	/* the symbols of that name in table order: the first that fits wins */
	for (const struct sym *s = elfsym_image_named(img, name); s;
	     s = elfsym_image_next_named(img, s, name)) {
		if (s->type == STT_OBJECT)
			continue;
		if (pass == PASS_EXPORTED) {
			if (!s->dynamic || s->bind == STB_LOCAL || !s->visible)
				continue;
			return s;	/* ld.so: weak or global, the first wins */
		}
		if (s->bind != STB_LOCAL)
			return s;
		if (!weak)
			weak = s;
	}
	return weak;
}

static int lookup(struct elfsym_proc *p, const char *spec, const char *prefix, int api,
		  struct elfsym_result *out)
{
	char *name, *obj;
	int ret = -ENOENT;

	name = xasprintf("%s%s", prefix ? prefix : "", spec);
	obj = strchr(name + (prefix ? strlen(prefix) : 0), '@');
	if (obj)
		*obj++ = '\0';
	memset(out, 0, sizeof(*out));
	for (int pass = PASS_EXPORTED; pass <= PASS_RUST && ret < 0; pass++) {
		for (size_t i = 0; i < p->nmods && ret < 0; i++) {
			struct module *mod = p->mods[i];
			const struct elfsym_image *img = mod->img;
			const struct sym *s;

			if (obj && !module_matches(mod, obj))
				continue;
			s = find_in(img, name, pass);
			if (!s && pass != PASS_EXPORTED) {
				/* an API: a library's debug file only when read already */
				img = !api || !mod->pub.scope || mod->dbg_sought ? module_dbg(mod) :
				      NULL;
				s = find_in(img, name, pass);
			}
			if (!s)
				continue;
			out->addr = s->value + mod->pub.bias;
			out->size = s->size;
			out->name = img->pool + s->name;
			out->module = &mod->pub;
			out->local = s->bind == STB_LOCAL;
			out->ifunc = s->type == STT_GNU_IFUNC;
			ret = 0;
		}
	}
	free(name);
	return ret;
}

int elfsym_lookup(struct elfsym_proc *p, const char *spec, const char *prefix,
		  struct elfsym_result *out)
{
	return lookup(p, spec, prefix, 0, out);
}

int elfsym_lookup_api(struct elfsym_proc *p, const char *spec, const char *prefix,
		      struct elfsym_result *out)
{
	return lookup(p, spec, prefix, 1, out);
}

int elfsym_module_lookup(const struct elfsym_module *m, const char *name, uint64_t *value)
{
	const struct module *mod = (const struct module *)m;

	if (mod->img && elfsym_image_lookup(mod->img, name, value) == 0)
		return 0;
	return module_dbg(mod) ? elfsym_image_lookup(mod->dbg, name, value) : -ENOENT;
}

/* Rank of a name for an address: lower is preferred. */
static int name_rank(const struct sym *s, const char *name)
{
	int r = 0;

	if (s->bind == STB_WEAK)
		r += 1;
	else if (s->bind == STB_LOCAL)
		r += 2;
	if (name[0] == '_')
		r += 4;
	return r;
}

const char *elfsym_name_at(struct elfsym_proc *p, uint64_t addr)
{
	const struct elfsym_module *pm = elfsym_module_at(p, addr);
	const struct module *mod = (const struct module *)pm;
	const char *best = NULL;
	int best_rank = 1 << 30;

	if (!mod)
		return NULL;
	for (int k = 0; k < 2; k++) {
		const struct elfsym_image *img = k ? module_dbg(mod) : mod->img;

		for (size_t i = 0; img && i < img->nsyms; i++) {
			const struct sym *s = &img->syms[i];
			const char *n = img->pool + s->name;
			int r;

			if (s->value + pm->bias != addr || s->type == STT_OBJECT)
				continue;
			r = name_rank(s, n);
			if (r < best_rank || (r == best_rank && strlen(n) < strlen(best))) {
				best = n;
				best_rank = r;
			}
		}
	}
	return best;
}

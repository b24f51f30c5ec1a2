/*
 * modules.c - /proc/PID/maps into sorted executable mappings, and the
 * global table of modules (distinct ELF files) they map.
 *
 * The relative address of a pc is its address in the ELF's own
 * numbering (p_vaddr space): for a mapping [start, end) at file offset
 * off, take the PT_LOAD segment whose file range holds off; the address
 * at start is p_vaddr - (p_offset - off), so the load bias is
 * start - (p_vaddr - (p_offset - off)) and rel = pc - bias.  For an
 * ET_EXEC file the bias is 0.  When the ELF cannot be read, the bias
 * is start - off (rel is then a file offset, right for most layouts).
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
#include <sys/stat.h>
#include <sys/mman.h>

#include "arch/arch.h"
#include "stack/runtimes/gopclntab.h"
#include "stack/runtimes/goruntime.h"
#include "stack/codecopy.h"
#include "stack/modules.h"
#include "linux/procfs.h"
#include "linux/tfile.h"
#include "util/error.h"
#include "util/xmalloc.h"

#ifndef NT_GNU_BUILD_ID
# define NT_GNU_BUILD_ID 3
#endif

/* ---- the global module table ---- */

static struct module **mods;
static size_t nmods, mods_cap;
static uint32_t *mod_hash;	/* open addressing, MODULE_NONE = empty */
static size_t mod_hash_size;
static size_t nfds;

static size_t key_hash(dev_t dev, ino_t ino, const char *path)
{
	uint64_t h = 1469598103934665603ULL;

	if (ino) {
		h ^= (uint64_t)dev;
		h *= 1099511628211ULL;
		h ^= (uint64_t)ino;
		h *= 1099511628211ULL;
	} else {
		for (const char *p = path; *p; p++) {
			h ^= (unsigned char)*p;
			h *= 1099511628211ULL;
		}
	}
	return (size_t)(h ^ (h >> 29));
}

static int key_match(const struct module *m, dev_t dev, ino_t ino, const char *path)
{
	if (ino)
		return m->ino == ino && m->dev == dev;
	return m->ino == 0 && strcmp(m->path, path) == 0;
}

/*
 * Is fd's file inode ino (any, when ino is 0)?  The device is not
 * compared: maps shows an overlayfs file's lower one.
 */
static int same_file(int fd, ino_t ino)
{
	struct stat st;

	return !ino || (fstat(fd, &st) == 0 && st.st_ino == ino);
}

static void hash_insert(uint32_t id)
{
	const struct module *m = mods[id];
	size_t mask = mod_hash_size - 1;
	size_t j = key_hash(m->dev, m->ino, m->path) & mask;

	while (mod_hash[j] != MODULE_NONE)
		j = (j + 1) & mask;
	mod_hash[j] = id;
}

static uint32_t module_lookup(dev_t dev, ino_t ino, const char *path)
{
	if (!mod_hash_size)
		return MODULE_NONE;
	size_t mask = mod_hash_size - 1;

	for (size_t j = key_hash(dev, ino, path) & mask; mod_hash[j] != MODULE_NONE;
	     j = (j + 1) & mask)
		if (key_match(mods[mod_hash[j]], dev, ino, path))
			return mod_hash[j];
	return MODULE_NONE;
}

/* Read program headers and build-id; leaves elf_ok 0 on any trouble. */
static void module_read_elf(struct module *m)
{
	static int elf_inited;
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t phnum;

	if (m->fd < 0)
		return;
	if (!elf_inited) {
		elf_version(EV_CURRENT);
		elf_inited = 1;
	}
	elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    elf_getphdrnum(elf, &phnum) != 0 || phnum > 65536)
		goto out;
	m->elf_type = ehdr.e_type;
	m->first_vaddr = UINT64_MAX;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD) {
			struct module_load *l;

			m->loads = xrealloc(m->loads, (m->nloads + 1) * sizeof(*m->loads));
			l = &m->loads[m->nloads++];
			l->offset = ph.p_offset;
			l->vaddr = ph.p_vaddr;
			l->filesz = ph.p_filesz;
			l->memsz = ph.p_memsz;
			l->flags = ph.p_flags;
			uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
			if (m->first_vaddr == UINT64_MAX)
				m->first_vaddr = ph.p_vaddr & ~(align - 1);
			if (ph.p_vaddr + ph.p_memsz > m->end_vaddr)
				m->end_vaddr = ph.p_vaddr + ph.p_memsz;
		} else if (ph.p_type == PT_NOTE && !m->build_id_len) {
			Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
							   ph.p_filesz, ELF_T_NHDR);
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;

			while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
				    nh.n_descsz > 0 && nh.n_descsz <= MODULE_BUILD_ID_MAX) {
					memcpy(m->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
					m->build_id_len = nh.n_descsz;
					break;
				}
			}
		}
	}
	if (m->first_vaddr == UINT64_MAX)
		m->first_vaddr = 0;
	m->elf_ok = m->nloads > 0;
	if (m->elf_ok && gopcln_elf_is_go(elf)) {
		const char *why;

		m->go = go_runtime_from_elf(elf, &why);
		if (!m->go && why)
			warn_msg("%s: its goroutines' stacks end where Go's runtime switches "
				 "stacks: %s", m->path, why);
	}
out:
	elf_end(elf);
}

static uint32_t module_add(const char *path, dev_t dev, ino_t ino, int fd, int deleted,
			   pid_t pid)
{
	struct module *m = xcalloc(1, sizeof(*m));
	const char *slash;

	m->id = (uint32_t)nmods;
	m->path = xstrdup(path);
	slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
	m->dev = dev;
	m->ino = ino;
	m->fd = fd;
	m->deleted = deleted;
	m->pid = pid;
	module_read_elf(m);
	if (m->fd >= 0) {
		if (nfds >= MODULE_MAX_FDS) {
			close(m->fd);
			m->fd = -1;
		} else {
			nfds++;
		}
	}
	mods = xgrowarray(mods, &mods_cap, nmods + 1, sizeof(*mods));
	mods[nmods++] = m;
	if ((nmods + 1) * 2 > mod_hash_size) {
		free(mod_hash);
		mod_hash_size = mod_hash_size ? mod_hash_size * 2 : 64;
		mod_hash = xmalloc(mod_hash_size * sizeof(*mod_hash));
		memset(mod_hash, 0xff, mod_hash_size * sizeof(*mod_hash));
		for (size_t i = 0; i < nmods; i++)
			hash_insert((uint32_t)i);
	} else {
		hash_insert(m->id);
	}
	return m->id;
}

const struct module *module_get(uint32_t id)
{
	return id < nmods ? mods[id] : NULL;
}

uint32_t module_count(void)
{
	return (uint32_t)nmods;
}

uint32_t module_intern_file(const char *path)
{
	struct stat st;
	uint32_t id = MODULE_NONE;
	char *abs = realpath(path, NULL);
	struct tfile_req req = { .path = abs, .shown = path, .kind = TF_ELF };
	int fd = abs ? tfile_open(&req) : -1;

	if (fd < 0 || fstat(fd, &st) < 0)
		goto out;
	id = module_lookup(st.st_dev, st.st_ino, abs ? abs : path);
	if (id == MODULE_NONE) {
		id = module_add(abs, st.st_dev, st.st_ino, fd, 0, 0);
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(abs);
	return id;
}

char *build_id_hex(const unsigned char *id, size_t len, char *buf, size_t size)
{
	size_t i;

	if (!size)
		return buf;
	for (i = 0; i < len && 2 * i + 2 < size; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
	buf[2 * i] = '\0';
	return buf;
}

char *module_build_id_hex(const struct module *m, char *buf, size_t size)
{
	return build_id_hex(m->build_id, m->build_id_len, buf, size);
}

int module_open(const struct module *m)
{
	struct tfile_req req = {
		.pid = m->pid, .path = m->path, .kind = TF_ELF,
		.flags = m->pid ? TF_IN_ROOT : 0,
	};
	int fd;

	if (m->fd >= 0)
		return fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
	if (m->path[0] != '/')
		return -1;
	fd = tfile_open(&req);
	/* only the file the module is, not one put there since */
	if (fd >= 0 && !same_file(fd, m->ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void modules_release_all(void)
{
	for (size_t i = 0; i < nmods; i++) {
		if (mods[i]->fd >= 0)
			close(mods[i]->fd);
		free(mods[i]->path);
		free(mods[i]->loads);
		go_runtime_free(mods[i]->go);
		free(mods[i]);
	}
	free(mods);
	free(mod_hash);
	mods = NULL;
	mod_hash = NULL;
	nmods = mods_cap = mod_hash_size = nfds = 0;
}

/* ---- per-process lists ---- */

struct proc_modules *proc_modules_new(pid_t pid)
{
	static uint64_t serial;
	struct proc_modules *pm = xcalloc(1, sizeof(*pm));

	pm->pid = pid;
	pm->serial = ++serial;
	pm->generation = 1;	/* read at first use */
	pm->miss_budget = 1;
	return pm;
}

void proc_modules_free(struct proc_modules *pm)
{
	if (!pm)
		return;
	free(pm->ranges);
	free(pm->other);
	code_copies_free(pm->code);
	free(pm);
}

void modules_add_stubs(struct proc_modules *pm, uint64_t start, uint64_t len, stub_frame_fn fn)
{
	struct stub_range *r;

	for (size_t i = 0; i < pm->nstubs; i++)
		if (pm->stubs[i].start == start) {
			pm->stubs[i].end = start + len;
			pm->stubs[i].frame = fn;
			return;
		}
	if (pm->nstubs == MODULES_MAX_STUBS)
		return;
	r = &pm->stubs[pm->nstubs++];
	r->start = start;
	r->end = start + len;
	r->frame = fn;
}

void modules_clear_stubs(struct proc_modules *pm)
{
	pm->nstubs = 0;
}

const struct stub_range *modules_find_stubs(const struct proc_modules *pm, uint64_t pc)
{
	for (size_t i = 0; pm && i < pm->nstubs; i++)
		if (pc >= pm->stubs[i].start && pc < pm->stubs[i].end)
			return &pm->stubs[i];
	return NULL;
}

void modules_copy_stubs(struct proc_modules *child, const struct proc_modules *parent)
{
	for (size_t i = 0; i < parent->nstubs; i++)
		modules_add_stubs(child, parent->stubs[i].start,
				  parent->stubs[i].end - parent->stubs[i].start, parent->stubs[i].frame);
}

/* Remember a mapping that holds no module's code (merged with the last). */
static void other_add(struct proc_modules *pm, const struct procfs_map *mp)
{
	int file = mp->path && mp->path[0] == '/';
	int exec = !file && (mp->perms & PROT_EXEC);
	struct other_range *o = pm->nother ? &pm->other[pm->nother - 1] : NULL;

	if (o && o->end == mp->start && o->file == file && o->exec == exec) {
		o->end = mp->end;
		return;
	}
	pm->other = xgrowarray(pm->other, &pm->other_cap, pm->nother + 1, sizeof(*pm->other));
	o = &pm->other[pm->nother++];
	o->start = mp->start;
	o->end = mp->end;
	o->file = file;
	o->exec = exec;
}

void modules_map_changed(struct proc_modules *pm)
{
	pm->generation++;
}

const struct module_range *modules_find_range(const struct proc_modules *pm, uint64_t pc)
{
	size_t lo = 0, hi = pm->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct module_range *r = &pm->ranges[mid];

		if (pc < r->start)
			hi = mid;
		else if (pc >= r->end)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

void modules_note_mmap(struct proc_modules *pm, uint64_t addr, uint64_t len, int prot)
{
	if (prot & PROT_EXEC)
		modules_map_changed(pm);
	else
		modules_note_unmap(pm, addr, len);	/* MAP_FIXED over code */
}

void modules_note_unmap(struct proc_modules *pm, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len;

	if (end < addr)
		end = UINT64_MAX;
	for (size_t i = 0; i < pm->nranges; i++)
		if (pm->ranges[i].start < end && addr < pm->ranges[i].end) {
			modules_map_changed(pm);
			return;
		}
}

static const struct other_range *other_holding(const struct proc_modules *pm, uint64_t addr,
					      uint64_t end);

void modules_note_mprotect(struct proc_modules *pm, uint64_t addr, uint64_t len)
{
	const struct module_range *r = modules_find_range(pm, addr);
	const struct other_range *o;
	uint64_t end = addr + len;

	if (end < addr)
		end = UINT64_MAX;
	o = other_holding(pm, addr, end);
	if ((r && end <= r->end) || (o && !o->file))
		return;
	modules_map_changed(pm);
}

/*
 * Open the file of one mapping of pid, the way that works in containers:
 * the mapping's own inode through map_files, else the path in pid's
 * root, else in memtap's, if it is still the inode mapped (tfile.h: a
 * regular file, no link followed).
 */
static int open_mapped(pid_t pid, const struct procfs_map *mp)
{
	char buf[64];
	struct tfile_req req = {
		.pid = pid, .path = buf, .shown = mp->path, .kind = TF_ELF, .flags = TF_MAGIC,
	};
	int fd;

	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid,
		 mp->start, mp->end);
	fd = tfile_open(&req);
	if (fd >= 0 || tfile_last_why()[0])
		return fd;	/* refused: the path would name the same inode */
	if (!mp->path || mp->path[0] != '/')
		return -1;
	req.path = mp->path;
	req.shown = NULL;
	for (int own = 0; own < 2; own++) {
		req.flags = own ? 0 : TF_IN_ROOT;
		fd = tfile_open(&req);
		if (fd >= 0 && !same_file(fd, mp->ino)) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0 || tfile_last_why()[0])
			return fd;
	}
	return -1;
}

static uint64_t range_bias(const struct module *m, uint64_t start, uint64_t off)
{
	const struct module_load *best = NULL;

	if (!m->elf_ok)
		return start - off;
	if (m->elf_type == ET_EXEC)
		return 0;
	for (size_t i = 0; i < m->nloads; i++) {
		const struct module_load *l = &m->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)(arch_page_size() - 1);

		if (off < lo || off >= l->offset + (l->filesz ? l->filesz : 1))
			continue;
		if (!best || ((l->flags & PF_X) && !(best->flags & PF_X)))
			best = l;
	}
	if (!best)
		return start - off;
	return start - (best->vaddr - (best->offset - off));
}

/* The module of a mapping: from the old list when unchanged, else global. */
static uint32_t mapping_module(struct proc_modules *pm, const struct module_range *old,
			       size_t nold, size_t *hint, const struct procfs_map *mp)
{
	uint32_t id;

	while (*hint < nold && old[*hint].start < mp->start)
		(*hint)++;
	if (*hint < nold && old[*hint].start == mp->start && old[*hint].end == mp->end &&
	    old[*hint].offset == mp->offset) {
		const struct module *m = mods[old[*hint].module];

		if (key_match(m, mp->dev, mp->ino, mp->path))
			return m->id;
	}
	id = module_lookup(mp->dev, mp->ino, mp->path);
	if (id != MODULE_NONE)
		return id;
	return module_add(mp->path, mp->dev, mp->ino,
			  open_mapped(pm->pid, mp), mp->deleted,
			  pm->pid);
}

int modules_refresh(struct proc_modules *pm, int force)
{
	struct procfs_map *maps;
	size_t nmaps, hint = 0, nold = pm->nranges;
	struct module_range *old = pm->ranges;
	int changed;

	if (!force && pm->generation == pm->read_generation)
		return 0;
	pm->read_generation = pm->generation;
	pm->reads++;
	if (procfs_read_maps(pm->pid, &maps, &nmaps) < 0)
		return -1;

	pm->ranges = NULL;
	pm->nranges = pm->cap = 0;
	pm->nother = 0;
	for (size_t i = 0; i < nmaps; i++) {
		const struct procfs_map *mp = &maps[i];

		if (!(mp->perms & PROT_EXEC) || !mp->path ||
		    (mp->path[0] != '/' && strcmp(mp->path, "[vdso]") != 0)) {
			/* data, anonymous code, [vsyscall]: no module, no re-read */
			other_add(pm, mp);
			continue;
		}

		uint32_t id = mapping_module(pm, old, nold, &hint, mp);
		const struct module *m = mods[id];
		struct module_range *r;

		pm->ranges = xgrowarray(pm->ranges, &pm->cap, pm->nranges + 1, sizeof(*r));
		r = &pm->ranges[pm->nranges++];
		r->start = mp->start;
		r->end = mp->end;
		r->offset = mp->offset;
		r->module = id;
		r->bias = m->ino == 0 && m->path[0] == '[' ? mp->start - mp->offset :
			  range_bias(m, mp->start, mp->offset);
	}
	procfs_maps_free(maps);
	pm->go = NULL;
	for (size_t i = 0; i < pm->nranges && !pm->go; i++)
		if (mods[pm->ranges[i].module]->go) {
			pm->go = mods[pm->ranges[i].module]->go;
			pm->go_bias = pm->ranges[i].bias;
		}

	changed = nold != pm->nranges;
	for (size_t i = 0; !changed && i < nold; i++)
		changed = old[i].start != pm->ranges[i].start || old[i].end != pm->ranges[i].end ||
			  old[i].module != pm->ranges[i].module || old[i].bias != pm->ranges[i].bias;
	free(old);
	if (changed) {
		pm->version++;
		memset(pm->miss_cache, 0, sizeof(pm->miss_cache));
	}
	return changed;
}

static size_t miss_slot(uint64_t pc)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 40) & (MODULES_MISS_CACHE - 1);
}

/* The mapping of the last read, not a module's code, that holds [addr, end). */
static const struct other_range *other_holding(const struct proc_modules *pm, uint64_t addr,
					      uint64_t end)
{
	size_t lo = 0, hi = pm->nother;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < pm->other[mid].start)
			hi = mid;
		else if (addr >= pm->other[mid].end)
			lo = mid + 1;
		else
			return end <= pm->other[mid].end ? &pm->other[mid] : NULL;
	}
	return NULL;
}

int modules_is_code(const struct proc_modules *pm, uint64_t pc)
{
	const struct other_range *o;

	if (modules_find_range(pm, pc) || modules_find_stubs(pm, pc))
		return 1;
	o = other_holding(pm, pc, pc + 1);
	return o && o->exec;
}

/*
 * Is pc known to be in no module: in another mapping (anonymous code,
 * data), or missed by a read?
 */
static int miss_known(const struct proc_modules *pm, uint64_t pc)
{
	return pc < 4096 || pm->miss_cache[miss_slot(pc)] == pc || other_holding(pm, pc, pc + 1);
}

const struct module_range *modules_lookup(struct proc_modules *pm, uint64_t pc)
{
	const struct module_range *r;
	int fresh = 0;

	if (pm->generation != pm->read_generation)
		fresh = modules_refresh(pm, 0) >= 0;
	r = modules_find_range(pm, pc);
	if (r || miss_known(pm, pc))
		return r;
	if (!fresh) {
		if (pm->miss_budget <= 0)
			return NULL;
		pm->miss_budget--;
		pm->miss_reads++;
		if (modules_refresh(pm, 1) < 0)
			return NULL;
		r = modules_find_range(pm, pc);
		if (r || miss_known(pm, pc))
			return r;
	}
	/* not in any mapping as of a read made now: do not ask again */
	pm->miss_cache[miss_slot(pc)] = pc;
	return NULL;
}

int modules_resolve(struct proc_modules *pm, uint64_t pc, uint32_t *module_id,
		    uint64_t *rel_addr)
{
	const struct module_range *r = modules_lookup(pm, pc);

	if (!r) {
		*module_id = MODULE_NONE;
		*rel_addr = pc;
		return -1;
	}
	*module_id = r->module;
	*rel_addr = pc - r->bias;
	return 0;
}

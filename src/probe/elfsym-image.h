/*
 * elfsym-image.h - what elfsym.c and elfsym-image.c share: one ELF
 * image's symbols, loads and notes.  Private to the two files.
 */
#ifndef MEMTAP_ELFSYM_IMAGE_H
#define MEMTAP_ELFSYM_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "probe/elfsym.h"

/* A symbol: the name is an offset in the image's string pool. */
struct sym {
	size_t name;
	uint64_t value, size;
	unsigned char bind, type;
	unsigned char dynamic;	/* from .dynsym */
	unsigned char visible;	/* default or protected visibility */
	uint32_t next_named;	/* the index's chain: next in the table, or NO_SYM */
};

#define NO_SYM UINT32_MAX

struct load {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;		/* p_flags */
};

struct elfsym_image {
	int etype;
	struct load *loads;
	size_t nloads;
	struct sym *syms;
	size_t nsyms, syms_cap;
	char *pool;
	size_t pool_len, pool_cap;
	size_t *needed;		/* pool offsets */
	size_t nneeded, needed_cap;
	ssize_t soname;		/* pool offset or -1 */
	ssize_t debuglink;	/* pool offset or -1 */
	uint32_t debuglink_crc;	/* its CRC32 */
	uint8_t build_id[64];
	size_t build_id_len;
	int has_symtab;
	size_t rust_candidates;	/* names that may be Rust's: "_R...", "_ZN..." */
	/* the index of names: built at the first search by name */
	uint32_t *buckets;	/* first symbol of each chain, or NO_SYM */
	size_t nbuckets;	/* a power of 2; 0: not built */
	/* the image cache (elfsym_image_from_fd()): the file's identity */
	unsigned refs;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};


/*
 * Parse the ELF file open on fd (not closed here); NULL, errno ENOEXEC.
 * The same file (device, inode, size, mtime and ctime) gives the same
 * image, parsed once for every process and every arming of the run:
 * the last IMAGE_CACHE files parsed are kept.  Images are read only;
 * each comes with a reference that elfsym_image_free() gives back.
 */
struct elfsym_image *elfsym_image_from_fd(int fd);

/*
 * The symbols named name, in the order of the symbol tables (.symtab,
 * .dynsym as the file has them): the first, then the next after s, or
 * NULL.  A search that wants the first match of a name in the table
 * finds the same symbol as a scan of the whole table.
 */
const struct sym *elfsym_image_named(const struct elfsym_image *img, const char *name);
const struct sym *elfsym_image_next_named(const struct elfsym_image *img,
					  const struct sym *s, const char *name);

#endif /* MEMTAP_ELFSYM_IMAGE_H */

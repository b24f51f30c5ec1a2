/*
 * mmaps - 3 anonymous mmaps of 96 MiB, one file-backed mmap of 8 MiB
 * (/dev/zero), one mremap growing a mapping by 32 MiB, one munmap of
 * 96 MiB, and one mmap that fails.  Exits with status 3.
 */
#include <errno.h>
#include <fcntl.h>
#include "target.h"

__attribute__((noinline)) static void *map_one(size_t len)
{
	return xmmap_anon(len);
}

int main(void)
{
	void *a = map_one(96 * MiB), *b = map_one(96 * MiB), *c = map_one(96 * MiB);
	int fd = open("/dev/zero", O_RDONLY);
	void *f = mmap(NULL, 8 * MiB, PROT_READ, MAP_PRIVATE, fd, 0);

	if (fd < 0 || f == MAP_FAILED)
		return 99;
	void *r = mremap(c, 96 * MiB, 128 * MiB, MREMAP_MAYMOVE);

	if (r == MAP_FAILED)
		return 99;
	xmunmap(b, 96 * MiB);
	/* 256 TiB cannot be mapped: fails with ENOMEM, weighs nothing */
	void *bad = mmap(NULL, 1UL << 48, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (bad != MAP_FAILED)
		munmap(bad, 1UL << 48);

	expect("mmap", 4, 3 * 96 * MiB + 8 * MiB, 0);
	expect("munmap", 1, 0, 96 * MiB);
	expect("mremap", 1, 32 * MiB, 0);
	printf("mmaps done anon=%lu file=%lu failed=%d\n", 3 * 96 * MiB, 8 * MiB,
	       bad == MAP_FAILED);
	(void)a;
	return 3;
}

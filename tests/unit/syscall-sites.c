/*
 * syscall-sites.c - arch_syscall_sites() (src/arch/x86_64/detour.c):
 * the syscall instructions of a function, decoded over its size: one
 * in each of this process's C library's mmap, munmap, mremap and brk
 * (their symbols' sizes from dladdr1()), at 0f 05; none where those
 * bytes are an immediate's; every one counted when fewer fit.
 * "skip" on a CPU whose wrappers are not detoured.  Prints "ok" last.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#if defined(__GLIBC__)
# include <gnu/lib-names.h>
#endif
#include <inttypes.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/detour-plan.h"
#include "unit-check.h"

/*
 * The C library's wrapper called name (not a sanitizer's function of
 * that name): its syscall instructions, in place.
 */
static void check_wrapper(const char *name)
{
#ifdef LIBC_SO
	void *libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
#else
	void *libc = RTLD_DEFAULT;
#endif
	void *fn = libc ? dlsym(libc, name) : NULL;
	const ElfW(Sym) *sym = NULL;
	uint64_t sites[8];
	Dl_info info;
	size_t n;

	if (!fn || !dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !sym->st_size) {
		printf("%s: no symbol with a size, not checked\n", name);
		fn = NULL;
	}
#ifdef LIBC_SO
	if (libc)
		dlclose(libc);	/* still mapped: this process links it */
#endif
	if (!fn)
		return;
	n = arch_syscall_sites((uint64_t)(uintptr_t)fn, fn, sym->st_size, sites, 8);
	printf("%s: %zu bytes, %zu syscall instructions\n", name, (size_t)sym->st_size, n);
	CHECK(n >= 1 && n <= 8, "%s: %zu syscall instructions", name, n);
	for (size_t i = 0; i < n && i < 8; i++) {
		const uint8_t *at = (const uint8_t *)(uintptr_t)sites[i];

		CHECK(sites[i] >= (uint64_t)(uintptr_t)fn &&
		      sites[i] + ARCH_SYSCALL_INSN_LEN <= (uint64_t)(uintptr_t)fn + sym->st_size,
		      "%s: a site outside it, %#" PRIx64, name, sites[i]);
		CHECK(at[0] == 0x0f && at[1] == 0x05, "%s: no syscall at %#" PRIx64, name,
		      sites[i]);
	}
}

int main(void)
{
	if (!arch_bp_wrappers_detoured()) {
		printf("skip\n");
		return 0;
	}
	/* mov eax, 11; syscall; cmp rax, -4095; jae +1; ret; int3 */
	static const uint8_t munmap_like[] = { 0xb8, 0x0b, 0x00, 0x00, 0x00, 0x0f, 0x05,
					       0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff, 0x73, 0x01,
					       0xc3, 0xcc };
	/* mov eax, 0x050f; ret: 0f 05 in an immediate */
	static const uint8_t in_imm[] = { 0xb8, 0x0f, 0x05, 0x00, 0x00, 0xc3 };
	/* syscall; syscall; syscall; ret */
	static const uint8_t three[] = { 0x0f, 0x05, 0x0f, 0x05, 0x0f, 0x05, 0xc3 };
	const uint64_t func = UINT64_C(0x7f0000101a00);
	uint64_t sites[4] = { 0 };

	CHECK(arch_syscall_sites(func, munmap_like, sizeof(munmap_like), sites, 4) == 1 &&
	      sites[0] == func + 5, "munmap's: %#" PRIx64, sites[0]);
	CHECK(arch_syscall_sites(func, in_imm, sizeof(in_imm), sites, 4) == 0,
	      "a syscall found in an immediate");
	memset(sites, 0, sizeof(sites));
	CHECK(arch_syscall_sites(func, three, sizeof(three), sites, 2) == 3 &&
	      sites[0] == func && sites[1] == func + 2 && sites[2] == 0,
	      "three, two kept: %#" PRIx64 " %#" PRIx64 " %#" PRIx64, sites[0], sites[1],
	      sites[2]);
	check_wrapper("mmap");
	check_wrapper("munmap");
	check_wrapper("mremap");
	check_wrapper("brk");
	return unit_status();
}

/*
 * goruntime-test - what memtap reads of a Go program's runtime
 * (src/stack/runtimes/goruntime.c), for tests/go-stacks.test.
 *
 *   goruntime-test GO-BINARY
 *
 * Prints the offsets of the runtime's fields the unwinders follow, one
 * "runtime.TYPE.FIELD OFFSET" a line, sorted as sort(1) would in the C
 * locale: the ones read from runtime.systemstack's code and the ones
 * every Go since 1.5 has (goruntime.h); tests/targets/go-offsets.go
 * prints the same lines from the program's DWARF.  Then, on stderr,
 * the TLS offset of g and the switch functions' return addresses.
 * Exits 1, saying why, when the runtime is not read.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <libelf.h>

#include "stack/runtimes/goruntime.h"

int main(int argc, char **argv)
{
	struct go_runtime *rt;
	const char *why = NULL;
	Elf *elf;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: goruntime-test GO-BINARY\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	rt = go_runtime_from_elf(elf, &why);
	if (!rt) {
		printf("%s: %s\n", argv[1], why ? why : "no Go program");
		return 1;
	}
	/* sorted by name */
	printf("runtime.g.m %u\n", rt->off.g_m);
	printf("runtime.g.sched %u\n", rt->off.g_sched);
	printf("runtime.g.stack %d\n", 0);
	printf("runtime.gobuf.bp %d\n", GO_GOBUF_BP);
	printf("runtime.gobuf.lr %d\n", GO_GOBUF_LR);
	printf("runtime.gobuf.pc %d\n", GO_GOBUF_PC);
	printf("runtime.gobuf.sp %d\n", GO_GOBUF_SP);
	printf("runtime.m.curg %u\n", rt->off.m_curg);
	printf("runtime.m.g0 %u\n", rt->off.m_g0);
	printf("runtime.stack.hi %d\n", GO_G_STACK_HI);
	printf("runtime.stack.lo %d\n", GO_G_STACK_LO);
	fprintf(stderr, "tls_g %" PRId64 "\n", rt->off.tls_g);
	for (int i = 0; i < GO_NSWITCH; i++)
		fprintf(stderr, "switch %d: %#" PRIx64 "-%#" PRIx64 " returns at %#" PRIx64 "\n", i,
			rt->sw[i].start, rt->sw[i].end, rt->sw_ret[i]);
	go_runtime_free(rt);
	elf_end(elf);
	close(fd);
	return 0;
}

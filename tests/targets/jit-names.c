/*
 * jit-names.c - code made at run time and named as JITs name it for
 * perf: a function written into anonymous memory (RW, then RX) that
 * keeps a frame pointer and calls work(), which maps SIZE bytes and
 * mallocs MSIZE bytes, N times.
 *
 *   jit-names MODE N [-w]
 *
 * MODE map: the code is named in /tmp/perf-PID.map, by a line that
 *   follows lines of other names for the same and a wider range (the
 *   last line wins).
 * MODE dump: in $JIT_DIR/jit-PID.dump (default /tmp), mapped PROT_EXEC
 *   as perf asks: the code is loaded at one page under the name, then
 *   copied to a second one that an earlier load named otherwise, and a
 *   CODE_MOVE says so; calls go through the second page.  A DEBUG_INFO
 *   gives the code the line jit-gen.js:42.
 * MODE evil-map: the map with a line of a 1 MiB name, then lines for
 *   ranges overlapping the code's, before and after its own line.
 * MODE evil-dump: the dump with a load of a 1 MiB name, an overlapping
 *   load, then a record that claims 4 GiB (cut short: one warning).
 * MODE evil-header: a dump whose header says it is 8 bytes long (one
 *   warning, nothing named).
 * MODE cfi: the dump names other code: push %rbp; xor %ebp,%ebp; sub
 *   $32,%rsp; call work; add $32,%rsp; pop %rbp; pop %rcx; jmp *%rcx.
 *   No frame pointer (%rbp is 0 in it), and its return is a jump no
 *   analysis of its instructions follows; an UNWINDING_INFO before its
 *   load describes every instruction (an .eh_frame and .eh_frame_hdr,
 *   also placed after the code as V8 places them).
 * MODE nocfi: the same code, no UNWINDING_INFO.
 * MODE evil-cfi1, evil-cfi2, evil-cfi3: the same code, its
 *   UNWINDING_INFO garbage (1); a CIE that claims more bytes than there
 *   are and a table pointing into it (2); a CFA a gigabyte above %rsp
 *   (3).
 * MODE none: the code is made and called but named in no file (a perf
 *   map or jitdump planted by someone else may name it).
 * -w: print "ready PID" and wait for SIGUSR1 (for memtap -p) before the
 *   calls.
 * -l: print "code ADDR SIZE" (the code called, in hex) and "ready PID",
 *   then call the code every 10 ms, each mapping and block given back at
 *   once, until SIGUSR1; then print "calls N" instead of the EXPECT lines.
 *
 * The name is "jit_alloc_fn".  Prints "EXPECT mmap BYTES" and "EXPECT
 * malloc BYTES" (what the calls through that code asked for), then
 * "FILE PATH" (the file it wrote, left for memtap to read at the exit:
 * the caller removes it) and "OK".
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "usr1.h"

#define SIZE (256 << 10)
#define MSIZE 100000
#define MAXN 1000

static void *maps[MAXN], *blocks[MAXN];
static int calls;

__attribute__((noinline)) void work(void)
{
	maps[calls] = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	blocks[calls] = malloc(MSIZE);
	if (maps[calls] == MAP_FAILED || !blocks[calls])
		exit(99);
	calls++;
}

/* push %rbp; mov %rsp,%rbp; movabs $work,%rax; call *%rax; pop %rbp; ret */
static const unsigned char code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xd0, 0x5d, 0xc3,
};

/* push %rbp; xor %ebp,%ebp; sub $0x20,%rsp; movabs $work,%rax; call *%rax;
 * add $0x20,%rsp; pop %rbp; pop %rcx; jmp *%rcx */
static const unsigned char cfi_code[] = {
	0x55, 0x31, 0xed, 0x48, 0x83, 0xec, 0x20, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xd0, 0x48, 0x83, 0xc4, 0x20, 0x5d, 0x59, 0xff, 0xe1,
};

static const unsigned char *tpl = code;
static size_t tpl_size = sizeof(code), tpl_fn = 6;

/* The template's code on a page of its own. */
static unsigned char *make_code(void)
{
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t fn = (uint64_t)(uintptr_t)work;

	if (page == MAP_FAILED)
		exit(99);
	memcpy(page, tpl, tpl_size);
	memcpy(page + tpl_fn, &fn, sizeof(fn));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
		exit(99);
	return page;
}

static char path[256];

static char *big_name(void)
{
	char *name = malloc((1 << 20) + 1);

	if (!name)
		exit(99);
	memset(name, 'x', 1 << 20);
	name[1 << 20] = '\0';
	return name;
}

static void write_map(const unsigned char *at, int evil)
{
	unsigned long a = (unsigned long)(uintptr_t)at;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		exit(99);
	if (evil) {
		char *name = big_name();

		fprintf(f, "%lx 1000 %s\n", a - 0x2000, name);
		fprintf(f, "%lx 20000 stale_overlap\n", a - 0x10000);
		free(name);
	}
	fprintf(f, "%lx 40 stale_wide_name\n", (unsigned long)(uintptr_t)at - 16);
	fprintf(f, "%lx %zx stale_name\n", (unsigned long)(uintptr_t)at, sizeof(code));
	fprintf(f, "garbage line\n");
	fprintf(f, "%lx %zx jit_alloc_fn\n", (unsigned long)(uintptr_t)at, sizeof(code));
	if (evil)	/* over the start of the code, not its call */
		fprintf(f, "%lx 4 inner_overlap\n", a + 2);
	fclose(f);
}

static uint64_t stamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		exit(99);
}

/* A record's prefix: id, total_size, timestamp. */
static void prefix(int fd, uint32_t id, uint32_t size)
{
	uint64_t ts = stamp();

	put(fd, &id, 4);
	put(fd, &size, 4);
	put(fd, &ts, 8);
}

/* A load of size bytes at at (the bytes written are the template's). */
static void code_load(int fd, const unsigned char *at, uint64_t size, const char *name,
		      uint64_t index)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t addr = (uint64_t)(uintptr_t)at;

	prefix(fd, 0, (uint32_t)(16 + 40 + strlen(name) + 1 + tpl_size));
	put(fd, &pid, 4);
	put(fd, &pid, 4);
	put(fd, &addr, 8);
	put(fd, &addr, 8);
	put(fd, &size, 8);
	put(fd, &index, 8);
	put(fd, name, strlen(name) + 1);
	put(fd, tpl, tpl_size);
}

static void put32(unsigned char *p, int64_t v)
{
	int32_t w = (int32_t)v;

	memcpy(p, &w, 4);
}

/*
 * The .eh_frame (68 bytes) and .eh_frame_hdr (20) of cfi_code loaded at
 * at, into uw[88]: the .eh_frame at at + its size rounded up to 8, as
 * perf's genelf and V8 place it.  evil: see the modes.
 */
#define UW_EH 68
#define UW_SIZE 88
static void make_unwind(unsigned char *uw, const unsigned char *at, int evil)
{
	static const unsigned char cie[24] = {
		20, 0, 0, 0, 0, 0, 0, 0,	/* length, CIE id */
		1, 'z', 'R', 0, 1, 0x78, 16,	/* version, "zR", code 1, data -8, RA 16 */
		1, 0x1b,			/* FDEs: pc-relative sdata4 */
		0x0c, 7, 8, 0x90, 1, 0, 0,	/* CFA %rsp+8, RA at CFA-8 */
	};
	static const unsigned char fde_insns[23] = {
		0x41, 0x0e, 16, 0x86, 2,	/* push %rbp: CFA %rsp+16, %rbp at CFA-16 */
		0x46, 0x0e, 48,			/* sub: CFA %rsp+48 */
		0x50, 0x0e, 16,			/* add: CFA %rsp+16 */
		0x41, 0x0e, 8, 0xc6,		/* pop %rbp: CFA %rsp+8, %rbp restored */
		0x41, 0x0e, 0, 0x09, 16, 2,	/* pop %rcx: CFA %rsp, RA in %rcx */
		0, 0,
	};
	uint64_t code = (uint64_t)(uintptr_t)at, eh = code + ((sizeof(cfi_code) + 7) & ~7ul);
	uint64_t hdr = eh + UW_EH;
	unsigned char *f = uw + 24;

	memset(uw, 0, UW_SIZE);
	memcpy(uw, cie, sizeof(cie));
	put32(f, 36);				/* length */
	put32(f + 4, 24 + 4);			/* back to the CIE */
	put32(f + 8, (int64_t)(code - (eh + 24 + 8)));	/* pc_begin, pc-relative */
	put32(f + 12, sizeof(cfi_code));	/* pc_range */
	f[16] = 0;				/* no augmentation data */
	memcpy(f + 17, fde_insns, sizeof(fde_insns));
	/* 4 bytes of 0 end the .eh_frame; the .eh_frame_hdr: */
	uw[UW_EH] = 1;
	uw[UW_EH + 1] = 0x1b;			/* eh_frame_ptr: pc-relative sdata4 */
	uw[UW_EH + 2] = 0x03;			/* fde_count: udata4 */
	uw[UW_EH + 3] = 0x3b;			/* table: relative to the header, sdata4 */
	put32(uw + UW_EH + 4, (int64_t)(eh - (hdr + 4)));
	put32(uw + UW_EH + 8, 1);
	put32(uw + UW_EH + 12, (int64_t)(code - hdr));
	put32(uw + UW_EH + 16, (int64_t)(eh + 24 - hdr));
	if (evil == 1) {
		uint32_t x = 12345;

		for (int i = 0; i < UW_SIZE; i++) {
			x = x * 1103515245u + 12345u;
			uw[i] = (unsigned char)(x >> 16);
		}
	} else if (evil == 2) {
		put32(uw, 0x7ffffff0);			/* the CIE's length */
		put32(uw + UW_EH + 16, (int64_t)(eh + 2 - hdr));	/* the FDE's */
	} else if (evil == 3) {
		static const unsigned char far[23] = {
			0x41, 0x0e, 16, 0x86, 2,
			0x46, 0x0e, 0x80, 0x80, 0x80, 0x80, 0x04,	/* CFA %rsp+2^30 */
			0x50, 0x0e, 16, 0x41, 0x0e, 8, 0xc6, 0x41, 0x0e, 0, 0,
		};

		memcpy(f + 17, far, sizeof(far));
	}
}

/* An UNWINDING_INFO for the next load: uw, mapped after the code. */
static void unwinding_info(int fd, const unsigned char *uw)
{
	uint64_t v[3] = { UW_SIZE, UW_SIZE - UW_EH, UW_SIZE };

	prefix(fd, 4, 16 + 24 + UW_SIZE);
	put(fd, v, 24);
	put(fd, uw, UW_SIZE);
}

/* The dump's header (short: claiming 8 bytes), mapped as perf asks. */
static int open_dump(int short_header)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} h = { 0x4A695444, 1, sizeof(h), 62, 0, (uint32_t)getpid(), stamp(), 0 };
	const char *dir = getenv("JIT_DIR");
	int fd;

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir ? dir : "/tmp", getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0)
		exit(99);
	if (short_header)
		h.total_size = 8;
	put(fd, &h, sizeof(h));
	/* perf finds the file by this mapping */
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		exit(99);
	return fd;
}

/* cfi, nocfi, evil-cfiN (evil N): the load of cfi_code at at, and
 * (but nocfi, evil -1) its UNWINDING_INFO, also placed after it. */
static void write_cfi_dump(unsigned char *at, int evil)
{
	unsigned char uw[UW_SIZE];
	int fd = open_dump(0);

	if (evil >= 0) {
		make_unwind(uw, at, evil);
		if (mprotect(at, 4096, PROT_READ | PROT_WRITE) != 0)
			exit(99);
		memcpy(at + ((sizeof(cfi_code) + 7) & ~7ul), uw, UW_SIZE);
		if (mprotect(at, 4096, PROT_READ | PROT_EXEC) != 0)
			exit(99);
		unwinding_info(fd, uw);
	}
	code_load(fd, at, tpl_size, "jit_alloc_fn", 1);
	close(fd);
}

static void write_dump(unsigned char *first, unsigned char *second, int evil)
{
	int fd = open_dump(evil == 2);
	uint32_t pid = (uint32_t)getpid();
	uint64_t v[5];

	code_load(fd, second, sizeof(code), "stale_name", 1);
	/* DEBUG_INFO for the next load: code_addr, nr_entry, one entry */
	prefix(fd, 2, 16 + 16 + 16 + sizeof("jit-gen.js"));
	v[0] = (uint64_t)(uintptr_t)first;
	v[1] = 1;
	put(fd, v, 16);
	v[0] = (uint64_t)(uintptr_t)first;
	put(fd, v, 8);
	v[0] = 42;		/* lineno 42, discrim 0 */
	put(fd, v, 8);
	put(fd, "jit-gen.js", sizeof("jit-gen.js"));
	code_load(fd, first, sizeof(code), "jit_alloc_fn", 2);
	/* the code moves from first to second (make_code wrote both) */
	prefix(fd, 1, 16 + 48);
	put(fd, &pid, 4);
	put(fd, &pid, 4);
	v[0] = (uint64_t)(uintptr_t)second;
	v[1] = (uint64_t)(uintptr_t)first;
	v[2] = (uint64_t)(uintptr_t)second;
	v[3] = sizeof(code);
	v[4] = 2;
	put(fd, v, 40);
	if (evil == 1) {
		char *name = big_name();

		code_load(fd, (const unsigned char *)0x10000, 64, name, 3);	/* no code there */
		code_load(fd, second + 2, 4, "inner_overlap", 4);	/* not the call */
		free(name);
		/* a CODE_LOAD that claims 4 GiB, cut short */
		prefix(fd, 0, 0xffffffffu);
		put(fd, v, 40);
	}
	close(fd);
}

/* -l: call the code every 10 ms until SIGUSR1. */
static int run_loop(void (*call)(void), const unsigned char *at)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	unsigned long total = 0;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	printf("code %lx %zx\nready %d\n", (unsigned long)(uintptr_t)at, tpl_size, getpid());
	fflush(stdout);
	do {
		call();
		calls--;
		munmap(maps[calls], SIZE);
		free(blocks[calls]);
		total++;
	} while (sigtimedwait(&set, NULL, &ts) < 0 && (errno == EAGAIN || errno == EINTR));
	printf("calls %lu\nFILE %s\nOK\n", total, path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "map";
	int n = argc > 2 ? atoi(argv[2]) : 10;
	int wait = argc > 3 && strcmp(argv[3], "-w") == 0;
	int loop = argc > 3 && strcmp(argv[3], "-l") == 0;
	int cfi = strstr(mode, "cfi") != NULL;
	unsigned char *first, *second;
	void (*call)(void);

	if (n < 0 || n > MAXN)
		return 2;
	if (cfi) {
		tpl = cfi_code;
		tpl_size = sizeof(cfi_code);
		tpl_fn = 9;
	}
	first = make_code();
	second = make_code();
	usr1_block();
	if (strcmp(mode, "map") == 0 || strcmp(mode, "evil-map") == 0) {
		write_map(second, mode[0] == 'e');
	} else if (strcmp(mode, "dump") == 0) {
		write_dump(first, second, 0);
	} else if (strcmp(mode, "evil-dump") == 0) {
		write_dump(first, second, 1);
	} else if (strcmp(mode, "evil-header") == 0) {
		write_dump(first, second, 2);
	} else if (strcmp(mode, "cfi") == 0 || strcmp(mode, "nocfi") == 0) {
		write_cfi_dump(second, mode[0] == 'n' ? -1 : 0);
	} else if (strncmp(mode, "evil-cfi", 8) == 0 && mode[8] >= '1' && mode[8] <= '3') {
		write_cfi_dump(second, mode[8] - '0');
	} else if (strcmp(mode, "none") != 0) {
		fprintf(stderr, "usage: jit-names map|dump|evil-map|evil-dump|evil-header|"
			"cfi|nocfi|evil-cfi1|evil-cfi2|evil-cfi3|none N [-w|-l]\n");
		return 2;
	}
	if (wait) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		usr1_wait();
	}
	*(void **)&call = second;
	if (loop)
		return run_loop(call, second);
	for (int i = 0; i < n; i++)
		call();
	printf("EXPECT mmap %llu\n", (unsigned long long)n * SIZE);
	printf("EXPECT malloc %llu\n", (unsigned long long)n * MSIZE);
	for (int i = 0; i < n; i++) {
		munmap(maps[i], SIZE);
		free(blocks[i]);
	}
	printf("FILE %s\nOK\n", path);
	return 0;
}

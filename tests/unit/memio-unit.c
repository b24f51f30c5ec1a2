/*
 * memio-unit.c - linux/memio.c and linux/features.c on a stopped child,
 * with whatever paths MEMTAP_DISABLE leaves (tests/memio.test runs it
 * with each).
 *
 *   memio-unit features    print the feature table (features_print())
 *   memio-unit             the checks; prints "memio ok" or the first
 *                          failure, exit status 0 or 1
 *
 * The child has: a data page with a known pattern followed by a hole
 * (a read across it is short, ending exactly at the hole, whatever the
 * path), a read-only page (written as breakpoints write text), and it
 * waits stopped.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "linux/features.h"
#include "linux/memio.h"
#include "util/error.h"

#define PAGE 4096

static int failed;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		printf("FAIL line %d: ", __LINE__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failed = 1; \
	} \
} while (0)

int main(int argc, char **argv)
{
	uint8_t *data, *ro, buf[2 * PAGE], pat[PAGE];
	pid_t child;
	int status;
	ssize_t n;

	program_name = "memio-unit";
	features_probe();
	if (argc > 1 && strcmp(argv[1], "features") == 0) {
		features_print(stdout);
		return 0;
	}
	for (int i = 0; i < PAGE; i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	/* data page, then a hole */
	data = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED || ro == MAP_FAILED)
		return 2;
	munmap(data + PAGE, PAGE);
	memcpy(data, pat, PAGE);
	memset(ro, 0x11, PAGE);
	mprotect(ro, PAGE, PROT_READ);

	child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, 0L, 0L);
		raise(SIGSTOP);
		_exit(ro[5] == 0xcc && data[9] == 0x42 ? 0 : 3);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) {
		printf("no stopped child\n");
		return 2;
	}
	/* the whole page, then across the hole: short, exactly at it */
	memset(buf, 0, sizeof(buf));
	CHECK(memio_read_all(child, child, (uintptr_t)data, buf, PAGE) == 0 &&
	      memcmp(buf, pat, PAGE) == 0, "read_all of a page");
	memset(buf, 0, sizeof(buf));
	n = memio_read(child, child, (uintptr_t)data + 100, buf, 2 * PAGE);
	CHECK(n == PAGE - 100 && memcmp(buf, pat + 100, PAGE - 100) == 0,
	      "read across the hole: %zd bytes, want %d", n, PAGE - 100);
	CHECK(memio_read_all(child, child, (uintptr_t)data + 100, buf, PAGE) == -EIO,
	      "read_all across the hole is not -EIO");
	CHECK(memio_read(child, child, (uintptr_t)data + PAGE, buf, 8) < 0,
	      "read in the hole succeeded");
	/* odd addresses and lengths (PEEKDATA works by words) */
	n = memio_read(child, child, (uintptr_t)data + 3, buf, 13);
	CHECK(n == 13 && memcmp(buf, pat + 3, 13) == 0, "odd read: %zd", n);

	/* writes: a word's other bytes stay; read-only page like text */
	uint8_t b = 0x42, cc = 0xcc;

	CHECK(memio_write(child, child, (uintptr_t)data + 9, &b, 1) == 0, "data write");
	CHECK(memio_read_all(child, child, (uintptr_t)data + 8, buf, 3) == 0 &&
	      buf[0] == pat[8] && buf[1] == 0x42 && buf[2] == pat[10], "data write read back");
	CHECK(memio_write(child, child, (uintptr_t)ro + 5, &cc, 1) == 0, "read-only write");
	CHECK(memio_read_all(child, child, (uintptr_t)ro + 4, buf, 3) == 0 &&
	      buf[0] == 0x11 && buf[1] == 0xcc && buf[2] == 0x11, "read-only write read back");
	/* without a stopped thread, text needs /proc/PID/mem */
	if (!feature_has(F_PROC_MEM_WRITE))
		CHECK(memio_write(child, 0, (uintptr_t)ro + 6, &cc, 1) < 0,
		      "read-only write without /proc/PID/mem nor a thread");

	ptrace(PTRACE_CONT, child, 0L, 0L);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		CHECK(0, "child saw the writes wrong: status %#x", status);
	memio_forget(child);
	if (!failed)
		printf("memio ok\n");
	return failed;
}

/*
 * text-check.c - check that a process carries no trace of memtap:
 *
 *   text-check PID
 *
 * - the executable PT_LOAD segments of every ELF object it maps equal
 *   the files' bytes (no int3 left);
 * - no anonymous executable mapping (no scratch page left), but
 *   memtap's stub mapping of in-target probes and its far code pages,
 *   which stay on purpose (probe/detour.h): the mapping's code is
 *   memtap's template and its counters no longer move (no entry leads
 *   there: still for 100 ms, one time in three), a far page's header
 *   names such a mapping;
 * - no thread traced or in a tracing stop (waits up to a second).
 *
 * Prints "VERIFY ok", or one line per problem and "VERIFY failed" (exit
 * 1).  For processes without code of their own made at runtime (JIT).
 */
#include "config.h"

#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "detach-check.h"
#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "probe/elfsym.h"
#include "linux/procfs.h"

static int compare_text(pid_t pid, const char *path, uint64_t bias)
{
	struct text_diff d;
	int r = text_compare(pid, path, bias, &d);

	if (r == 1)
		printf("text differs: %s +%#zx file %02x memory %02x\n", path, d.addr, d.file,
		       d.mem);
	else if (r == -1)
		printf("cannot compare the text of %s\n", path);
	return r == 1 || r == -1;	/* -2: not a file we can read, not checked */
}

/* Is m memtap's stub mapping, left unused?  1 yes (said if say), 0 no. */
static int stub_mapping(pid_t pid, const struct procfs_map *m, const struct procfs_map *next,
			int say)
{
	size_t len = (size_t)(dt_template_end - dt_template);
	uint8_t code[DT_TEMPLATE_MAX];
	static uint64_t c1[(DT_PAGE + (K_NENT << PT_SHIFT)) / 8], c2[sizeof(c1) / 8];

	if (m->end - m->start != DT_CODE_SIZE || !next || next->start != m->end ||
	    next->end - next->start != DT_MAP_SIZE - DT_CODE_SIZE ||
	    memio_read_all(pid, 0, m->start, code, len) < 0 || memcmp(code, dt_template, len))
		return 0;
	/* the counter page and the threads' own counters */
	if (memio_read_all(pid, 0, m->start + DT_COUNTERS, c1, DT_PAGE) < 0 ||
	    memio_read_all(pid, 0, m->start + DT_PERTHREAD, c1 + DT_PAGE / 8, sizeof(c1) - DT_PAGE) < 0)
		return 0;
	/*
	 * Still while 100 ms pass, one time in three: a thread that was in
	 * a function the glue called when memtap detached returns through
	 * the stubs once (and, descheduled on a loaded machine, maybe late);
	 * a detour left in would count on in every interval.
	 */
	for (int k = 0;; k++) {
		usleep(100000);
		if (memio_read_all(pid, 0, m->start + DT_COUNTERS, c2, DT_PAGE) < 0 ||
		    memio_read_all(pid, 0, m->start + DT_PERTHREAD, c2 + DT_PAGE / 8,
				   sizeof(c2) - DT_PAGE) < 0)
			return 0;
		if (!memcmp(c1, c2, sizeof(c1)))
			break;
		if (k == 2) {
			printf("memtap's stubs at %" PRIx64 " are still called\n", m->start);
			return 0;
		}
		memcpy(c1, c2, sizeof(c1));
	}
	if (say)
		printf("memtap's stub mapping left, unused: %" PRIx64 "-%" PRIx64 "\n", m->start,
		       next->end);
	return 1;
}

/* Is m a far code page of memtap's stub mapping (its header names one)?  1 yes (said), 0 no. */
static int far_page(pid_t pid, const struct procfs_map *m, const struct procfs_map *maps, size_t n)
{
	uint64_t h[F_SIZE / 8];

	if (m->end - m->start != DT_CODE_SIZE ||
	    memio_read_all(pid, 0, m->start, h, sizeof(h)) < 0 || h[F_MAGIC / 8] != DT_FAR_MAGIC ||
	    h[F_RESULT / 8] != h[F_BASE / 8] + (uint64_t)(dt_common_result - dt_template))
		return 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (maps[i].start == h[F_BASE / 8] && stub_mapping(pid, &maps[i], &maps[i + 1], 0)) {
			printf("memtap's far code page left: %" PRIx64 "-%" PRIx64 "\n", m->start,
			       m->end);
			return 1;
		}
	return 0;
}

static int anon_exec_mappings(pid_t pid)
{
	struct procfs_map *maps;
	size_t n;
	int bad = 0;

	if (procfs_read_maps(pid, &maps, &n) < 0)
		return 1;
	for (size_t i = 0; i < n; i++) {
		const struct procfs_map *m = &maps[i];

		if (!(m->perms & PROT_EXEC) || m->ino != 0 || (m->path && m->path[0] == '['))
			continue;
		if (stub_mapping(pid, m, i + 1 < n ? &maps[i + 1] : NULL, 1) ||
		    far_page(pid, m, maps, n))
			continue;
		printf("anonymous executable mapping left: %" PRIx64 "-%" PRIx64 "%s%s\n", m->start,
		       m->end, m->path ? " " : "", m->path ? m->path : "");
		bad = 1;
	}
	procfs_maps_free(maps);
	return bad;
}

int main(int argc, char **argv)
{
	struct elfsym_proc *ep;
	pid_t pid;
	int bad = 0, checked = 0;

	if (argc != 2)
		return 2;
	pid = atoi(argv[1]);
	elf_version(EV_CURRENT);
	for (int i = 0; traced_threads(pid) > 0; i++) {
		if (i == 100) {
			printf("a thread is still traced or stopped\n");
			bad = 1;
			break;
		}
		usleep(10000);
	}
	pid = procfs_live_task(pid);	/* a zombie leader's maps are empty */
	ep = elfsym_proc_load(pid);
	if (!ep) {
		printf("cannot read the objects of %d\n", pid);
		return 1;
	}
	for (size_t i = 0; i < elfsym_proc_nmodules(ep); i++) {
		const struct elfsym_module *m = elfsym_proc_module(ep, i);

		bad |= compare_text(pid, m->path, m->bias);
		checked++;
	}
	elfsym_proc_free(ep);
	if (!checked) {
		printf("no object checked\n");
		bad = 1;
	}
	bad |= anon_exec_mappings(pid);
	printf("VERIFY %s\n", bad ? "failed" : "ok");
	return bad;
}

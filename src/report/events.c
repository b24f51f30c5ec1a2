/*
 * events.c - the names of the event kinds (events.h).
 */
#include "config.h"

#include <string.h>

#include "report/events.h"

const char *const event_kind_names[EV_NKINDS] = {
	[EV_BRK] = "brk",
	[EV_MMAP] = "mmap",
	[EV_MUNMAP] = "munmap",
	[EV_MREMAP] = "mremap",
	[EV_MALLOC] = "malloc",
	[EV_CALLOC] = "calloc",
	[EV_REALLOC] = "realloc",
	[EV_REALLOCARRAY] = "reallocarray",
	[EV_FREE] = "free",
	[EV_POSIX_MEMALIGN] = "posix_memalign",
	[EV_ALIGNED_ALLOC] = "aligned_alloc",
	[EV_MEMALIGN] = "memalign",
	[EV_VALLOC] = "valloc",
	[EV_PVALLOC] = "pvalloc",
	[EV_PROBE] = "probe",
	[EV_FAULTS] = "faults",
	[EV_MINOR_FAULTS] = "minor-faults",
	[EV_MAJOR_FAULTS] = "major-faults",
	[EV_MPROTECT] = "mprotect",
	[EV_MADVISE] = "madvise",
};

int ev_name_is_fault(const char *name)
{
	for (int k = EV_FAULTS; k <= EV_MAJOR_FAULTS; k++)
		if (!strcmp(name, event_kind_names[k]))
			return 1;
	return 0;
}

/*
 * probes.c - the probe list (which symbols get a breakpoint) and the
 * mapping of a probed call's arguments and result to an event.
 *
 * Allocator semantics (as sqlite's sqlite3Realloc spells them out):
 *   malloc(n), valloc(n), pvalloc(n), mallocx(n, flags)
 *                        size n, addr = result; failed if NULL and n > 0
 *   calloc(m, n)         size m * n (a product that overflows: failed)
 *   realloc(p, n)        size n, addr = result, old_addr p;
 *                        realloc(NULL, n) is a malloc (old_addr 0);
 *                        realloc(p, 0) is a free (size 0, addr 0);
 *                        failed (NULL, n > 0): p stays allocated
 *   reallocarray(p,m,n)  as realloc(p, m * n)
 *   xallocx(p, n, e, f)  resized in place: addr = old_addr = p, size =
 *                        the usable size it returns
 *   free(p), sdallocx(p, n, f), dallocx(p, f)
 *                        size 0, old_addr p; free(NULL) is counted as a
 *                        call with old_addr 0
 *   posix_memalign(&q, a, n)
 *                        size n, addr = q as stored; failed if it
 *                        returned non-zero
 *   aligned_alloc(a, n), memalign(a, n)
 *                        size n, addr = result
 * A failed call weighs 0 (size 0), as failed syscalls do.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probes.h"
#include "util/xmalloc.h"

struct probe_def {
	const char *name;
	enum event_kind kind;
	enum probe_role role;
	int want_return;
	int optional;
};

/*
 * Allocator functions.  Aliases share one breakpoint, and the first in
 * this order names their calls: glibc's aligned_alloc and memalign are
 * one function.
 */
static const struct probe_def alloc_defs[] = {
	{ "malloc", EV_MALLOC, PR_MALLOC, 1, 0 },
	{ "calloc", EV_CALLOC, PR_CALLOC, 1, 0 },
	{ "realloc", EV_REALLOC, PR_REALLOC, 1, 0 },
	{ "reallocarray", EV_REALLOCARRAY, PR_REALLOCARRAY, 1, 0 },
	{ "free", EV_FREE, PR_FREE, 0, 0 },
	{ "posix_memalign", EV_POSIX_MEMALIGN, PR_POSIX_MEMALIGN, 1, 0 },
	{ "aligned_alloc", EV_ALIGNED_ALLOC, PR_ALIGNED, 1, 0 },
	{ "memalign", EV_MEMALIGN, PR_ALIGNED, 1, 0 },
	{ "valloc", EV_VALLOC, PR_MALLOC, 1, 0 },
	{ "pvalloc", EV_PVALLOC, PR_MALLOC, 1, 0 },
	/* jemalloc's non-standard API */
	{ "mallocx", EV_MALLOC, PR_MALLOC, 1, 1 },
	{ "rallocx", EV_REALLOC, PR_REALLOC, 1, 1 },
	{ "xallocx", EV_REALLOC, PR_XALLOCX, 1, 1 },
	{ "sdallocx", EV_FREE, PR_FREE, 0, 1 },
	{ "dallocx", EV_FREE, PR_FREE, 0, 1 },
};

/* libc's syscall wrappers (mmap64 and __mmap are aliases of mmap; mprotect
 * and madvise only for -e mprotect, madvise). */
static const struct probe_def syscall_defs_bp[] = {
	{ "mmap", EV_MMAP, PR_MMAP, 1, 0 },
	{ "munmap", EV_MUNMAP, PR_MUNMAP, 1, 0 },
	{ "mremap", EV_MREMAP, PR_MREMAP, 1, 0 },
	{ "brk", EV_BRK, PR_BRK, 1, 0 },
	{ "mprotect", EV_MPROTECT, PR_MPROTECT, 1, 0 },
	{ "madvise", EV_MADVISE, PR_MADVISE, 1, 0 },
};

static struct probe **list;
static size_t nlist;
static struct probe **users;
static size_t nusers;

static void add(struct probe *pr)
{
	list = xrealloc(list, (nlist + 1) * sizeof(*list));
	list[nlist++] = pr;
}

static struct probe *from_def(const struct probe_def *d, const char *prefix)
{
	struct probe *pr = xcalloc(1, sizeof(*pr));

	pr->spec = xasprintf("%s%s", prefix ? prefix : "", d->name);
	pr->name = xstrdup(pr->spec);
	pr->kind = d->kind;
	pr->role = d->role;
	pr->size_arg = -1;
	pr->want_return = d->want_return;
	pr->optional = d->optional;
	return pr;
}

int probes_add_user(const char *arg)
{
	char *spec = xstrdup(arg), *colon, *at;
	struct probe *pr;
	int size_arg = -1;

	/* SYMBOL[@OBJECT][:size=argN]: the first ':' starts the one size= */
	colon = strchr(spec, ':');
	if (colon) {
		const char *n = colon + 1;

		if (strncmp(n, "size=arg", 8) != 0 || n[8] < '0' || n[8] > '5' || n[9])
			goto bad;
		size_arg = n[8] - '0';
		*colon = '\0';
	}
	at = strchr(spec, '@');
	if (!*spec || spec[0] == '@' || (at && (!at[1] || strchr(at + 1, '@'))))
		goto bad;
	if (strpbrk(spec, " \t\n"))
		goto bad;
	pr = xcalloc(1, sizeof(*pr));
	pr->spec = spec;
	pr->name = at ? xasprintf("%.*s", (int)(at - spec), spec) : xstrdup(spec);
	pr->kind = EV_PROBE;
	pr->role = PR_USER;
	pr->size_arg = size_arg;
	users = xrealloc(users, (nusers + 1) * sizeof(*users));
	users[nusers++] = pr;
	return 0;
bad:
	free(spec);
	return -1;
}

void probes_init(unsigned events, const char *prefix, int with_syscalls)
{
	for (size_t i = 0; i < sizeof(alloc_defs) / sizeof(alloc_defs[0]); i++)
		if (events & EV_BIT(alloc_defs[i].kind))
			add(from_def(&alloc_defs[i], prefix));
	for (size_t i = 0; with_syscalls && i < sizeof(syscall_defs_bp) / sizeof(syscall_defs_bp[0]); i++)
		if (events & EV_BIT(syscall_defs_bp[i].kind))
			add(from_def(&syscall_defs_bp[i], NULL));
	for (size_t i = 0; i < nusers; i++)
		add(users[i]);
	free(users);
	users = NULL;
	nusers = 0;
}

size_t probes_count(void)
{
	return nlist;
}

struct probe *probes_get(size_t i)
{
	return i < nlist ? list[i] : NULL;
}

int probes_any(void)
{
	return nlist > 0;
}

int probes_user_pending(void)
{
	for (size_t i = 0; i < nlist; i++)
		if (list[i]->role == PR_USER && !list[i]->found)
			return 1;
	return 0;
}

/* m * n, or UINT64_MAX when the product overflows. */
static uint64_t product(uint64_t m, uint64_t n)
{
	uint64_t r;

	if (__builtin_mul_overflow(m, n, &r))
		return UINT64_MAX;
	return r;
}

int probe_counted(const struct probe *pr)
{
	if (pr->role == PR_XALLOCX)
		return EV_COUNTED_CALLS;
	return pr->role < PR_USER ? EV_COUNTED_CALLS | EV_COUNTED_BYTES : 0;
}

int probe_fill_event(const struct probe *pr, const uint64_t args[6], uint64_t retval,
		     uint64_t result_word, struct event *ev)
{
	uint64_t want = 0;

	ev->kind = pr->kind;
	ev->call = pr->name;
	memcpy(ev->args, args, sizeof(ev->args));
	ev->ret = (int64_t)retval;
	ev->size = 0;
	ev->addr = 0;
	ev->old_addr = 0;
	ev->failed = 0;
	ev->asked = 0;

	switch (pr->role) {
	case PR_MALLOC:
		want = args[0];
		break;
	case PR_CALLOC:
		want = product(args[0], args[1]);
		break;
	case PR_ALIGNED:
		want = args[1];
		break;
	case PR_REALLOC:
	case PR_REALLOCARRAY:
		want = pr->role == PR_REALLOC ? args[1] : product(args[1], args[2]);
		ev->old_addr = args[0];
		if (args[0] && want == 0) {
			/*
			 * realloc(p, 0): a free (glibc frees p and returns
			 * NULL); a libc that returns a block instead hands
			 * out a block of 0 bytes in p's place
			 */
			ev->addr = retval;
			return 1;
		}
		break;
	case PR_XALLOCX:
		ev->old_addr = args[0];
		ev->addr = args[0];
		ev->size = (int64_t)retval;
		return 1;
	case PR_FREE:
		if (!args[0])
			return 0;	/* free(NULL) frees nothing: no call */
		ev->old_addr = args[0];
		ev->ret = 0;
		return 1;
	case PR_POSIX_MEMALIGN:
		ev->asked = args[2];
		ev->ret = (int32_t)retval;
		if ((int32_t)retval != 0) {
			ev->failed = 1;
			return 1;
		}
		ev->addr = result_word;
		ev->size = (int64_t)args[2];
		return 1;
	case PR_USER:
		ev->ret = 0;
		if (pr->size_arg >= 0)
			ev->size = (int64_t)args[pr->size_arg];
		return 1;
	default:
		return 0;
	}
	/* functions returning the new block */
	ev->asked = want;
	if (!retval) {
		ev->failed = want > 0;
		return 1;
	}
	ev->addr = retval;
	ev->size = want > INT64_MAX ? INT64_MAX : (int64_t)want;
	return 1;
}

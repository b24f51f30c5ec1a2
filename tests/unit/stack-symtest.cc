/*
 * stack-symtest.cc - the symbolizer's test binary.  It prints, for
 * addresses in its own code, what the symbolizer must say of them:
 *
 *   SYM <rel-addr> <function>|<file>|<line> [<function>|<file>|<line> ...]
 *
 * rel-addr is relative to this executable's ELF (runtime address minus
 * the load bias); the frames are innermost first (an inlined call, then
 * the function it was inlined into).  Addresses are call sites: a
 * return address minus one, as in a stack.  And
 *
 *   LABELS <rel-start> <rel-end>
 *
 * the code of stack-symtest-labels.S, for stack-symbolize names.
 */
#include <link.h>
#include <stdint.h>
#include <stdio.h>

static uintptr_t load_bias;

extern "C" char symtest_outer[], symtest_labels_end[];

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	load_bias = info->dlpi_addr;
	return 1;	/* the executable comes first */
}

extern "C" __attribute__((noinline)) void *sym_leaf(void)
{
	void *ra = __builtin_return_address(0);

	__asm__ volatile("" : : "r"(ra) : "memory");
	return ra;
}

static int line_plain, line_grow, line_inl, line_outer;

/* A C function. */
extern "C" __attribute__((noinline)) void *sym_plain(void)
{
	void *ra = sym_leaf(); line_plain = __LINE__;

	__asm__ volatile("" : : "r"(ra) : "memory");
	return ra;
}

namespace memtap_test {

struct Widget {
	int size;
	void *grow(int n);
};

/* A C++ member function: mangled _ZN11memtap_test6Widget4growEi. */
__attribute__((noinline)) void *Widget::grow(int n)
{
	void *ra = sym_leaf(); line_grow = __LINE__;

	size += n;
	__asm__ volatile("" : : "r"(ra) : "memory");
	return ra;
}

} // namespace memtap_test

/*
 * Inlined into sym_outer: two frames at one address.  DWARF names it
 * without a linkage name (internal linkage), so without parameters.
 */
static inline __attribute__((always_inline)) void *inl_helper(int n)
{
	void *ra = sym_leaf(); line_inl = __LINE__;

	__asm__ volatile("" : : "r"(ra), "r"(n) : "memory");
	return ra;
}

extern "C" __attribute__((noinline)) void *sym_outer(int n)
{
	void *ra = inl_helper(n); line_outer = __LINE__;

	__asm__ volatile("" : : "r"(ra) : "memory");
	return ra;
}

static unsigned long rel(void *ra)
{
	return (unsigned long)((uintptr_t)ra - 1 - load_bias);
}

int main()
{
	memtap_test::Widget w = { 0 };

	dl_iterate_phdr(first_object, NULL);
	void *a = sym_plain();
	void *b = w.grow(3);
	void *c = sym_outer(5);

	printf("SYM %#lx sym_plain|stack-symtest.cc|%d\n", rel(a), line_plain);
	printf("SYM %#lx memtap_test::Widget::grow(int)|stack-symtest.cc|%d\n", rel(b), line_grow);
	printf("SYM %#lx inl_helper|stack-symtest.cc|%d sym_outer|stack-symtest.cc|%d\n",
	       rel(c), line_inl, line_outer);
	/* rel() takes a return address: one byte more */
	printf("LABELS %lx %lx\n", rel(symtest_outer + 1), rel(symtest_labels_end + 2));
	return 0;
}

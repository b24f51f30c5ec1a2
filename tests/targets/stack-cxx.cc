// stack-cxx - a C++ target whose mmap comes from a member function in a
// namespace, so that tests can check demangled names:
// memtap_demo::Pool::grow(unsigned long) -> mmap of 40 MiB.
#include <sys/mman.h>
#include <cstdio>

namespace memtap_demo {
struct Pool {
	__attribute__((noinline)) void *grow(unsigned long len);
};

void *Pool::grow(unsigned long len)
{
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		static_cast<volatile char *>(p)[0] = 1;
	return p;
}
} // namespace memtap_demo

int main()
{
	memtap_demo::Pool pool;
	void *p = pool.grow(40UL << 20);

	std::printf("stack-cxx done %d\n", p != MAP_FAILED);
	return p != MAP_FAILED ? 0 : 1;
}

// alloc-throw.cc - operator new that throws: new[] of an impossible size
// fails in malloc, and operator new[] throws std::bad_alloc through the
// caller's frames.  A tracer must leave the output unchanged (it must
// not replace operator new's return address: unwinding through a
// replaced return address terminates the program).
//
//   alloc-throw [N]
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

__attribute__((noinline)) static char *try_alloc(size_t n)
{
	return new char[n];
}

__attribute__((noinline)) static void thrower(int i)
{
	std::string *s = new std::string(64 + i % 10, 'x');
	if (i % 4 == 0) {
		delete s;
		throw std::runtime_error("boom");
	}
	delete s;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], nullptr, 0) : 200;
	unsigned long caught = 0, thrown = 0, sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		try {
			char *p = try_alloc((1UL << 62) + i);
			p[0] = 1;
			delete[] p;
		} catch (const std::bad_alloc &) {
			caught++;
		}
		try {
			thrower((int)i);
		} catch (const std::runtime_error &) {
			thrown++;
		}
		std::vector<int> v(16 + i % 32, (int)i);
		for (int x : v)
			sum += (unsigned long)x;
	}
	std::printf("caught %lu thrown %lu sum %lu\nOK\n", caught, thrown, sum);
	return 0;
}

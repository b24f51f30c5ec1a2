/*
 * execer PROGRAM - maps 48 MiB, then execs PROGRAM (same pid).
 */
#include "target.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	xmmap_anon(48 * MiB);
	expect("mmap", 1, 48 * MiB, 0);
	execv(argv[1], argv + 1);
	perror("execv");
	return 99;
}

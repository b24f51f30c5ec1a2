/*
 * out-diff-main.c - run `memtap diff` (diff_main()) alone, for
 * tests/out-diff.test: out-diff-main [OPTIONS] BEFORE AFTER.
 */
#include "config.h"

#include "cli/cli.h"

int main(int argc, char **argv)
{
	argv[0] = (char *)"diff";
	return diff_main(argc, argv);
}

/*
 * cli.h - memtap's subcommands (cli/diff.c, cli/report.c).  main()
 * calls one when argv[1] names it, with argv[0] = its name; each
 * parses its own options and returns the exit status (0, EXIT_RUNTIME,
 * EXIT_USAGE: util/error.h).
 */
#ifndef MEMTAP_CLI_H
#define MEMTAP_CLI_H

int diff_main(int argc, char **argv);	/* memtap diff [OPTIONS] BEFORE AFTER */
int report_main(int argc, char **argv);	/* memtap report [OPTIONS] RECORDING */
void usage(void);			/* memtap --help */

#endif /* MEMTAP_CLI_H */

/*
 * agent.h - memtap agent's command line (cli/agent.c), for main():
 * `memtap agent` is memtap's command line with the agent's options
 * added (selectors, --metrics, --push...), its own defaults (-e
 * syscalls,alloc, --leaks, -f, -i 10) and checks, and agent_run() in
 * place of attaching and tracing.
 */
#ifndef MEMTAP_CLI_AGENT_H
#define MEMTAP_CLI_AGENT_H

#include <getopt.h>

struct trace_config;

void agent_usage(void);
/* base's options and the agent's, in one array of static storage. */
struct option *agent_longopts(const struct option *base);
/* opt's agent defaults, before the options are parsed. */
void agent_defaults(void);
/* An option code that is the agent's: taken (1), or not its (0). */
int agent_option(int c, const char *arg);
/* After parsing: selectors, refused options (usage errors). */
void agent_check(int argc, char **argv, int optind_);
/* Before tracer_init(): the agent's part of tc, its listener and sender. */
void agent_cli_setup(struct trace_config *tc);

#endif /* MEMTAP_CLI_AGENT_H */

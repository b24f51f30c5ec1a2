/*
 * prom-serve - util/http-server.c serving report/out-prom.c's exposition
 * of fixed figures at /metrics, the stacks' frames hostile (a quote, a
 * newline, a backslash, 10 KiB, bytes that are not UTF-8), for a real
 * Prometheus to scrape (tests/prom-serve.test).  Prints the server's
 * address, then serves until SIGTERM or SIGINT.
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/out-prom.h"
#include "util/http-server.h"

int main(void)
{
	static const struct prom_kind_bytes kinds[] = { { "malloc", 1000 }, { "mmap", 2000 } };
	static const struct prom_proc procs[] = {
		{ "comm=prom-serve", 4242, "prom-serve", 3000, 4000, 5000, 2, kinds },
	};
	struct prom_stack stacks[] = {
		{ "comm=prom-serve", 1, "quote\"d", "malloc", 1, 0.5, NAN },
		{ "comm=prom-serve", 2, "new\nline", "malloc", 2, -0.5, 100 },
		{ "comm=prom-serve", 3, "back\\slash", "mmap", 3, 0, NAN },
		{ "comm=prom-serve", 4, NULL /* 10 KiB */, "malloc", 4, 0, NAN },
		{ "comm=prom-serve", 5, "\xff\xfe", "malloc", 5, 0, NAN },
	};
	struct prom_health h = { .records = 10, .targets = 1, .max_targets = 8, .stacks = 5, .push = 1 };
	char *big = malloc(10 * 1024 + 1), *text = NULL, err[256];
	size_t len = 0;
	struct http_server *s;
	FILE *f;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	memset(big, 'f', 10 * 1024);
	big[10 * 1024] = '\0';
	stacks[3].frame = big;
	f = open_memstream(&text, &len);
	if (f == NULL || prom_write(f, procs, 1, stacks, 5, &h) < 0 || fclose(f) != 0) {
		perror("prom_write");
		return 1;
	}
	s = http_server_start("0", err, sizeof(err));
	if (s == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	http_server_publish(s, "/metrics", PROM_CONTENT_TYPE, text, len);
	printf("%s\n", http_server_address(s));
	fflush(stdout);
	sigwait(&set, &sig);
	http_server_stop(s);
	free(text);
	free(big);
	return 0;
}

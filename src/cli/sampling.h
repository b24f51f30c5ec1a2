/*
 * sampling.h - the command line of allocator sampling (sampling.c):
 * --sample, --overhead, --exact, and the mean in force by default.
 */
#ifndef MEMTAP_SAMPLING_H
#define MEMTAP_SAMPLING_H

#include <stdint.h>

/* --sample BYTES and --overhead PERCENT into opt; a usage error if bad. */
void sampling_parse_sample(const char *arg);
void sampling_parse_overhead(const char *arg);

/*
 * After every option: the mean interval the in-target probes sample
 * allocator calls at, 0 for every call; a usage error for options that
 * exclude each other.
 */
uint64_t sampling_mean(void);

#endif /* MEMTAP_SAMPLING_H */

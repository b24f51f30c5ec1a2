/*
 * clock.h - memtap's clock (clock.c): monotonic nanoseconds, and the
 * start of the run they count from.  Every layer may read it.
 */
#ifndef MEMTAP_CLOCK_H
#define MEMTAP_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

/* The calling thread's CPU time in nanoseconds, 0 if unknown. */
uint64_t thread_cpu_ns(void);

/* Set by clock_start(): now_ns() and CLOCK_REALTIME (ns) at the start. */
extern uint64_t start_ns;
extern int64_t start_wall_ns;

/* Once, before tracing: the run starts now. */
void clock_start(void);

#endif /* MEMTAP_CLOCK_H */

/*
 * stubs.c (none) - the in-target stub routines (arch/stub-abi.h): none,
 * dt_template_end at dt_template, so that no stub mapping is made.
 * Built for the stub arch, and for a CPU whose folder has no stubs yet.
 */
#include "config.h"

#include <stdint.h>

#include "arch/arch.h"
#include "arch/stub-abi.h"

/* The stub routines: none, dt_template_end at dt_template. */
const uint8_t dt_template[1];
extern const uint8_t dt_template_end[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_result[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_entry[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_sync[1] __attribute__((alias("dt_template")));
extern const uint8_t dt_common_prefilter[1] __attribute__((alias("dt_template")));

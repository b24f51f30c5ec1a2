/*
 * sink-costs.c - what the sink cost, for -v at the end (sink.h,
 * sink_print_costs()): the unwinds, module and symbol reads, stacks,
 * live tables and the frees left out (freed.h).
 */
#include "config.h"

#include <inttypes.h>

#include "record/freed.h"
#include "record/live.h"
#include "record/sink-int.h"
#include "record/sink-proc.h"
#include "record/sink.h"
#include "stack/modules.h"
#include "stack/runtimes/jitnames.h"
#include "stack/stacks.h"
#include "stack/symbols/debug-cache.h"
#include "stack/symbols/symbolize.h"
#include "stack/unwind/unwind.h"
#include "util/error.h"

void sink_print_costs(uint64_t code_stops)
{
	const struct sink_config *cfg = sink_config();
	struct stack_table *stacks = sink_stack_table();
	uint64_t walks = 0, frames = 0, failures = 0, reads = 0, miss_reads = 0, indexed, searched;
	uint64_t jit_procs, jit_ranges, jit_files;
	uint64_t by_cfi = 0, by_insn = 0, by_fp = 0, by_jit = 0, unsure = 0;
	unsigned written, used;

	for (struct sink_proc *p = sink_procs(); p; p = p->next) {
		if (p->unwinder) {
			walks += p->unwinder->walks;
			frames += p->unwinder->frames;
			failures += p->unwinder->failures;
			by_cfi += p->unwinder->by_cfi;
			by_insn += p->unwinder->by_insn;
			by_fp += p->unwinder->by_fp;
			by_jit += p->unwinder->by_jit;
		}
		unsure += p->code_unsure;
		if (p->modules) {
			reads += p->modules->reads;
			miss_reads += p->modules->miss_reads;
		}
	}
	debug_cache_counts(&written, &used);
	symbolize_index_counts(&indexed, &searched);
	verbose_msg("modules: %" PRIu64 " maps reads (%" PRIu64 " for a pc in no known module), %"
		 PRIu64 " stops at code mappings that are no event; %" PRIu64 " modules' symbols "
		 "read ahead; %u compressed debug files uncompressed into the cache, %u read "
		 "from it", reads, miss_reads, code_stops, symbolize_read_ahead(), written, used);
	verbose_msg("symbols: %" PRIu64 " addresses named from the symbol index, %" PRIu64
		 " by a search of the symbols", indexed, searched);
	jit_names_counts(&jit_procs, &jit_ranges, &jit_files);
	if (jit_files || jit_ranges || unsure)
		verbose_msg("run-time code: in %" PRIu64 " processes, %" PRIu64 " ranges named by "
			 "%" PRIu64 " perf maps and jitdumps; %" PRIu64 " stacks cut at "
			 JIT_UNSURE_NAME " (rewritten around the call)", jit_procs, jit_ranges,
			 jit_files, unsure);
	verbose_msg("stacks: %u distinct, %zu bytes in the stack table, %" PRIu64
		 " events without a stack (table full); unwinds: %" PRIu64 " (%" PRIu64
		 " frames, %" PRIu64 " failed), with %s", stacks ? stack_table_count(stacks) : 0,
		 stacks ? stack_table_memory(stacks) : 0, stacks ? stack_table_lost(stacks) : 0,
		 walks, frames, failures, cfg->unwind == UNWIND_LIBDW ? "dwarf (libdw)" :
		 cfg->unwind == UNWIND_DWARF ? "libunwind" : unwind_kind_name(cfg->unwind));
	if (by_cfi + by_insn + by_fp + by_jit)
		verbose_msg("unwinding: frames stepped by CFI %" PRIu64 ", by a jitdump's CFI %" PRIu64
			 ", by instruction analysis %" PRIu64 ", by frame pointer %" PRIu64,
			 by_cfi, by_jit, by_insn, by_fp);
	if (cfg->events & EV_ALLOC) {
		size_t blocks = 0;

		for (struct sink_proc *p = sink_procs(); p; p = p->next)
			blocks += live_count(p);
		verbose_msg("live allocations: %zu blocks in %zu bytes of tables", blocks, live_memory());
	}
	if (sink_frees_followed() && (cfg->events & EV_BIT(EV_FREE))) {
		uint64_t refrees = 0, forgotten = 0;

		for (struct sink_proc *p = sink_procs(); p; p = p->next) {
			refrees += p->refrees;
			forgotten += freed_forgotten(p);
		}
		verbose_msg("frees: %" PRIu64 " of addresses freed and not handed out since "
			    "(the C library's at a thread's exit) not counted; %zu bytes of "
			    "tables, %" PRIu64 " freed addresses forgotten past %u a process",
			    refrees, freed_memory(), forgotten, FREED_MAX);
	}
}

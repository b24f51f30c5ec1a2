/*
 * profile-build.c - build the report model (profile.h) from the
 * aggregates, the stack table and the symbolizer, once, at report time.
 *
 * Value types: "bytes" (acquired), "count" (calls), "released" (bytes),
 * "net" (acquired - released), then one "<event>_space" per event kind
 * seen, so that pprof users can pick a kind with -sample_index.  The
 * default type is bytes, or count with --weight count.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "memtap.h"
#include "modules.h"
#include "output.h"
#include "stacks.h"
#include "symbolize.h"
#include "xmalloc.h"

enum { VT_BYTES, VT_COUNT, VT_RELEASED, VT_NET, VT_FIXED };

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The profile mapping of a module, added on first use. */
static size_t module_mapping(struct profile *prof, size_t *map_of, uint32_t module)
{
	const struct module *m;
	char bid[2 * MODULE_BUILD_ID_MAX + 1];

	if (module == MODULE_NONE || module >= module_count())
		return (size_t)-1;
	if (map_of[module])
		return map_of[module] - 1;
	m = module_get(module);
	if (!m)
		return (size_t)-1;
	map_of[module] = 1 + profile_add_mapping(prof, 0, 0, 0, m->path,
						 module_build_id_hex(m, bid, sizeof(bid)));
	return map_of[module] - 1;
}

static size_t frame_location(struct profile *prof, struct symbolizer *sz, size_t *map_of,
			     const struct stack_frame *f)
{
	const struct sym_info *si = symbolizer_lookup(sz, f->module, f->addr);
	struct prof_line lines[16];
	size_t n = 0;

	for (int i = 0; i < si->nframes && n < 16; i++) {
		const struct sym_frame *sf = &si->frames[i];
		char name[512];
		const char *fn = sf->function;

		if (!fn)
			break;
		if (opt.lines && sf->file && sf->line) {
			snprintf(name, sizeof(name), "%s (%s:%d)", fn, base_name(sf->file), sf->line);
			fn = name;
		}
		lines[n].function = profile_add_function(prof, fn, sf->system_name, sf->file);
		lines[n].line = sf->line;
		n++;
	}
	return profile_add_location(prof, f->addr, module_mapping(prof, map_of, f->module),
				    lines, n);
}

void profile_build(struct profile *prof)
{
	size_t nagg, kind_type[EV_NKINDS];
	struct agg *aggs = aggregate_entries(&nagg);
	struct stack_table *st = stack_table();
	struct symbolizer *sz;
	size_t *map_of, nmods = module_count() + 1;
	size_t *locs = xcalloc((size_t)STACK_MAX_DEPTH, sizeof(*locs));
	int64_t *values;

	memset(prof, 0, sizeof(*prof));
	profile_add_value_type(prof, "bytes", "bytes");
	profile_add_value_type(prof, "count", "count");
	profile_add_value_type(prof, "released", "bytes");
	profile_add_value_type(prof, "net", "bytes");
	for (int k = 0; k < EV_NKINDS; k++)
		kind_type[k] = (size_t)-1;
	for (size_t i = 0; i < nagg; i++) {
		enum event_kind k = aggs[i].kind;

		if (kind_type[k] == (size_t)-1) {
			char name[64];

			snprintf(name, sizeof(name), "%s_space", event_kind_names[k]);
			kind_type[k] = profile_add_value_type(prof, name, "bytes");
		}
	}
	prof->default_type = opt.weight_count ? VT_COUNT : opt.net ? VT_NET : VT_BYTES;
	prof->duration_nanos = (int64_t)(now_ns() - start_ns);
	prof->time_nanos = start_wall_ns;

	values = xcalloc(prof->ntypes, sizeof(*values));
	map_of = xcalloc(nmods, sizeof(*map_of));
	sz = symbolizer_new(opt.no_demangle ? SYMBOLIZE_NO_DEMANGLE : 0);
	for (size_t i = 0; i < nagg; i++) {
		const struct agg *a = &aggs[i];
		const struct stack_frame *frames = NULL;
		int depth = 0;
		size_t n = 0;

		if (a->stack && st && stack_table_get(st, a->stack, &frames, &depth) == 0) {
			if (module_count() + 1 > nmods) {
				map_of = xrealloc(map_of, (module_count() + 1) * sizeof(*map_of));
				memset(map_of + nmods, 0, (module_count() + 1 - nmods) * sizeof(*map_of));
				nmods = module_count() + 1;
			}
			for (int d = 0; d < depth && d < STACK_MAX_DEPTH; d++)
				locs[n++] = frame_location(prof, sz, map_of, &frames[d]);
		}
		memset(values, 0, prof->ntypes * sizeof(*values));
		values[VT_BYTES] = (int64_t)a->acquired;
		values[VT_COUNT] = (int64_t)a->calls;
		values[VT_RELEASED] = (int64_t)a->released;
		values[VT_NET] = (int64_t)a->acquired - (int64_t)a->released;
		values[kind_type[a->kind]] = (int64_t)a->acquired;
		profile_add_sample(prof, locs, n, values, a->proc->pid, a->proc->comm,
				   event_kind_names[a->kind]);
	}
	symbolizer_free(sz);
	free(map_of);
	free(values);
	free(locs);
}

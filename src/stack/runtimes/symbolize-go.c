/*
 * symbolize-go.c - names and lines of a Go module's code from its
 * function table (.gopclntab, gopclntab.h), where no symbol and no DWARF
 * name the address: a Go program built with -ldflags='-s -w'.
 */
#include "config.h"

#include "stack/runtimes/gopclntab.h"
#include "stack/symbols/symbolize-int.h"
#include "util/error.h"

/* The table of sm, read at the first address that needs it. */
static struct gopcln *table(struct sym_module *sm)
{
	GElf_Addr bias = 0;
	const char *why = NULL;

	if (sm->go_read)
		return sm->go;
	sm->go_read = 1;
	sm->go = gopcln_from_elf(dwfl_module_getelf(sm->mod, &bias), &why);
	if (!sm->go && why)
		warn_msg("%s: its Go function table (.gopclntab) is not read: %s",
			 dwfl_module_info(sm->mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL), why);
	return sm->go;
}

const char *sym_go_name(struct sym_module *sm, uint64_t addr, int lines, uint64_t *offset,
			const char **file, int *line)
{
	struct gopcln_hit hit;
	struct gopcln *t;

	if (!sm->mod || !(t = table(sm)) || gopcln_lookup(t, addr, lines, &hit) < 0 || !hit.name)
		return NULL;
	*offset = addr - hit.start;
	if (lines && hit.file && !*file) {
		*file = hit.file;
		*line = hit.line;
	}
	return hit.name;
}

void sym_go_free(struct sym_module *sm)
{
	gopcln_free(sm->go);
	sm->go = NULL;
	sm->go_read = 0;
}

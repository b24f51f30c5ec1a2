/*
 * goruntime.c - a Go program's runtime, from its ELF file: the
 * functions that switch to g0 and the offsets that lead from the
 * running g to the goroutine that switched (goruntime.h), read from
 * their code by the CPU's part (arch/go.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "stack/runtimes/gopclntab.h"
#include "stack/runtimes/goruntime.h"
#include "util/xmalloc.h"

/* The names of the switch functions (GO_SW_*), then systemstack_switch. */
static const char *const names[GO_NSWITCH + 1] = {
	[GO_SW_SYSTEMSTACK] = "runtime.systemstack",
	[GO_SW_MCALL] = "runtime.mcall",
	[GO_SW_MORESTACK] = "runtime.morestack",
	[GO_SW_ASMCGOCALL] = "runtime.asmcgocall",
	[GO_NSWITCH] = "runtime.systemstack_switch",
};

/* The bytes of file address [addr, addr + len) of elf, or NULL. */
static const unsigned char *code_at(Elf *elf, uint64_t addr, size_t len)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz ||
		    len > ph.p_filesz - (addr - ph.p_vaddr))
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (addr - ph.p_vaddr)), len,
					 ELF_T_BYTE);
		return d && d->d_buf && d->d_size == len ? d->d_buf : NULL;
	}
	return NULL;
}

/*
 * The offsets runtime.systemstack's code says (arch/go.h), believed
 * when they leave g's fixed fields (g.stack) alone and name different
 * fields: 0, or -1.
 */
static int decode(const unsigned char *code, size_t len, struct go_runtime *rt)
{
	struct arch_go_offsets o;

	if (arch_go_decode_systemstack(code, len, &o) < 0 || o.m_curg == o.m_g0 ||
	    o.g_sched == o.g_m || o.g_m < GO_G_STACK_HI + 8 || o.g_sched < GO_G_STACK_HI + 8)
		return -1;
	rt->off = o;
	return 0;
}

/*
 * The switch function named name (i): its range and return address.
 * Go 1.17 on, an assembly function called from Go code has a wrapper
 * of the same name in the table, which only calls it: the one that
 * switches is taken.  0, or -1 when none does.
 */
static int find_switch(Elf *elf, const struct gopcln *t, int i, struct go_runtime *rt)
{
	uint64_t next = 0, start, end;

	while (gopcln_next_func(t, names[i], &next, &start, &end) == 0) {
		const unsigned char *code = code_at(elf, start, end - start);
		uint64_t ra = code ? arch_go_switch_return(code, end - start, start) : 0;

		if (!ra)
			continue;
		rt->sw[i].start = start;
		rt->sw[i].end = end;
		rt->sw_ret[i] = ra;
		return 0;
	}
	return -1;
}

struct go_runtime *go_runtime_from_elf(Elf *elf, const char **why)
{
	struct go_runtime rt;
	struct gopcln *t;
	const unsigned char *code;
	uint64_t next = 0;
	int ok;

	*why = NULL;
	if (!elf || !gopcln_elf_is_go(elf))
		return NULL;
	/* a table not read is said by the symbolizer (symbolize-go.c) */
	t = gopcln_from_elf(elf, why);
	*why = NULL;
	if (!t)
		return NULL;
	memset(&rt, 0, sizeof(rt));
	ok = gopcln_next_func(t, names[GO_NSWITCH], &next, &rt.sw_pc.start, &rt.sw_pc.end) == 0;
	for (int i = 0; ok && i < GO_NSWITCH; i++)
		if (find_switch(elf, t, i, &rt) < 0 && i == GO_SW_SYSTEMSTACK)
			ok = 0;
	gopcln_free(t);
	if (!ok) {
		*why = "no runtime.systemstack_switch, or no runtime.systemstack that switches";
		return NULL;
	}
	code = code_at(elf, rt.sw[GO_SW_SYSTEMSTACK].start,
		       rt.sw[GO_SW_SYSTEMSTACK].end - rt.sw[GO_SW_SYSTEMSTACK].start);
	if (!code || decode(code, rt.sw[GO_SW_SYSTEMSTACK].end - rt.sw[GO_SW_SYSTEMSTACK].start,
			    &rt) < 0) {
		*why = "runtime.systemstack's code not understood";
		return NULL;
	}
	struct go_runtime *r = xmalloc(sizeof(*r));

	*r = rt;
	return r;
}

void go_runtime_free(struct go_runtime *rt)
{
	free(rt);
}

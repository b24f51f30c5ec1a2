/*
 * detour-frame.c - the frames of the stub mapping's code, for the
 * unwinders (stack/modules.h, struct stub_frame): memtap wrote that
 * code, and it has no CFI.  The arch follows the code to find them
 * (arch/stub-frame.h); this file gives it the slot's code: as memtap
 * wrote it, kept for each slot (detour_frame_note()), so that a record
 * read after its process exited is unwound too, else read from the
 * target, where an earlier memtap may have written it.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "arch/stub-frame.h"
#include "arch/stub-abi.h"
#include "linux/memio.h"
#include "probe/detour.h"
#include "stack/modules.h"

_Static_assert(ARCH_NSAVED == STUB_NSAVED, "the stubs save the registers the unwinders restore");

/*
 * The slots' code as memtap wrote it (detour_frame_note()): a record
 * read after its process exited is unwound too, without its memory.
 */
#define NOTES_MAX 256

static struct note {
	pid_t pid;
	uint64_t slot;
	uint8_t code[DT_SAVED];
} notes[NOTES_MAX];
static size_t notes_next;

void detour_frame_note(pid_t pid, uint64_t slot, const uint8_t *code)
{
	struct note *n = NULL;

	for (size_t i = 0; i < NOTES_MAX && !n; i++)
		if (notes[i].pid == pid && notes[i].slot == slot)
			n = &notes[i];
	if (!n)
		n = &notes[notes_next++ % NOTES_MAX];	/* the oldest goes */
	n->pid = pid;
	n->slot = slot;
	memcpy(n->code, code, sizeof(n->code));
}

static int slot_code(pid_t pid, uint64_t slot, uint8_t *code)
{
	for (size_t i = 0; i < NOTES_MAX; i++)
		if (notes[i].pid == pid && notes[i].slot == slot) {
			memcpy(code, notes[i].code, sizeof(notes[i].code));
			return 0;
		}
	return memio_read_all(pid, 0, slot, code, DT_SAVED);
}

int detour_stub_frame(pid_t pid, uint64_t start, uint64_t pc, struct stub_frame *f)
{
	struct arch_stub_frame af;
	uint8_t code[DT_SAVED];
	uint64_t off = pc - start, base;
	int err;

	if (pc < start || off >= DT_CODE_SIZE)
		return -1;
	if (off < DT_TEMPLATE_MAX) {
		err = arch_stub_frame(NULL, off, &af);
	} else {
		base = DT_TEMPLATE_MAX + (off - DT_TEMPLATE_MAX) / DT_SLOT_SIZE * DT_SLOT_SIZE;
		off -= base;
		if (off >= DT_SAVED || slot_code(pid, start + base, code) < 0)
			return -1;
		err = arch_stub_frame(code, off, &af);
	}
	if (err < 0)
		return -1;
	f->ra_off = af.ra_off;
	for (int i = 0; i < STUB_NSAVED; i++)
		f->saved[i] = af.saved[i];
	return 0;
}

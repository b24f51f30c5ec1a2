/*
 * stackkey.h - a stack's name that outlives the process (stackkey.c):
 * what memtap agent labels a stack's series with, the same after the
 * service restarts at other addresses.
 *
 * The key is a 64-bit FNV-1a hash of the stack's functions' names, leaf
 * first (a frame without a name: its object's file name and "?"), so two
 * runs of the same code give the same key whatever the load addresses.
 * The frame is the first from the leaf that is not the allocator's: not
 * in the C library or the dynamic loader, not an allocator library
 * (jemalloc, tcmalloc, mimalloc), not operator new; the leaf when every
 * frame is.  Keys and frames are computed once per stack id and kept
 * until stack_key_release().
 */
#ifndef MEMTAP_STACKKEY_H
#define MEMTAP_STACKKEY_H

#include <stdint.h>

/* The key of stack (0: no stack) and its first frame outside the allocator. */
uint64_t stack_key(uint32_t stack, const char **frame);

void stack_key_release(void);

#endif /* MEMTAP_STACKKEY_H */

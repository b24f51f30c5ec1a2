/*
 * unsupported.h (none) - the one line memtap says when it needs what
 * this build's arch does not have (probes.c).
 */
#ifndef MEMTAP_ARCH_NONE_UNSUPPORTED_H
#define MEMTAP_ARCH_NONE_UNSUPPORTED_H

/* Says once "WHAT: not supported on this CPU (...)"; returns -ENOTSUP. */
int arch_unsupported(const char *what);

#endif

/*
 * syscall-table.c - lookups in the arch's table of memory syscalls
 * (arch.h: arch_syscalls[], which each CPU's syscalls.c fills), the same
 * for every CPU.
 */
#include "config.h"

#include <stddef.h>

#include "arch/arch.h"

const struct arch_syscall *arch_syscall_lookup(enum abi abi, long nr)
{
	for (size_t i = 0; i < arch_nsyscalls; i++)
		if (arch_syscalls[i].abi == abi && arch_syscalls[i].nr == nr)
			return &arch_syscalls[i];
	return NULL;
}

const struct arch_syscall *arch_syscall_by_id(enum abi abi, enum sc_id id)
{
	for (size_t i = 0; i < arch_nsyscalls; i++)
		if (arch_syscalls[i].abi == abi && arch_syscalls[i].id == id)
			return &arch_syscalls[i];
	return NULL;
}

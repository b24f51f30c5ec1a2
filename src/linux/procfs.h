/*
 * procfs.h - the /proc files memtap reads (procfs.c), for every layer
 * above linux/ (the engines: breakpoint.c, elfsym.c, remote.c,
 * modules.c; the sink's process figures; the tracer).
 */
#ifndef MEMTAP_PROCFS_H
#define MEMTAP_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Figures of /proc/PID/status, in bytes; valid when have is set. */
struct vmstat {
	int have;
	uint64_t vm_size, vm_rss, vm_data;
};

int procfs_read_vmstat(pid_t pid, struct vmstat *vs);
int procfs_read_comm(pid_t tid, char *buf, size_t size);
/* Field "Name:" of /proc/PID/status as a long; -1 when absent. */
int procfs_status_long(pid_t pid, const char *name, long *value);
/*
 * Fields names[0 .. n) of one read of /proc/PID/status as longs (n <=
 * 16): bit i set in the result when names[i] was there; -1 when the
 * task is gone.
 */
int procfs_status_longs(pid_t pid, const char *const *names, long *values, size_t n);
/* Field "Name:" of /proc/PID/status in hex (CapEff, CapPrm...); -1 when absent. */
int procfs_status_hex(pid_t pid, const char *name, uint64_t *value);
/* The real, effective, saved and filesystem ids of "Uid" or "Gid"; -1 when absent. */
int procfs_status_ids(pid_t pid, const char *name, long ids[4]);
/* State letter and flags from /proc/PID/stat; -1 when gone. */
int procfs_stat_state(pid_t pid, char *state, unsigned long *flags);
/* Numeric fields first .. first + n - 1 (proc(5)'s numbers, from 3) of /proc/PID/stat; -1 when gone. */
int procfs_stat_fields(pid_t pid, int first, int n, uint64_t *v);
/* CPU time of process pid's threads (utime + stime of /proc/PID/stat), ns; -1 when gone. */
int procfs_cpu_ns(pid_t pid, uint64_t *ns);
uint64_t procfs_heap_end(pid_t pid);
/*
 * A task of process pid whose /proc files show the address space: pid
 * itself, or when its leader has exited (a zombie while other threads
 * run) one of the live threads.  The maps, memory figures and auxv
 * functions here use it by themselves.
 */
pid_t procfs_live_task(pid_t pid);
/* AT_ENTRY of /proc/PID/auxv: the program's entry point; 0 if unknown. */
uint64_t procfs_auxv_entry(pid_t pid);
/*
 * The value of entry type (AT_BASE: the program interpreter's load
 * address) of /proc/PID/auxv; 0 if unknown or absent.
 */
uint64_t procfs_auxv(pid_t pid, uint64_t type);

/* One line of /proc/PID/maps. */
struct procfs_map {
	uint64_t start, end, offset;
	unsigned perms;		/* PROT_READ | PROT_WRITE | PROT_EXEC, PROCFS_MAP_SHARED */
	dev_t dev;
	ino_t ino;
	const char *path;	/* NULL if none; without its " (deleted)" */
	int deleted;		/* the path ended in " (deleted)" */
};
#define PROCFS_MAP_SHARED 0x100	/* 's': a shared mapping */
/*
 * /proc/PID/maps as an array in address order: *n entries, in one block
 * with the text their paths point into; free it with procfs_maps_free().
 * 0, or -1 with errno set (the process is gone).  Paths may hold spaces;
 * lines may be of any length.
 */
int procfs_read_maps(pid_t pid, struct procfs_map **maps, size_t *n);
void procfs_maps_free(struct procfs_map *maps);

#endif

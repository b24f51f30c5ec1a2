/*
 * sink-int.h - what sink.c uses of sink-proc.c (the sink's record of
 * the processes), and no one else.
 */
#ifndef MEMTAP_SINK_INT_H
#define MEMTAP_SINK_INT_H

struct sink_proc;
struct proc_modules;

/* p's module list, made at first use. */
struct proc_modules *sink_proc_modules(struct sink_proc *p);
/* Every store's release hook (sink-proc.h), for sink_release(). */
void sink_proc_stores_release(void);

#endif /* MEMTAP_SINK_INT_H */

/*
 * sink-int.h - what sink.c uses of sink-proc.c (the sink's record of
 * the processes) and sink-costs.c of sink.c, and no one else.
 */
#ifndef MEMTAP_SINK_INT_H
#define MEMTAP_SINK_INT_H

struct sink_proc;
struct proc_modules;

/* p's module list, made at first use. */
struct proc_modules *sink_proc_modules(struct sink_proc *p);
/*
 * Is every allocator call seen, so that a free of an address freed and
 * not handed out since is the allocator's own (sink.c, freed.h)?
 */
int sink_frees_followed(void);
/* Every store's release hook (sink-proc.h), for sink_release(). */
void sink_proc_stores_release(void);

#endif /* MEMTAP_SINK_INT_H */

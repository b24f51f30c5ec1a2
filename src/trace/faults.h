/*
 * faults.h - page faults by stack (faults.c): -e faults, minor-faults
 * and major-faults, through the perf events of linux/perf.h.
 *
 * faults_init() once, from tracer_init(), registers the source when -e
 * has a fault kind; the tracer then tells it of every thread and image
 * through trace/source.h:
 *   thread_new     for every thread memtap traces, when it is first
 *                  known (procs_new_thread(): a new thread that has not
 *                  run yet, or a seized one): its events opened;
 *   thread_exit    at its PTRACE_EVENT_EXIT, while the address space is
 *                  there (the last thread's): its ring read, weighed and
 *                  unwound;
 *   thread_gone    before the thread is forgotten (thread_free(): dead
 *                  or detached): its last samples, its exact count, its
 *                  events closed;
 *   execve_entry   at the entry of an execve (a seccomp or syscall stop;
 *                  none with -p's breakpoints): the process's rings read
 *                  and their samples weighed and unwound while the old
 *                  image is still mapped (not at the launched command's
 *                  first: what came before is memtap's child);
 *   exec           at PTRACE_EVENT_EXEC, before the modules of the old
 *                  image are forgotten: every ring read (at the launched
 *                  command's first exec, what came before discarded);
 *   hold           at a PTRACE_EVENT_STOP no one else wanted: 1 when
 *                  faults.c interrupted the thread (its ring was filling
 *                  faster than memtap drains) and keeps it stopped until
 *   round_end      after the sink is flushed, each round.
 * Nothing of it stays in the target: the events are memtap's fds, and
 * close with memtap.
 */
#ifndef MEMTAP_FAULTS_H
#define MEMTAP_FAULTS_H

struct trace_config;

void faults_init(const struct trace_config *cfg);

#endif /* MEMTAP_FAULTS_H */

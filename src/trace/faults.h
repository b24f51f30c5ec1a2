/*
 * faults.h - page faults by stack (faults.c): -e faults, minor-faults
 * and major-faults, through the perf events of linux/perf.h.
 *
 * Life cycle, as the tracer calls it:
 *   faults_init()           once, from tracer_init(): registers the
 *                           source when -e has a fault kind;
 *   faults_thread_new()     for every thread memtap traces, when it is
 *                           first known (procs_new_thread(): a new thread
 *                           that has not run yet, or a seized one);
 *   faults_thread_exit()    at its PTRACE_EVENT_EXIT, while the address
 *                           space is there (the last thread's): its ring
 *                           read, weighed and unwound;
 *   faults_thread_gone()    before the thread is forgotten (thread_free():
 *                           dead or detached): its last samples, its
 *                           exact count, its events closed;
 *   faults_before_execve()  at the entry of an execve (a seccomp or
 *                           syscall stop; none with -p's breakpoints):
 *                           the process's rings read and their samples
 *                           weighed and unwound while the old image is
 *                           still mapped;
 *   faults_before_exec()    at PTRACE_EVENT_EXEC, before the modules of
 *                           the old image are forgotten: every ring read;
 *                           discard: the launched command's first exec,
 *                           what came before is memtap's child's code;
 *   faults_hold()           at a PTRACE_EVENT_STOP no one else wanted:
 *                           1 when faults.c interrupted the thread (its
 *                           ring was filling faster than memtap drains)
 *                           and keeps it stopped until
 *   faults_release()        after the sink is flushed, each round.
 * Nothing of it stays in the target: the events are memtap's fds, and
 * close with memtap.
 */
#ifndef MEMTAP_FAULTS_H
#define MEMTAP_FAULTS_H

#include <sys/types.h>

struct thread;
struct trace_config;
struct fault_thread;

void faults_init(const struct trace_config *cfg);
void faults_thread_new(struct thread *tcp);
void faults_thread_exit(struct thread *tcp);
void faults_thread_gone(struct thread *tcp);
void faults_before_execve(pid_t pid);
void faults_before_exec(int discard);
int faults_hold(struct thread *tcp);
void faults_release(void);

#endif /* MEMTAP_FAULTS_H */

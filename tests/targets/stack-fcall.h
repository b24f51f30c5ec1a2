/*
 * stack-fcall.h - a target with known stacks: main -> stack_f0 ->
 * stack_f1 -> stack_f2 -> stack_f3, each function in its own file (no
 * inlining across files), each doing work after its call (no tail
 * calls).  stack_f3 makes the memory call the unwinding tests stop in:
 *
 *   mmap    mmap(STACK_FCALL_MAGIC) straight from stack_f3
 *   malloc  malloc(64 MiB): glibc mmaps it from inside malloc
 *   signal  raise(SIGUSR1); the handler stack_sig_handler makes the mmap
 *           (the stack crosses a signal frame)
 *   brk     sbrk(STACK_FCALL_MAGIC), then sbrk(-STACK_FCALL_MAGIC)
 *
 * In every mode but brk the mapping is unmapped from stack_f3 too.
 */
#ifndef STACK_FCALL_H
#define STACK_FCALL_H

/* Length of the mmap the tests stop in (no other mmap has it). */
#define STACK_FCALL_MAGIC 0x2345000UL

enum { MODE_MMAP, MODE_MALLOC, MODE_SIGNAL, MODE_BRK };

int stack_f0(int mode);
int stack_f1(int mode);
int stack_f2(int mode);
int stack_f3(int mode);

/* A side effect the compiler cannot drop. */
extern volatile int stack_sink;

#endif

# jit-alloc.py [wait] - N anonymous mappings of SIZE bytes (mmap.mmap)
# made by the Python function alloc_through_jit.  Prints "EXPECT mmap
# BYTES".  wait: print "ready PID" first, map at the first SIGUSR2
# (memtap -p attaches meanwhile), exit at the second.
import mmap
import os
import signal
import sys

SIZE = 1 << 20
N = 20
keep = []


def alloc_through_jit(n):
    for _ in range(n):
        keep.append(mmap.mmap(-1, SIZE))


wait = sys.argv[1:] == ["wait"]
if wait:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
    print("ready %d" % os.getpid(), flush=True)
    signal.sigwait({signal.SIGUSR2})
alloc_through_jit(N)
print("EXPECT mmap %d" % (N * SIZE), flush=True)
if wait:
    signal.sigwait({signal.SIGUSR2})

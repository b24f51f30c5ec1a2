# jit-alloc.py - N anonymous mappings of SIZE bytes (mmap.mmap) made by
# the Python function alloc_through_jit.  Prints "EXPECT mmap BYTES".
import mmap

SIZE = 1 << 20
N = 20
keep = []


def alloc_through_jit(n):
    for _ in range(n):
        keep.append(mmap.mmap(-1, SIZE))


alloc_through_jit(N)
print("EXPECT mmap %d" % (N * SIZE), flush=True)

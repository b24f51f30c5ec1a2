// jit-alloc.js - N buffers of SIZE bytes (malloc'd by node's
// ArrayBuffer allocator) through the JS function allocThroughJit.
// Prints "EXPECT malloc BYTES".
const SIZE = 1 << 20, N = 20;
const keep = [];
function allocThroughJit(n) {
	for (let i = 0; i < n; i++)
		keep.push(Buffer.allocUnsafeSlow(SIZE));
}
allocThroughJit(N);
console.log("EXPECT malloc " + N * SIZE);

// jit-alloc.js [wait] - N buffers of SIZE bytes (malloc'd by node's
// ArrayBuffer allocator) through the JS function allocThroughJit.
// Prints "EXPECT malloc BYTES".  wait: print "ready PID" first, make
// the buffers at the first SIGUSR2 (memtap -p attaches meanwhile; node
// keeps SIGUSR1 for its inspector), exit at the second.
const SIZE = 1 << 20, N = 20;
const keep = [];
function allocThroughJit(n) {
	for (let i = 0; i < n; i++)
		keep.push(Buffer.allocUnsafeSlow(SIZE));
}
function run() {
	allocThroughJit(N);
	console.log("EXPECT malloc " + N * SIZE);
}
if (process.argv[2] === "wait") {
	const timer = setInterval(() => {}, 1000);
	let signals = 0;
	process.on("SIGUSR2", () => {
		if (++signals === 1)
			run();
		else
			clearInterval(timer);
	});
	console.log("ready " + process.pid);
} else {
	run();
}

// JitAlloc.java - N direct buffers of SIZE bytes (malloc'd by the JVM)
// through the method allocThroughJit, called often enough to be
// compiled.  Prints "EXPECT malloc BYTES".
//
// java JitAlloc FILE: first calls it WARM times (the same path: the
// compiled code is not thrown away after; the buffers let go), prints "ready PID" and waits until FILE exists (for jcmd and memtap
// -p), then makes the N buffers.
import java.io.File;
import java.nio.ByteBuffer;

public class JitAlloc {
	static final int SIZE = 4096, N = 3000, WARM = 20000;
	static final ByteBuffer[] keep = new ByteBuffer[N];

	static void allocThroughJit(int i) {
		keep[i % N] = ByteBuffer.allocateDirect(SIZE);
	}

	public static void main(String[] args) throws InterruptedException {
		if (args.length > 0) {
			for (int i = 0; i < WARM; i++)
				allocThroughJit(i);
			System.out.println("ready " + ProcessHandle.current().pid());
			System.out.flush();
			File go = new File(args[0]);
			while (!go.exists())
				Thread.sleep(10);
		}
		for (int i = 0; i < N; i++)
			allocThroughJit(i);
		System.out.println("EXPECT malloc " + (long)N * SIZE);
	}
}

// JitAlloc.java - N direct buffers of SIZE bytes (malloc'd by the JVM)
// through the method allocThroughJit, called often enough to be
// compiled.  Prints "EXPECT malloc BYTES".
import java.nio.ByteBuffer;
import java.util.ArrayList;

public class JitAlloc {
	static final int SIZE = 4096, N = 3000;
	static final ArrayList<ByteBuffer> keep = new ArrayList<>();

	static void allocThroughJit() {
		keep.add(ByteBuffer.allocateDirect(SIZE));
	}

	public static void main(String[] args) {
		for (int i = 0; i < N; i++)
			allocThroughJit();
		System.out.println("EXPECT malloc " + (long)N * SIZE);
	}
}

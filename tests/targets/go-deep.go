// go-deep - a Go program whose heap grows under a frame larger than
// memtap's stack copy: main.main calls main.deep, whose frame holds an
// array of 80 KiB, which calls main.fill, which keeps 2 slices of
// 8 MiB: the heap grows by 8 MiB at each, mapped by the runtime on the
// thread's g0 stack (runtime.systemstack), and the stack memtap follows
// back into the goroutine goes on through main.deep's frame.
//
// It prints what it made grow, for the tests to find in the stacks:
//
//	GROW <pid> main.fill <bytes>
package main

import (
	"fmt"
	"os"
)

const block = 8 << 20
const blocks = 2

var keep [][]byte

//go:noinline
func fill(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, block))
	}
}

//go:noinline
func deep(n int) byte {
	var pad [80 << 10]byte
	for i := range pad {
		pad[i] = byte(i + n)
	}
	fill(n)
	return pad[n]
}

func main() {
	deep(blocks)
	fmt.Printf("GROW %d main.fill %d\n", os.Getpid(), blocks*block)
}

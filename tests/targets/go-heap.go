// go-heap [-wait] - a Go program whose heap and goroutine stack grow by
// known amounts through known functions, both by the runtime's own
// mappings made on the thread's g0 stack (runtime.systemstack,
// runtime.morestack), which memtap follows back into the goroutine:
//
//   - main.fill keeps 8 slices of 8 MiB: the heap grows by 8 MiB at
//     each (runtime.(*mheap).grow maps whole 4 MiB chunks), under
//     runtime.systemstack;
//   - main.bigframe, in a goroutine of its own, has a 4 MiB frame: its
//     stack grows to 8 MiB at its call, under runtime.morestack.
//
// It prints what it made grow, for the tests to find in the stacks:
//
//	GROW <pid> <function> <bytes>
//
// -wait: print "ready PID" and wait for SIGUSR1 first (memtap -p
// attaches meanwhile), and for a second SIGUSR1 before exiting.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const block = 8 << 20
const blocks = 8

var keep [][]byte

//go:noinline
func fill(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, block))
	}
}

//go:noinline
func bigframe(n int) byte {
	var pad [4 << 20]byte
	for i := range pad {
		pad[i] = byte(i + n)
	}
	return pad[n]
}

func main() {
	wait := len(os.Args) > 1 && os.Args[1] == "-wait"
	usr1 := make(chan os.Signal, 1)
	if wait {
		signal.Notify(usr1, syscall.SIGUSR1)
		fmt.Printf("ready %d\n", os.Getpid())
		<-usr1
	}
	fill(blocks)
	done := make(chan byte)
	go func() { done <- bigframe(7) }()
	<-done
	pid := os.Getpid()
	fmt.Printf("GROW %d main.fill %d\n", pid, blocks*block)
	fmt.Printf("GROW %d main.bigframe %d\n", pid, 2*(4<<20))
	if wait {
		fmt.Printf("done %d\n", pid)
		<-usr1
	}
}

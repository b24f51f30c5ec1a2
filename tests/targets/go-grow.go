// go-grow [-wait] [-run PROGRAM] - a Go program that grows by a known number of bytes
// through a known function: main.grow maps 6 blocks of 5 MiB + 8 KiB
// with syscall.Mmap (raw syscalls, as the Go runtime makes its own),
// main.shrink unmaps one; both print what memtap must count:
//
//	EXPECT <pid> <event> <calls> <acquired> <released>
//
// The runtime's own mappings are of other sizes: tests select these
// with --min-size and --max-size 5251072.  -wait: print "ready PID"
// and wait for SIGUSR1 first (memtap -p attaches meanwhile), and for a
// second SIGUSR1 before exiting.  -run: then run PROGRAM, a child of
// its own (os/exec: clone and execve), and wait for it.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

const blockSize = 5<<20 + 8<<10
const blocks = 6

//go:noinline
func grow(n int) [][]byte {
	var kept [][]byte
	for i := 0; i < n; i++ {
		b, err := syscall.Mmap(-1, 0, blockSize, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mmap:", err)
			os.Exit(99)
		}
		b[0] = 1
		kept = append(kept, b)
	}
	return kept
}

//go:noinline
func shrink(b []byte) {
	if err := syscall.Munmap(b); err != nil {
		fmt.Fprintln(os.Stderr, "munmap:", err)
		os.Exit(99)
	}
}

func main() {
	wait, run := false, ""
	for i := 1; i < len(os.Args); i++ {
		switch {
		case os.Args[i] == "-wait":
			wait = true
		case os.Args[i] == "-run" && i+1 < len(os.Args):
			i++
			run = os.Args[i]
		}
	}
	usr1 := make(chan os.Signal, 1)
	if wait {
		signal.Notify(usr1, syscall.SIGUSR1)
		fmt.Printf("ready %d\n", os.Getpid())
		<-usr1
	}
	kept := grow(blocks)
	shrink(kept[0])
	pid := os.Getpid()
	fmt.Printf("EXPECT %d mmap %d %d 0\n", pid, blocks, blocks*blockSize)
	fmt.Printf("EXPECT %d munmap 1 0 %d\n", pid, blockSize)
	if run != "" {
		cmd := exec.Command(run)
		cmd.Stdout = os.Stdout
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "run:", err)
			os.Exit(99)
		}
	}
	if wait {
		fmt.Printf("done %d\n", pid)
		<-usr1
	}
}

// go-offsets GO-BINARY - the offsets of the runtime's fields memtap
// follows from a running g to the goroutine that switched to g0, from
// the program's DWARF: one "runtime.TYPE.FIELD OFFSET" a line, as
// tests/unit/goruntime-test prints them from the program's code.
package main

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"sort"
)

var want = map[string][]string{
	"runtime.g":     {"stack", "m", "sched"},
	"runtime.m":     {"g0", "curg"},
	"runtime.gobuf": {"sp", "pc", "lr", "bp"},
	"runtime.stack": {"lo", "hi"},
}

func main() {
	f, err := elf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	d, err := f.DWARF()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var lines []string
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagStructType {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		fields, ok := want[name]
		if !ok {
			continue
		}
		delete(want, name)
		t, err := d.Type(e.Offset)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, fl := range t.(*dwarf.StructType).Field {
			for _, w := range fields {
				if fl.Name == w {
					lines = append(lines, fmt.Sprintf("%s.%s %d", name, w, fl.ByteOffset))
				}
			}
		}
	}
	if len(want) != 0 {
		fmt.Fprintln(os.Stderr, "types not found:", want)
		os.Exit(1)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
}

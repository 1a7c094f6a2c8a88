package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"

	"weaseldb/gate/callgrind"
	"weaseldb/gate/valgrind"
	"weaseldb/internal/peertable"
	"weaseldb/internal/procstat"
)

// runSample prints "CPU_NS SWITCHES SYS_NS" for a process: its user+system
// CPU, the voluntary and involuntary context switches of all its threads,
// and its system CPU alone (the kernel's share). The script reads it before
// and after a run and takes the differences.
func runSample(args []string) error {
	if len(args) != 1 {
		return errors.New("want one PID")
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil {
		return fmt.Errorf("pid: %w", err)
	}
	user, system, err := procstat.PidCPUTimes(pid)
	if err != nil {
		return err
	}
	threads, err := procstat.Threads(pid)
	if err != nil {
		return err
	}
	var switches uint64
	for _, t := range threads {
		switches += t.VoluntarySwitches + t.NonvoluntarySwitches
	}
	fmt.Printf("%d %d %d\n", (user + system).Nanoseconds(), switches, system.Nanoseconds())
	return nil
}

// runGodebug prints the GODEBUG of a Go program under callgrind, as the
// gate's cost tier sets it: no asynchronous preemption, and the CPU
// features valgrind cannot execute here turned off.
func runGodebug(args []string) error {
	fs := flag.NewFlagSet("godebug", flag.ContinueOnError)
	bin := fs.String("valgrind", "valgrind", "the valgrind binary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Println(valgrind.Probe(context.Background(), *bin, "").Godebug())
	return nil
}

// runCallgrind prints "KEPT ALL": the instructions a callgrind dump counted
// after the cost tier's filter (callgrind.KeptFunctions: the Go runtime's and
// the pipeline's waiting, which follows the clock, not the requests; a
// peer in another language loses little or nothing to it), and all of them.
func runCallgrind(args []string) error {
	if len(args) != 1 {
		return errors.New("want one callgrind dump")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := callgrind.Parse(f)
	if err != nil {
		return err
	}
	kept, _ := callgrind.KeptFunctions(p)
	var n int64
	for _, v := range kept {
		n += v
	}
	fmt.Println(n, p.Instructions())
	return nil
}

// runStrace prints the system calls an `strace -c` summary counted.
func runStrace(args []string) error {
	if len(args) != 1 {
		return errors.New("want one strace -c summary")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := peertable.StraceTotal(f)
	if err != nil {
		return err
	}
	fmt.Printf("%.0f\n", n)
	return nil
}

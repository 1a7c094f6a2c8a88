// Command peers is compare_peers.sh's Go half: it reads /proc for the
// script (one /proc reader in the tree, internal/procstat), counts what
// callgrind and strace measured, and turns the script's samples into
// peers.json and peers.md, spliced into README.md and docs/anchors.md on
// request (internal/peertable).
//
// Usage:
//
//	peers sample PID          CPU ns (user+system), context switches (all threads) and system CPU ns of PID
//	peers godebug             the GODEBUG a Go program gets under callgrind (the gate's cost tier's)
//	peers callgrind FILE      the instructions of a callgrind dump
//	peers strace FILE         the system calls of an strace -c summary
//	peers table --samples F --json OUT --md OUT [--client-target nginx|weaseldb] [--rate R] [--splice DOC]...
//	peers placeholder --splice DOC...
package main

import (
	"fmt"
	"os"
)

var commands = map[string]func(args []string) error{
	"sample":      runSample,
	"godebug":     runGodebug,
	"callgrind":   runCallgrind,
	"strace":      runStrace,
	"table":       runTable,
	"placeholder": runPlaceholder,
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: peers sample|godebug|callgrind|strace|table|placeholder ... (see go doc ./cmd/peers)")
		os.Exit(2)
	}
	if err := commands[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "peers %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

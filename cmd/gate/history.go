package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"weaseldb/gate"
	"weaseldb/gate/history"
	"weaseldb/gate/stats"
	"weaseldb/internal/cliflag"
	"weaseldb/internal/jsonfile"
)

// recordCommand is gate record HISTORY RESULT: append a main-branch result
// to a history.
func recordCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gate record", flag.ContinueOnError)
	fs.SetOutput(stderr)
	commit := fs.String("commit", "", "the commit the result measured (default: git rev-parse HEAD)")
	ref := fs.String("ref", "", "the branch it is on, for the reader (e.g. main)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gate record [--commit SHA] [--ref NAME] HISTORY_FILE GATE_JSON\n  appends the gate run's --json result (both tiers, every scenario) to the history (JSON lines; created if absent)")
		fs.PrintDefaults()
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return flagExit(err, stderr, "gate record")
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	r, err := history.ReadResultJSON(fs.Arg(1))
	if err == nil && *commit == "" {
		*commit, err = gate.HeadCommit(context.Background(), ".")
	}
	var e history.Entry
	if err == nil {
		e, err = history.FromResult(r, *commit, *ref, time.Now())
	}
	if err == nil {
		err = history.Append(fs.Arg(0), e)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gate: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "gate: recorded %s (%d scenarios, %s) in %s\n", e.Commit, len(e.Scenarios), e.Verdict, fs.Arg(0))
	return 0
}

// historyCommand is gate history HISTORY: the change points of every
// scenario's series.
func historyCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gate history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o stats.ChangePointOptions
	fs.Float64Var(&o.Alpha, "alpha", 0.01, "permutation test level of each split (the chance a series with no step shows one)")
	fs.IntVar(&o.Permutations, "permutations", 199, "permutations per test")
	fs.IntVar(&o.MinSegment, "min-segment", 3, "fewest runs on each side of a step")
	jsonPath := fs.String("json", "", "write the series and their steps as JSON to `FILE`")
	worse := fs.Bool("fail-on-worse", false, "exit 1 when the last step of any series is for the worse")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gate history [flags] HISTORY_FILE\n  change points (E-divisive means) of each scenario's cost, allocations, CPU per request and req/s over the recorded commits")
		fs.PrintDefaults()
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return flagExit(err, stderr, "gate history")
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if !(o.Alpha > 0 && o.Alpha < 1) || o.Permutations < 19 || o.MinSegment < 2 {
		fmt.Fprintln(stderr, "gate history: --alpha must be in (0, 1), --permutations at least 19, --min-segment at least 2")
		return 2
	}
	entries, err := history.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "gate: %v\n", err)
		return 2
	}
	series := history.Analyze(entries, o)
	history.WriteReport(stdout, len(entries), series, o)
	if *jsonPath != "" {
		if err := jsonfile.WriteFile(*jsonPath, series); err != nil {
			fmt.Fprintf(stderr, "gate: %v\n", err)
			return 2
		}
	}
	if *worse && history.LastStepWorse(series) {
		return 1
	}
	return 0
}

func flagExit(err error, stderr io.Writer, prog string) int {
	if err == flag.ErrHelp {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return 2
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"weaseldb/loadtester/result"
	"weaseldb/runview"
)

// `load_tester compare`: one page overlaying two or more runs (package
// runview), each read from its --json file.

const compareUsage = `load_tester compare: one self-contained HTML page comparing two or more runs (docs/load_tester.md, "Comparing runs").

Usage: load_tester compare A.json B.json [C.json ...] -o OUT.html

Each file is a single run's --json (a plain run or a merged one). The page
overlays their latency by percentile and their req/s and p99 over time,
puts their accounting side by side, gives each run's ratio to the first
(A.json), and says whether a difference stands out of the noise of the
runs' own intervals. Each run is named by its file. "-o -" writes to
stdout. Fewer than two files, an unreadable file or one that is not a
single run's result is refused in one line (exit 2).

Flags:
`

// runCompare is the compare subcommand; it returns the exit status.
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load_tester compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the page to `FILE` (- for stdout)")
	inputs, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, compareUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintf(stderr, "load_tester compare: %s (see --help)\n", oneLine(err))
		return exitUsage
	}
	if len(inputs) < 2 || *out == "" {
		fmt.Fprintf(stderr, "load_tester compare: want A.json B.json [C.json ...] -o OUT.html, got %d result files%s (see --help)\n",
			len(inputs), map[bool]string{true: " and no -o", false: ""}[*out == ""])
		return exitUsage
	}
	runs, err := readCompared(inputs)
	if err != nil {
		fmt.Fprintf(stderr, "load_tester compare: %s\n", oneLine(err))
		return exitUsage
	}
	page, err := runview.ComparePage(runs, inputs)
	if err == nil {
		err = writePage(*out, page, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "load_tester compare: %s\n", oneLine(err))
		return exitFailure
	}
	return exitOK
}

// readCompared reads each run, named by its file (by its path where two
// files share a name).
func readCompared(paths []string) ([]runview.CompareRun, error) {
	names := map[string]int{}
	for _, p := range paths {
		names[filepath.Base(p)]++
	}
	runs := make([]runview.CompareRun, 0, len(paths))
	for _, p := range paths {
		res, err := result.ReadResult(p)
		if err != nil {
			return nil, err
		}
		if runview.Empty(res) {
			return nil, fmt.Errorf("%s: %w", p, runview.ErrEmpty)
		}
		name := filepath.Base(p)
		if names[name] > 1 {
			name = p
		}
		runs = append(runs, runview.CompareRun{Name: name, Result: res})
	}
	return runs, nil
}
